/**
 * What every command that publishes a turn shares: the library's `TurnPipeline` on
 * the store the commands write to, failures as the command's exit codes, the turn
 * options, and the closing report.
 *
 * @since 0.1.0
 */
import { Summary, type Turn } from "@sluice/accumulator"
import type { StreamBMessage } from "@sluice/core"
import { Ids } from "@sluice/core"
import { type DurableStore, DurableStoreLive, DurableStoreMemory, DurableSubscriptions } from "@sluice/durable-streams"
import { PipelineError, TraceParent, TurnContext, TurnPipeline, type TurnSource } from "@sluice/pipeline"
import { RedisConfig, type RedisStreams, RedisStreamsLive, RedisStreamsMemory } from "@sluice/redis"
import { TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { badUsage, cancelled, CliFailure, infrastructureLost, invalidInput } from "./CliFailure.js"
import * as Output from "./Output.js"

// A layer whose construction failure is said in the command's terms.
const mapLayerError = <A, E, R, E2>(self: Layer.Layer<A, E, R>, f: (error: E) => E2): Layer.Layer<A, E2, R> =>
  Layer.fromBuild((memoMap, scope) => Effect.mapError(Layer.buildWithMemoMap(self, memoMap, scope), f))

/**
 * A pipeline failure as the command's: its own `CliFailure`s as they are, Redis lost
 * past the retries as infrastructure lost (exit code 3), anything else (input that is
 * not the wire format, events out of order) as invalid input (exit code 1). The
 * failure is classified by the pipeline's own rule (`PipelineError.classify`).
 *
 * @since 0.1.0
 * @category errors
 */
export const failureOf = (error: { readonly _tag: string; readonly message: string }): CliFailure =>
  error instanceof CliFailure
    ? error
    : PipelineError.classify(error) === "InfrastructureLost"
    ? infrastructureLost(`Redis was lost mid-turn: ${error.message}`)
    : invalidInput(error.message)

/**
 * Runs one turn through the library's pipeline (in context) and returns the final
 * turn; `onMessage` sees each Stream B message once published. Whatever happens, the
 * turn ends in both streams (see `TurnPipeline`).
 *
 * @since 0.1.0
 * @category pipeline
 */
export const publish = <E extends { readonly _tag: string; readonly message: string }, R, R2 = never>(
  context: TurnContext.TurnContext,
  source: TurnSource.TurnSource<E, R>,
  onMessage?: (message: StreamBMessage.StreamBMessage) => Effect.Effect<void, never, R2>
): Effect.Effect<Turn.Turn, CliFailure, R | R2 | TurnPipeline.TurnPipeline> =>
  TurnPipeline.run(context, source, { onMessage }).pipe(
    Effect.mapBoth({ onFailure: failureOf, onSuccess: (result) => result.turn })
  )

/**
 * A turn that ended in error (a provider error, a truncated stream) as the command's
 * failure, exit code 1, naming the first error; a turn cancelled by a cancel request
 * (status `cancelled`) as exit code 130, the code of Ctrl-C: the user stopped it, so it
 * neither succeeded nor failed on its input; any other turn as it is. For the commands
 * that run a turn, after their output is written in full.
 *
 * @since 0.1.0
 * @category errors
 */
export const failIfFailed = (turn: Turn.Turn): Effect.Effect<Turn.Turn, CliFailure> => {
  const id = turn.turnId === undefined ? "" : ` ${turn.turnId}`
  if (turn.status === "cancelled") {
    return Effect.fail(
      cancelled(`the turn${id} was cancelled by a cancel request; what arrived before it is published`)
    )
  }
  if (turn.status !== "error") return Effect.succeed(turn)
  const [first] = turn.errors
  const reason = first === undefined ? "" : `: ${first.type ?? "api_error"} ${first.code}: ${first.message}`
  return Effect.fail(invalidInput(`the turn${id} failed${reason}`))
}

/**
 * A caller's W3C trace context as the command took it (`--traceparent`,
 * `--tracestate`).
 *
 * @since 0.1.0
 * @category models
 */
export interface TraceArgs {
  readonly traceparent: Option.Option<string>
  readonly tracestate: Option.Option<string>
}

// What a schema's error says is wrong, in one line: its first line, without where
// (`at ["traceContext"]`, on the lines after it).
const innermost = (detail: string): string =>
  detail.split("\n").map((line) => line.trim()).find((line) => line !== "" && !line.startsWith("at [")) ?? detail

/**
 * The turn context of a command: the given ids (checked to be UUIDs) or fresh ones,
 * and the caller's trace context when given. A malformed `--traceparent` or
 * `--tracestate` is bad usage (exit code 2), named in one line.
 *
 * @since 0.1.0
 * @category pipeline
 */
export const contextOf = (
  turn: Option.Option<string>,
  thread: Option.Option<string>,
  trace: TraceArgs = { traceparent: Option.none(), tracestate: Option.none() }
): Effect.Effect<TurnContext.TurnContext, CliFailure> =>
  Effect.gen(function*() {
    const turnId = yield* uuidOrFresh("turn", turn)
    const threadId = yield* uuidOrFresh("thread", thread)
    const traceparent = Option.getOrUndefined(trace.traceparent)
    const tracestate = Option.getOrUndefined(trace.tracestate)
    if (traceparent !== undefined) {
      yield* Effect.mapError(TraceParent.parse(traceparent), (error) =>
        badUsage(`--traceparent ${JSON.stringify(traceparent)} is invalid: ${innermost(error.detail)}`))
    }
    return yield* Effect.mapError(TurnContext.make({ turnId, threadId, traceparent, tracestate }), (error) =>
      badUsage(
        tracestate !== undefined && error.detail.includes("tracestate")
          ? `--tracestate is invalid: ${innermost(error.detail)}`
          : `invalid turn context: ${innermost(error.detail)}`
      ))
  })

/**
 * The limits of the turns a pipeline takes on (`sluice serve --max-turns`,
 * `--max-lag-ms`; see `TurnAdmission`).
 *
 * @since 0.3.0
 * @category models
 */
export type Limits = Pick<TurnPipeline.Options, "maxTurns" | "maxLagMs">

/**
 * How long a pipeline's turns get when it shuts down (`TurnPipeline.Options`'
 * `graceMs` and `drainMs`): `sluice serve` takes them from its shutdown budget.
 *
 * @since 0.3.0
 * @category models
 */
export type Shutdown = Pick<TurnPipeline.Options, "graceMs" | "drainMs">

/**
 * The library's pipeline publishing under a key prefix, on the store in context, with
 * the limits (and the shutdown's times) when given; a bad prefix or limit is bad
 * usage.
 *
 * @since 0.1.0
 * @category layers
 */
export const pipelineLayer = (
  prefix: string,
  limits?: Limits,
  shutdown?: Shutdown
): Layer.Layer<TurnPipeline.TurnPipeline, CliFailure, RedisStreams.RedisStreams> =>
  mapLayerError(
    TurnPipeline.layer({ publisher: { prefix }, ...limits, ...shutdown }),
    (error) => badUsage(error.message)
  )

/**
 * How a store is named to people: the Redis URL without its password, or the
 * embedded in-memory store.
 *
 * @since 0.1.0
 * @category output
 */
export const storeName = (redisUrl: Option.Option<Redacted.Redacted<string>>): string =>
  Option.match(redisUrl, {
    onNone: () => "the embedded in-memory store (set REDIS_URL or pass --redis-url to use Redis)",
    onSome: (url) => {
      const text = Redacted.value(url)
      if (!URL.canParse(text)) return "Redis"
      const parsed = new URL(text)
      if (parsed.password !== "") parsed.password = "***"
      return `Redis at ${parsed.toString()}`
    }
  })

// Without a URL: a Redis Cluster (`REDIS_CLUSTER_NODES`) or a Sentinel-watched master
// (`REDIS_SENTINELS`) when the environment names one, else the embedded store.
const fromEnvironment: Layer.Layer<RedisStreams.RedisStreams, CliFailure> = Layer.unwrap(
  Effect.map(
    Effect.mapError(RedisConfig.target, (error) => badUsage(`bad Redis configuration: ${String(error)}`)),
    Option.match({
      onNone: () => RedisStreamsMemory.layer,
      onSome: (target) =>
        mapLayerError(
          RedisConfig.layer(target),
          (error) => badUsage(`cannot use ${RedisConfig.describe(target)}: ${error.message}`)
        )
    })
  )
)

/**
 * The store the commands write to: Redis at `--redis-url` (or `SLUICE_REDIS_URL`,
 * `REDIS_URL`) when given, else a Redis Cluster (`REDIS_CLUSTER_NODES`) or a master
 * behind Sentinels (`REDIS_SENTINELS`, `REDIS_SENTINEL_NAME`) when the environment
 * names one (`RedisConfig`), else the embedded in-memory store (which lives as long as
 * the process). A Redis that cannot be reached is bad configuration (exit code 2).
 *
 * @since 0.1.0
 * @category layers
 */
export const storeLayer = (
  redisUrl: Option.Option<Redacted.Redacted<string>>
): Layer.Layer<RedisStreams.RedisStreams, CliFailure> =>
  Option.match(redisUrl, {
    onNone: () => fromEnvironment,
    onSome: (url) =>
      mapLayerError(RedisStreamsLive.layer({ url: Redacted.value(url) }), (error) =>
        badUsage(`cannot use ${storeName(redisUrl)}: ${error.message}`))
  })

/**
 * The Durable Streams store's limits (`--max-subscriptions`, `--wait-connections`,
 * `--max-fork-depth`; docs/http.md#limits): the subscriptions it holds in all, the
 * blocking Redis connections its waits share (the live store only), and how many
 * levels of forks on forks a stream may have. One left undefined keeps the store's
 * default.
 *
 * @since 0.3.0
 * @category models
 */
export interface DurableLimits {
  readonly maxSubscriptions?: number | undefined
  readonly waitConnections?: number | undefined
  readonly maxForkDepth?: number | undefined
}

/**
 * The Durable Streams store the server keeps clients' streams (and their
 * subscriptions) in, beside the turns: on Redis at `--redis-url` (keys under `prefix`)
 * when given, else in process memory (as long as the process lives), with `limits`.
 * A Redis that cannot be reached is bad configuration (exit code 2).
 *
 * @since 0.1.0
 * @category layers
 */
export const durableStoreLayer = (
  redisUrl: Option.Option<Redacted.Redacted<string>>,
  prefix: string,
  limits: DurableLimits = {}
): Layer.Layer<DurableStore.DurableStore | DurableSubscriptions.DurableSubscriptions, CliFailure> =>
  Option.match(redisUrl, {
    onNone: () =>
      Layer.merge(
        DurableStoreMemory.layerWith({ maxForkDepth: limits.maxForkDepth }),
        DurableSubscriptions.layerMemoryWith({ maxSubscriptions: limits.maxSubscriptions })
      ),
    onSome: (url) =>
      mapLayerError(
        Layer.merge(
          DurableStoreLive.layer({
            url: Redacted.value(url),
            prefix,
            maxForkDepth: limits.maxForkDepth,
            waitConnections: limits.waitConnections
          }),
          DurableSubscriptions.layer({ url: Redacted.value(url), prefix, maxSubscriptions: limits.maxSubscriptions })
        ),
        (error) => badUsage(`cannot use ${storeName(redisUrl)}: ${error.message}`)
      )
  })

/**
 * The closing report: where the turn went and its summary.
 *
 * @since 0.1.0
 * @category output
 */
export const report = (options: {
  readonly turnId: string
  readonly threadId: string
  readonly prefix: string
  readonly messages: number
  readonly redisUrl: Option.Option<Redacted.Redacted<string>>
  readonly turn: Turn.Turn
}): Effect.Effect<void, never, Output.Output> =>
  Output.line(
    [
      "",
      `turn ${options.turnId} (thread ${options.threadId}): ${options.messages} upserts and turn events published to ${
        storeName(options.redisUrl)
      }`,
      `  Stream A: ${TurnKeys.eventsKey(options.prefix, options.turnId)}`,
      `  Stream B: ${TurnKeys.upsertsKey(options.prefix, options.turnId)}`,
      `summary: ${JSON.stringify(Summary.fromTurn(options.turn))}`
    ].join("\n")
  )

/**
 * The given UUID, a fresh one when none was given; anything else is bad usage.
 *
 * @since 0.1.0
 * @category options
 */
export const uuidOrFresh = (name: string, value: Option.Option<string>): Effect.Effect<string, CliFailure> =>
  Option.match(value, {
    onNone: () => Effect.succeed(Ids.generateEventId()),
    onSome: (id) => (Ids.isUuid(id) ? Effect.succeed(id) : Effect.fail(badUsage(`--${name} must be a UUID, got ${id}`)))
  })

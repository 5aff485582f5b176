/**
 * The pipeline every command that publishes a turn shares: StreamEvents -> Stream A,
 * folded into the turn, -> upserts -> StreamBMessages -> Stream B; the store it
 * writes to; and the closing report.
 *
 * @since 0.1.0
 */
import { Options } from "@effect/cli"
import { Summary, Turn } from "@sluice/accumulator"
import type { StreamBMessage, StreamEvent } from "@sluice/core"
import { Ids } from "@sluice/core"
import { type RedisStreams, RedisStreamsLive, RedisStreamsMemory, TurnKeys, TurnPublisher } from "@sluice/redis"
import { StreamBMessages, UpsertStream } from "@sluice/upserts"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { badUsage, type CliFailure, invalidInput } from "./CliFailure.js"
import * as Output from "./Output.js"

/**
 * The turn's ids and what to do with each StreamBMessage once published.
 *
 * @since 0.1.0
 * @category models
 */
export interface PublishOptions {
  readonly turnId: string
  readonly threadId: string
  readonly onMessage: (message: StreamBMessage.StreamBMessage) => Effect.Effect<void, never, Output.Output>
}

/**
 * Publishes a turn's events to Stream A and their upserts to Stream B (with the
 * `TurnPublisher` in context) and returns the final turn. Any failure of the events
 * or of the pipeline is reported as invalid input (exit code 1), by its message.
 *
 * @since 0.1.0
 * @category pipeline
 */
export const publish = <E extends { readonly _tag: string; readonly message: string }, R>(
  events: Stream.Stream<StreamEvent.StreamEvent, E, R>,
  options: PublishOptions
): Effect.Effect<Turn.Turn, CliFailure, R | TurnPublisher.TurnPublisher | Output.Output> =>
  Effect.gen(function* () {
    const turn = yield* Ref.make(Turn.empty)
    const fold = (event: StreamEvent.StreamEvent): Effect.Effect<void, CliFailure> =>
      Effect.flatMap(Ref.get(turn), (current) =>
        Either.match(Turn.step(current, event), {
          onLeft: (error) => Effect.fail(invalidInput(error.message)),
          onRight: (next) => Ref.set(turn, next)
        })
      )
    yield* events.pipe(
      TurnPublisher.publishEvents(options.turnId),
      Stream.tap(fold),
      UpsertStream.upserts({ turnId: options.turnId, threadId: options.threadId }),
      StreamBMessages.wrap,
      TurnPublisher.publishUpserts(options.turnId),
      Stream.runForEach(options.onMessage),
      Effect.mapError((error) => (error._tag === "CliFailure" ? (error as CliFailure) : invalidInput(error.message)))
    )
    return yield* Ref.get(turn)
  })

/**
 * The store the commands write to: Redis at `REDIS_URL` when it is set, else the
 * embedded in-memory store (which lives as long as the process). A Redis that cannot
 * be reached is reported as bad usage (exit code 2).
 *
 * @since 0.1.0
 * @category layers
 */
export const storeLayer: Layer.Layer<RedisStreams.RedisStreams, CliFailure> = Layer.unwrapEffect(
  Effect.map(Config.option(Config.string("REDIS_URL")), (url) =>
    Option.isSome(url)
      ? Layer.mapError(RedisStreamsLive.layer, (error) => badUsage(`cannot use Redis at ${url.value}: ${error.message}`))
      : RedisStreamsMemory.layer
  ).pipe(Effect.mapError((error) => badUsage(`REDIS_URL: ${error.message}`)))
)

/**
 * The `TurnPublisher` for a key prefix; a bad prefix is bad usage.
 *
 * @since 0.1.0
 * @category layers
 */
export const publisherLayer = (prefix: string) =>
  TurnPublisher.layer({ prefix }).pipe(Layer.mapError((error) => badUsage(error.message)))

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
  readonly turn: Turn.Turn
}): Effect.Effect<void, never, Output.Output> =>
  Effect.gen(function* () {
    const redisUrl = yield* Config.option(Config.string("REDIS_URL")).pipe(Effect.orElseSucceed(Option.none))
    const store = Option.match(redisUrl, { onNone: () => "the embedded in-memory store (set REDIS_URL to use Redis)", onSome: (url) => url })
    yield* Output.line(
      [
        "",
        `turn ${options.turnId} (thread ${options.threadId}): ${options.messages} upserts and turn events published to ${store}`,
        `  Stream A: ${TurnKeys.eventsKey(options.prefix, options.turnId)}`,
        `  Stream B: ${TurnKeys.upsertsKey(options.prefix, options.turnId)}`,
        `summary: ${JSON.stringify(Summary.fromTurn(options.turn))}`
      ].join("\n")
    )
  })

const uuidOption = (name: string, description: string) =>
  Options.text(name).pipe(Options.withDescription(description), Options.optional)

/**
 * `--turn UUID`: the turn id (fresh by default).
 *
 * @since 0.1.0
 * @category options
 */
export const turnOption = uuidOption("turn", "the turn id (a UUID; fresh by default)")

/**
 * `--thread UUID`: the thread id (fresh by default).
 *
 * @since 0.1.0
 * @category options
 */
export const threadOption = uuidOption("thread", "the thread id (a UUID; fresh by default)")

/**
 * `--prefix`: the Redis key prefix.
 *
 * @since 0.1.0
 * @category options
 */
export const prefixOption = Options.text("prefix").pipe(
  Options.withDescription("the Redis key prefix"),
  Options.withDefault(TurnKeys.defaultPrefix)
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

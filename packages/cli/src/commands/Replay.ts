/**
 * `sluice replay --provider P FILE`: a recorded transcript through the whole pipeline,
 * normalize -> Stream A, and -> upserts -> Stream B, into Redis when `REDIS_URL` is
 * set and the embedded in-memory store otherwise.
 *
 * @since 0.1.0
 */
import { Command, Options } from "@effect/cli"
import type { FileSystem } from "@effect/platform"
import { Summary, Turn } from "@sluice/accumulator"
import type { StreamBMessage, StreamEvent } from "@sluice/core"
import { Ids } from "@sluice/core"
import type { ProviderName } from "@sluice/providers"
import { type RedisStreams, RedisStreamsLive, RedisStreamsMemory, TurnKeys, TurnPublisher } from "@sluice/redis"
import { StreamBMessages, UpsertStream } from "@sluice/upserts"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { badUsage, type CliFailure, invalidInput } from "../CliFailure.js"
import * as Output from "../Output.js"
import * as Normalize from "./Normalize.js"

/**
 * What a replay needs.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReplayOptions {
  readonly provider: ProviderName.ProviderName
  readonly file: string
  readonly turnId: string
  readonly threadId: string
  /** Delay before each provider event; zero replays as fast as the pipeline goes. */
  readonly eventDelay: Duration.Duration
  readonly onMessage: (message: StreamBMessage.StreamBMessage) => Effect.Effect<void, never, Output.Output>
}

/**
 * The pipeline of one replayed turn, with the `TurnPublisher` in context: publishes the
 * events to Stream A, their upserts to Stream B, and returns the final turn.
 *
 * @since 0.1.0
 * @category pipeline
 */
export const replayTurn = (
  options: ReplayOptions
): Effect.Effect<Turn.Turn, CliFailure, FileSystem.FileSystem | TurnPublisher.TurnPublisher | Output.Output> =>
  Effect.gen(function* () {
    const turn = yield* Ref.make(Turn.empty)
    const fold = (event: StreamEvent.StreamEvent): Effect.Effect<void, CliFailure> =>
      Effect.flatMap(Ref.get(turn), (current) =>
        Either.match(Turn.step(current, event), {
          onLeft: (error) => Effect.fail(invalidInput(error.message)),
          onRight: (next) => Ref.set(turn, next)
        })
      )
    const paced = Duration.toMillis(options.eventDelay) > 0
    yield* Normalize.events(options.provider, options.file, false, { turnId: options.turnId, threadId: options.threadId }).pipe(
      paced ? Stream.schedule(Schedule.spaced(options.eventDelay)) : (self) => self,
      TurnPublisher.publishEvents(options.turnId),
      Stream.tap(fold),
      UpsertStream.upserts({ turnId: options.turnId, threadId: options.threadId }),
      StreamBMessages.wrap,
      TurnPublisher.publishUpserts(options.turnId),
      Stream.runForEach(options.onMessage),
      Effect.mapError((error) => (error._tag === "CliFailure" ? error : invalidInput(error.message)))
    )
    return yield* Ref.get(turn)
  })

/**
 * The store a replay writes to: Redis at `REDIS_URL` when it is set, else the embedded
 * in-memory store (which lives as long as the process). A Redis that cannot be reached
 * is reported as bad usage (exit code 2).
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

const describe = (message: StreamBMessage.StreamBMessage): string => {
  const payload: unknown = JSON.parse(message.payload)
  if (typeof payload !== "object" || payload === null) return message.payload
  const fields = payload as Record<string, unknown>
  if (message.payloadType === "turn_event") {
    const detail = fields["status"] ?? fields["modelId"] ?? JSON.stringify(fields["error"] ?? "")
    return `turn   ${String(fields["type"])} ${String(detail)}`
  }
  const content = String(fields["content"] ?? "")
  const shown = content.length > 72 ? `${content.slice(0, 69)}...` : content
  const tool = fields["toolName"] === undefined ? "" : ` ${String(fields["toolName"])}(${JSON.stringify(fields["toolArguments"] ?? {})})`
  return `upsert ${String(fields["itemType"])}/${String(fields["changeType"])} ${String(fields["itemId"])}${tool} ${JSON.stringify(shown)}`
}

const uuidOption = (name: string, description: string) =>
  Options.text(name).pipe(Options.withDescription(description), Options.optional)

/** The given UUID, a fresh one when none was given; anything else is bad usage. */
const uuidOrFresh = (name: string, value: Option.Option<string>): Effect.Effect<string, CliFailure> =>
  Option.match(value, {
    onNone: () => Effect.succeed(Ids.generateEventId()),
    onSome: (id) => (Ids.isUuid(id) ? Effect.succeed(id) : Effect.fail(badUsage(`--${name} must be a UUID, got ${id}`)))
  })

/**
 * The `replay` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "replay",
  {
    provider: Normalize.provider,
    file: Normalize.file,
    turn: uuidOption("turn", "the turn id (a UUID; fresh by default)"),
    thread: uuidOption("thread", "the thread id (a UUID; fresh by default)"),
    pace: Options.choice("pace", ["realtime", "fast"]).pipe(
      Options.withDescription("realtime: one provider event every --delay-ms; fast: as fast as the pipeline goes"),
      Options.withDefault("fast")
    ),
    delayMs: Options.integer("delay-ms").pipe(
      Options.withDescription("the delay between provider events at realtime pace"),
      Options.withDefault(25)
    ),
    jsonl: Options.boolean("jsonl").pipe(Options.withDescription("print exactly one StreamBMessage JSON object a line, nothing else")),
    prefix: Options.text("prefix").pipe(Options.withDescription("the Redis key prefix"), Options.withDefault(TurnKeys.defaultPrefix))
  },
  (args) =>
    Effect.gen(function* () {
      if (args.delayMs < 0) return yield* Effect.fail(badUsage("--delay-ms must not be negative"))
      const turnId = yield* uuidOrFresh("turn", args.turn)
      const threadId = yield* uuidOrFresh("thread", args.thread)
      const redisUrl = yield* Config.option(Config.string("REDIS_URL")).pipe(Effect.orElseSucceed(Option.none))
      let messages = 0
      const turn = yield* replayTurn({
        provider: args.provider,
        file: args.file,
        turnId,
        threadId,
        eventDelay: Duration.millis(args.pace === "realtime" ? args.delayMs : 0),
        onMessage: (message) => {
          messages++
          return Output.line(args.jsonl ? JSON.stringify(message) : describe(message))
        }
      }).pipe(Effect.provide(TurnPublisher.layer({ prefix: args.prefix }).pipe(Layer.mapError((e) => badUsage(e.message)))))
      if (args.jsonl) return
      const store = Option.match(redisUrl, { onNone: () => "the embedded in-memory store (set REDIS_URL to use Redis)", onSome: (url) => url })
      yield* Output.line(
        [
          "",
          `turn ${turnId} (thread ${threadId}): ${messages} upserts and turn events published to ${store}`,
          `  Stream A: ${TurnKeys.eventsKey(args.prefix, turnId)}`,
          `  Stream B: ${TurnKeys.upsertsKey(args.prefix, turnId)}`,
          `summary: ${JSON.stringify(Summary.fromTurn(turn))}`
        ].join("\n")
      )
    }).pipe(Effect.provide(storeLayer))
).pipe(Command.withDescription("replay a recorded transcript through normalize, upserts and Redis Streams A and B"))

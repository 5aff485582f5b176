/**
 * `sluice replay --provider P FILE`: a recorded transcript through the whole pipeline,
 * normalize -> Stream A, and -> upserts -> Stream B, into Redis when `REDIS_URL` is
 * set and the embedded in-memory store otherwise.
 *
 * @since 0.1.0
 */
import { Command, Options } from "@effect/cli"
import type { FileSystem } from "@effect/platform"
import type { Turn } from "@sluice/accumulator"
import type { StreamBMessage } from "@sluice/core"
import type { ProviderName } from "@sluice/providers"
import type { TurnPublisher } from "@sluice/redis"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { badUsage, type CliFailure } from "../CliFailure.js"
import * as Output from "../Output.js"
import * as TurnPipeline from "../TurnPipeline.js"
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
): Effect.Effect<Turn.Turn, CliFailure, FileSystem.FileSystem | TurnPublisher.TurnPublisher | Output.Output> => {
  const paced = Duration.toMillis(options.eventDelay) > 0
  return TurnPipeline.publish(
    Normalize.events(options.provider, options.file, false, { turnId: options.turnId, threadId: options.threadId }).pipe(
      paced ? Stream.schedule(Schedule.spaced(options.eventDelay)) : (self) => self
    ),
    options
  )
}

/**
 * The store a replay writes to (see `TurnPipeline.storeLayer`).
 *
 * @since 0.1.0
 * @category layers
 */
export const storeLayer = TurnPipeline.storeLayer

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
    turn: TurnPipeline.turnOption,
    thread: TurnPipeline.threadOption,
    pace: Options.choice("pace", ["realtime", "fast"]).pipe(
      Options.withDescription("realtime: one provider event every --delay-ms; fast: as fast as the pipeline goes"),
      Options.withDefault("fast")
    ),
    delayMs: Options.integer("delay-ms").pipe(
      Options.withDescription("the delay between provider events at realtime pace"),
      Options.withDefault(25)
    ),
    jsonl: Options.boolean("jsonl").pipe(Options.withDescription("print exactly one StreamBMessage JSON object a line, nothing else")),
    prefix: TurnPipeline.prefixOption
  },
  (args) =>
    Effect.gen(function* () {
      if (args.delayMs < 0) return yield* Effect.fail(badUsage("--delay-ms must not be negative"))
      const turnId = yield* TurnPipeline.uuidOrFresh("turn", args.turn)
      const threadId = yield* TurnPipeline.uuidOrFresh("thread", args.thread)
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
      }).pipe(Effect.provide(TurnPipeline.publisherLayer(args.prefix)))
      if (args.jsonl) return
      yield* TurnPipeline.report({ turnId, threadId, prefix: args.prefix, messages, turn })
    }).pipe(Effect.provide(TurnPipeline.storeLayer))
).pipe(Command.withDescription("replay a recorded transcript through normalize, upserts and Redis Streams A and B"))

/**
 * `sluice replay --provider P FILE`: a recorded transcript through the whole pipeline,
 * normalize -> Stream A, and -> upserts -> Stream B, into Redis when `--redis-url` is
 * set and the embedded in-memory store otherwise.
 *
 * @since 0.1.0
 */
import { Command, Options } from "@effect/cli"
import type { FileSystem } from "@effect/platform"
import type { Turn } from "@sluice/accumulator"
import type { StreamBMessage } from "@sluice/core"
import type { ProviderName } from "@sluice/providers"
import { type TurnContext, type TurnPipeline, TurnSource } from "@sluice/pipeline"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { badUsage, type CliFailure } from "../CliFailure.js"
import * as EnvOptions from "../EnvOptions.js"
import * as Input from "../Input.js"
import * as Output from "../Output.js"
import * as Publishing from "../Publishing.js"
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
  readonly context: TurnContext.TurnContext
  /** Delay before each provider event; zero replays as fast as the pipeline goes. */
  readonly eventDelay: Duration.Duration
  readonly onMessage: (message: StreamBMessage.StreamBMessage) => Effect.Effect<void, never, Output.Output>
}

/**
 * The events of a recorded transcript, paced: a turn source for the pipeline.
 *
 * @since 0.1.0
 * @category pipeline
 */
export const source = (provider: ProviderName.ProviderName, file: string, eventDelay: Duration.Duration) => {
  const events = TurnSource.sse(provider, Input.bytes(file))
  return Duration.toMillis(eventDelay) > 0
    ? (context: TurnContext.TurnContext) => events(context).pipe(Stream.schedule(Schedule.spaced(eventDelay)))
    : events
}

/**
 * One replayed turn through the library's pipeline (in context): its events to Stream
 * A, their upserts to Stream B; returns the final turn.
 *
 * @since 0.1.0
 * @category pipeline
 */
export const replayTurn = (
  options: ReplayOptions
): Effect.Effect<Turn.Turn, CliFailure, FileSystem.FileSystem | TurnPipeline.TurnPipeline | Output.Output> =>
  Publishing.publish(options.context, source(options.provider, options.file, options.eventDelay), options.onMessage)

/**
 * The store a replay writes to (see `Publishing.storeLayer`).
 *
 * @since 0.1.0
 * @category layers
 */
export const storeLayer = Publishing.storeLayer

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
    turn: Publishing.turnOption,
    thread: Publishing.threadOption,
    pace: EnvOptions.choiceOr(
      "pace",
      ["realtime", "fast"],
      "SLUICE_PACE",
      "fast",
      "realtime: one provider event every --delay-ms; fast: as fast as the pipeline goes"
    ),
    delayMs: EnvOptions.integer("delay-ms", "SLUICE_DELAY_MS", 25, "the delay between provider events at realtime pace, in milliseconds"),
    jsonl: Options.boolean("jsonl").pipe(Options.withDescription("print exactly one StreamBMessage JSON object a line, nothing else")),
    prefix: Publishing.prefixOption,
    redisUrl: EnvOptions.redisUrl
  },
  (args) =>
    Effect.gen(function* () {
      if (args.delayMs < 0) return yield* Effect.fail(badUsage("--delay-ms must not be negative"))
      const context = yield* Publishing.contextOf(args.turn, args.thread)
      yield* Normalize.checkFormat(args.provider, args.file)
      let messages = 0
      const turn = yield* replayTurn({
        provider: args.provider,
        file: args.file,
        context,
        eventDelay: Duration.millis(args.pace === "realtime" ? args.delayMs : 0),
        onMessage: (message) => {
          messages++
          return Output.line(args.jsonl ? JSON.stringify(message) : describe(message))
        }
      }).pipe(Effect.provide(Publishing.pipelineLayer(args.prefix)))
      if (!args.jsonl) {
        yield* Publishing.report({ turnId: context.turnId, threadId: context.threadId, prefix: args.prefix, messages, redisUrl: args.redisUrl, turn })
      }
      yield* Publishing.failIfFailed(turn)
    }).pipe(Effect.provide(Publishing.storeLayer(args.redisUrl)))
).pipe(Command.withDescription("replay a recorded transcript through normalize, upserts and Redis Streams A and B"))

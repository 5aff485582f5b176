/**
 * What `sluice replay` runs, loaded when it runs: a recorded transcript through the
 * library's pipeline into Stream A and Stream B.
 *
 * @internal
 */
import type { Turn } from "@sluice/accumulator"
import type { StreamBMessage } from "@sluice/core"
import { type TurnContext, type TurnPipeline, TurnSource } from "@sluice/pipeline"
import type { ProviderName } from "@sluice/providers"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { badUsage, type CliFailure } from "../CliFailure.js"
import type * as Replay from "../commands/Replay.js"
import * as Input from "../Input.js"
import * as Output from "../Output.js"
import * as Publishing from "../Publishing.js"
import { checkFormat } from "./normalize.js"

/**
 * What a replay needs.
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
 */
export const source = (provider: ProviderName.ProviderName, file: string, eventDelay: Duration.Duration) => {
  const events = TurnSource.sse(provider, Input.sseBytes(file))
  return Duration.toMillis(eventDelay) > 0
    ? (context: TurnContext.TurnContext) => events(context).pipe(Stream.schedule(Schedule.spaced(eventDelay)))
    : events
}

/**
 * One replayed turn through the library's pipeline (in context): its events to Stream
 * A, their upserts to Stream B; returns the final turn.
 */
export const replayTurn = (
  options: ReplayOptions
): Effect.Effect<Turn.Turn, CliFailure, FileSystem.FileSystem | TurnPipeline.TurnPipeline | Output.Output> =>
  Publishing.publish(options.context, source(options.provider, options.file, options.eventDelay), options.onMessage)

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
  const tool = fields["toolName"] === undefined
    ? ""
    : ` ${String(fields["toolName"])}(${JSON.stringify(fields["toolArguments"] ?? {})})`
  return `upsert ${String(fields["itemType"])}/${String(fields["changeType"])} ${String(fields["itemId"])}${tool} ${
    JSON.stringify(shown)
  }`
}

/** Runs `sluice replay`. */
export const replay = (args: Replay.Args): Effect.Effect<void, CliFailure, FileSystem.FileSystem | Output.Output> =>
  Effect.gen(function*() {
    if (args.delayMs < 0) return yield* Effect.fail(badUsage("--delay-ms must not be negative"))
    const context = yield* Publishing.contextOf(args.turn, args.thread, args)
    yield* checkFormat(args.provider, args.file)
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
      yield* Publishing.report({
        turnId: context.turnId,
        threadId: context.threadId,
        prefix: args.prefix,
        messages,
        redisUrl: args.redisUrl,
        turn
      })
    }
    yield* Publishing.failIfFailed(turn)
  }).pipe(Effect.provide(Publishing.storeLayer(args.redisUrl)))

/**
 * The docs/views.md view of a turn: `IContent` values as a Vercel-AI-SDK-style generator
 * yields them. Each piece of agent text becomes its own `IContent` with one `text`
 * block (empty text is skipped); once the stream is over, one `IContent` carries every
 * tool call as a `tool_call` block, with its id in history form (`ToolCallId`) and its
 * arguments parsed; the last one carries the usage.
 *
 * A provider error (an `item_error` or `response_error` event) fails the stream with
 * that `ProviderError` instead of being skipped, as docs/views.md#icontent asks: what was yielded
 * before it stays yielded.
 *
 * @since 0.1.0
 */
import type { ProviderError, StreamEvent } from "@sluice/core"
import { Json, OutputItem, ToolCallId } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Accumulator from "./Accumulator.js"
import type { AccumulatorError } from "./AccumulatorError.js"
import { fromErrorObject } from "./ProviderErrors.js"
import * as Turn from "./Turn.js"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * A piece of text.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TextBlock = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String
}).annotate({ identifier: "IContent.TextBlock" })

/**
 * A tool call: its id in history form, the tool's name and the parsed arguments
 * (`{"_invalid_arguments": "<raw>"}` when they are not a JSON object).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolCallBlock = Schema.Struct({
  type: Schema.Literal("tool_call"),
  id: Schema.String,
  name: Schema.String,
  parameters: Json.JsonObject
}).annotate({ identifier: "IContent.ToolCallBlock" })

/**
 * Any block.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Block = Schema.Union([TextBlock, ToolCallBlock]).annotate({ identifier: "IContent.Block" })

/**
 * @since 0.1.0
 * @category models
 */
export type Block = typeof Block.Type

/**
 * Token counts: `inputTokens` is every prompt token the provider counted (Sluice's
 * `input + cacheRead + cacheWrite`), `outputTokens` is Sluice's `output`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UsageMetadata = Schema.Struct({
  inputTokens: Count,
  outputTokens: Count
}).annotate({ identifier: "IContent.UsageMetadata" })

/**
 * `{speaker: 'ai', blocks, metadata?: {usage?}}`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const IContent = Schema.Struct({
  speaker: Schema.Literal("ai"),
  blocks: Schema.Array(Block),
  metadata: Schema.optionalKey(Schema.Struct({ usage: Schema.optionalKey(UsageMetadata) }))
}).annotate({ identifier: "IContent" })

/**
 * @since 0.1.0
 * @category models
 */
export type IContent = typeof IContent.Type

const text = (value: string): IContent => ({ speaker: "ai", blocks: [{ type: "text", text: value }] })

/**
 * What follows the text once the turn is over: one `IContent` with every finished
 * tool call the caller must run (none when there are none; calls the provider ran
 * itself, `provider_executed`, are not the caller's to run), then the usage (zeros
 * when the turn had none).
 *
 * @since 0.1.0
 * @category constructors
 */
export const trailer = (turn: Turn.Turn): ReadonlyArray<IContent> => {
  const blocks: Array<Block> = []
  for (const item of Turn.finalItems(turn)) {
    if (!OutputItem.isClientToolCall(item)) continue
    blocks.push({
      type: "tool_call",
      id: ToolCallId.toHistory(item.call_id),
      name: item.name,
      parameters: Json.parseArguments(item.arguments)
    })
  }
  const { cacheRead, cacheWrite, input, output } = turn.usage
  const usage: IContent = {
    speaker: "ai",
    blocks: [],
    metadata: { usage: { inputTokens: input + cacheRead + cacheWrite, outputTokens: output } }
  }
  return blocks.length === 0 ? [usage] : [{ speaker: "ai", blocks }, usage]
}

/**
 * The text an event adds to the agent's messages, given the turn before and after it.
 * An `item_done` adds what its final item holds beyond the item's deltas (all of it
 * when the item never streamed).
 */
const textOf = (before: Turn.Turn, step: Accumulator.Step): string => {
  const payload = step.event.payload
  switch (payload.type) {
    case "item_start":
      return payload.item_type === "message" ? (payload.initial_content ?? "") : ""
    case "item_delta":
      return Turn.item(step.turn, payload.item_id)?.type === "message" ? payload.delta_content : ""
    case "item_done": {
      const final = payload.final_item
      if (final.type !== "message" || final.origin !== "agent") return ""
      const streamed = Turn.item(before, payload.item_id)?.content ?? ""
      return final.content.startsWith(streamed) ? final.content.slice(streamed.length) : ""
    }
    default:
      return ""
  }
}

const errorOf = (step: Accumulator.Step): StreamEvent.ErrorObject | undefined => {
  const payload = step.event.payload
  return payload.type === "item_error" || payload.type === "response_error" ? payload.error : undefined
}

/**
 * A `Stream` transformer from StreamEvents to docs/views.md's `IContent`s: one per non-empty
 * piece of agent text as it arrives, then the tool calls and the usage when the input
 * ends. Fails with the `ProviderError` of the first error event, and with
 * `AccumulatorError` on out-of-order events.
 *
 * @since 0.1.0
 * @category stages
 */
export const fromEvents = <E, R>(
  self: Stream.Stream<StreamEvent.StreamEvent, E, R>
): Stream.Stream<IContent, E | AccumulatorError | ProviderError.ProviderError, R> =>
  Stream.unwrap(
    Effect.map(Ref.make(Turn.empty), (ref) =>
      Stream.concat(
        self.pipe(
          Accumulator.accumulate,
          Stream.mapEffect((step) =>
            Effect.flatMap(
              Ref.modify(
                ref,
                (before): readonly [Result.Result<ReadonlyArray<IContent>, ProviderError.ProviderError>, Turn.Turn] => {
                  const error = errorOf(step)
                  if (error !== undefined) return [Result.fail(fromErrorObject(error)), step.turn]
                  const piece = textOf(before, step)
                  return [Result.succeed(piece === "" ? [] : [text(piece)]), step.turn]
                }
              ),
              Effect.fromResult
            )
          ),
          Stream.flattenIterable
        ),
        Stream.fromIterableEffect(Effect.map(Ref.get(ref), trailer))
      ))
  )

/**
 * The `IContent`s of a finished turn: one per non-empty agent message, then the tool
 * calls and the usage, as `fromEvents` would give them with each message in one piece.
 * A turn with errors gives its first error instead. Cancelled messages are left out
 * (a stream has already yielded whatever text they had).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromTurn = (turn: Turn.Turn): Result.Result<ReadonlyArray<IContent>, ProviderError.ProviderError> => {
  const first = turn.errors[0]
  if (first !== undefined) return Result.fail(fromErrorObject(first))
  const contents: Array<IContent> = []
  for (const item of turn.items) {
    if (item.type !== "message" || item.status === "cancelled") continue
    if (item.final !== undefined && (item.final.type !== "message" || item.final.origin !== "agent")) continue
    if (item.content !== "") contents.push(text(item.content))
  }
  return Result.succeed([...contents, ...trailer(turn)])
}

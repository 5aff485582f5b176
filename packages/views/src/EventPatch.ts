/**
 * The docs/views.md normalized event patches: what a mapper pushes into the message
 * accumulator, one patch per call, after translating its provider's wire events.
 * Provider event names are not patches. Mappers never give content indexes: the
 * accumulator assigns them. Snake_case, as the seed has it.
 *
 * @since 0.3.0
 */
import { Json, SchemaDecode } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { MessageAccumulatorError } from "./MessageAccumulatorError.js"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
// A string that may be missing (or undefined): empty when it is.
const text = Schema.String.pipe(Schema.withDecodingDefault(Effect.succeed("")))
const optional = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(schema)

/**
 * Token counts a `message_delta` reports; each replaces the count before it. Missing
 * ones keep their value (docs/views.md's defaults are zeros); a missing `total` is derived.
 *
 * @since 0.3.0
 * @category schemas
 */
export const UsagePatch = Schema.Struct({
  input: optional(Count),
  output: optional(Count),
  cache_read: optional(Count),
  cache_write: optional(Count),
  total: optional(Count),
  raw: optional(Json.JsonObject)
}).annotate({ identifier: "UsagePatch" })

/**
 * `{type: "message_start", delta?: {id?, model?, role?: "assistant", timestamp?}}`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const MessageStart = Schema.Struct({
  type: Schema.Literal("message_start"),
  delta: Schema.Struct({
    id: optional(Schema.String),
    model: optional(Schema.String),
    role: optional(Schema.Literal("assistant")),
    timestamp: optional(Count)
  }).pipe(Schema.withDecodingDefault(Effect.sync(() => ({}))))
}).annotate({ identifier: "MessageStartPatch" })

/**
 * `{type: "message_delta", delta?: {stop_reason?, error_message?}, usage?}`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const MessageDelta = Schema.Struct({
  type: Schema.Literal("message_delta"),
  delta: Schema.Struct({ stop_reason: optional(Schema.String), error_message: optional(Schema.String) }).pipe(
    Schema.withDecodingDefault(Effect.sync(() => ({})))
  ),
  usage: optional(UsagePatch)
}).annotate({ identifier: "MessageDeltaPatch" })

/**
 * `{type: "message_end"}`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const MessageEnd = Schema.Struct({ type: Schema.Literal("message_end") }).annotate({
  identifier: "MessageEndPatch"
})

/**
 * `text_start | text_delta | text_end`, each with a `delta` (empty when missing).
 *
 * @since 0.3.0
 * @category schemas
 */
export const Text = Schema.Struct({
  type: Schema.Literals(["text_start", "text_delta", "text_end"]),
  delta: text
}).annotate({ identifier: "TextPatch" })

/**
 * `reasoning_start | reasoning_delta | reasoning_end`, each with a `delta` and a piece
 * of `signature` (both empty when missing).
 *
 * @since 0.3.0
 * @category schemas
 */
export const Reasoning = Schema.Struct({
  type: Schema.Literals(["reasoning_start", "reasoning_delta", "reasoning_end"]),
  delta: text,
  signature: text
}).annotate({ identifier: "ReasoningPatch" })

/**
 * `{type: "tool_start", id, name, tool_type?, provider_executed?, delta?}`: a tool call
 * begins; `delta` is argument JSON text. `provider_executed: true` marks a call the
 * provider ran itself (web search, code execution, ...), never one for the caller.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ToolStart = Schema.Struct({
  type: Schema.Literal("tool_start"),
  id: Schema.String,
  name: Schema.String,
  tool_type: Schema.String.pipe(Schema.withDecodingDefault(Effect.succeed("tool_use"))),
  provider_executed: optional(Schema.Boolean),
  delta: text
}).annotate({ identifier: "ToolStartPatch" })

/**
 * `tool_delta | tool_end`: more argument text.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Tool = Schema.Struct({
  type: Schema.Literals(["tool_delta", "tool_end"]),
  delta: text
}).annotate({ identifier: "ToolPatch" })

/**
 * `{type: "tool_result_start", tool_use_id, name?, provider_executed?, delta?}`: a tool
 * result begins; `provider_executed: true` when the provider ran the tool and reported
 * its result (a server tool's, say).
 *
 * @since 0.3.0
 * @category schemas
 */
export const ToolResultStart = Schema.Struct({
  type: Schema.Literal("tool_result_start"),
  tool_use_id: Schema.String,
  name: optional(Schema.String),
  provider_executed: optional(Schema.Boolean),
  delta: text
}).annotate({ identifier: "ToolResultStartPatch" })

/**
 * `tool_result_delta | tool_result_end`: more result text.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ToolResult = Schema.Struct({
  type: Schema.Literals(["tool_result_delta", "tool_result_end"]),
  delta: text
}).annotate({ identifier: "ToolResultPatch" })

/**
 * Any patch.
 *
 * @since 0.3.0
 * @category schemas
 */
export const EventPatch = Schema.Union([
  MessageStart,
  MessageDelta,
  MessageEnd,
  Text,
  Reasoning,
  ToolStart,
  Tool,
  ToolResultStart,
  ToolResult
]).annotate({ identifier: "EventPatch" })

/**
 * @since 0.3.0
 * @category models
 */
export type EventPatch = typeof EventPatch.Type

/**
 * A patch as a mapper writes it (defaults not yet applied).
 *
 * @since 0.3.0
 * @category models
 */
export type EventPatchInput = typeof EventPatch.Encoded

/**
 * Every patch type.
 *
 * @since 0.3.0
 * @category models
 */
export type PatchType = EventPatch["type"]

const patchTypes: ReadonlySet<string> = new Set<PatchType>([
  "message_start",
  "message_delta",
  "message_end",
  "text_start",
  "text_delta",
  "text_end",
  "reasoning_start",
  "reasoning_delta",
  "reasoning_end",
  "tool_start",
  "tool_delta",
  "tool_end",
  "tool_result_start",
  "tool_result_delta",
  "tool_result_end"
])

/**
 * The three phases of a content block.
 *
 * @since 0.3.0
 * @category models
 */
export type Phase = "start" | "delta" | "end"

/**
 * The content blocks a patch can belong to.
 *
 * @since 0.3.0
 * @category models
 */
export type BlockType = "text" | "reasoning" | "tool" | "tool_result"

const decodePatch = SchemaDecode.decodeUnknownResult(EventPatch, { errors: "all" })

/**
 * Decodes one patch. `patchIndex` names its position in error messages.
 *
 * @since 0.3.0
 * @category decoding
 */
export const decode = (input: unknown, patchIndex?: number): Result.Result<EventPatch, MessageAccumulatorError> => {
  const where = patchIndex === undefined ? "patch" : `patch ${patchIndex}`
  const located = patchIndex === undefined ? {} : { patchIndex }
  const type = typeof input === "object" && input !== null && "type" in input ? input.type : undefined
  if (typeof type !== "string" || !patchTypes.has(type)) {
    return Result.fail(
      new MessageAccumulatorError({
        reason: "UnknownPatchType",
        ...(typeof type === "string" ? { patchType: type } : {}),
        ...located,
        message: typeof type === "string"
          ? `${where}: unknown patch type ${JSON.stringify(type)}`
          : `${where}: not a patch object with a string type`
      })
    )
  }
  return Result.mapError(
    decodePatch(input),
    (error) =>
      new MessageAccumulatorError({
        reason: "InvalidPatch",
        patchType: type,
        ...located,
        message: `${where} (${type}): ${error.message}`
      })
  )
}

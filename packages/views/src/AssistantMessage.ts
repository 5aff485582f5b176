/**
 * The docs/views.md assistant message, built by the message accumulator: content blocks in
 * the order they started, usage with the first design's defaults, stop reason and timestamp;
 * and the events the accumulator yields for each patch, each with the message so far.
 *
 * @since 0.3.0
 */
import { Json } from "@sluice/core"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const optional = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(schema)

/**
 * Usage as docs/views.md#messageaccumulator-over-event-patches counts it: `{input, cache_write, cache_read, output, total, raw}`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Usage = Schema.Struct({
  input: Count,
  cache_write: Count,
  cache_read: Count,
  output: Count,
  total: Count,
  raw: Json.JsonObject
}).annotate({ identifier: "AssistantMessage.Usage" })

/**
 * @since 0.3.0
 * @category models
 */
export type Usage = typeof Usage.Type

/**
 * The docs/views.md `DEFAULT_USAGE`: every count zero, `raw` empty.
 *
 * @since 0.3.0
 * @category constructors
 */
export const defaultUsage: Usage = { input: 0, cache_write: 0, cache_read: 0, output: 0, total: 0, raw: {} }

/**
 * A text block.
 *
 * @since 0.3.0
 * @category schemas
 */
export const TextContent = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }).annotate({
  identifier: "AssistantMessage.TextContent"
})

/**
 * A reasoning block with its signature (empty when the provider gave none).
 *
 * @since 0.3.0
 * @category schemas
 */
export const ReasoningContent = Schema.Struct({
  type: Schema.Literal("reasoning"),
  text: Schema.String,
  signature: Schema.String
}).annotate({ identifier: "AssistantMessage.ReasoningContent" })

/**
 * A tool call: `arguments` is the raw JSON text so far; `input` is it parsed
 * (`{"_invalid_arguments": "<raw>"}` when malformed), present once the block ended.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ToolCallContent = Schema.Struct({
  type: Schema.Literal("tool_call"),
  id: Schema.String,
  name: Schema.String,
  tool_type: Schema.String,
  arguments: Schema.String,
  input: optional(Json.JsonObject)
}).annotate({ identifier: "AssistantMessage.ToolCallContent" })

/**
 * A tool result, linked to its call by `tool_use_id`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ToolResultContent = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Schema.String,
  name: optional(Schema.String),
  content: Schema.String
}).annotate({ identifier: "AssistantMessage.ToolResultContent" })

/**
 * A tool call the provider ran itself (web search, code execution, ...: a `tool_start`
 * with `provider_executed`). Kept apart from `tool_call` blocks: the caller must never
 * run it.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ProviderToolCallContent = Schema.Struct({
  ...ToolCallContent.fields,
  type: Schema.Literal("provider_tool_call")
}).annotate({ identifier: "AssistantMessage.ProviderToolCallContent" })

/**
 * The result of a provider-executed tool call, as the provider reported it.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ProviderToolResultContent = Schema.Struct({
  ...ToolResultContent.fields,
  type: Schema.Literal("provider_tool_result")
}).annotate({ identifier: "AssistantMessage.ProviderToolResultContent" })

/**
 * Any content block.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Content = Schema.Union([
  TextContent,
  ReasoningContent,
  ToolCallContent,
  ToolResultContent,
  ProviderToolCallContent,
  ProviderToolResultContent
]).annotate({
  identifier: "AssistantMessage.Content"
})

/**
 * @since 0.3.0
 * @category models
 */
export type Content = typeof Content.Type

/**
 * A provider-executed tool call with its result (absent until the result arrives), as
 * `provider_tool_calls` lists them.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ProviderToolCall = Schema.Struct({
  ...Struct.omit(ToolCallContent.fields, ["type", "tool_type"]),
  result: optional(Schema.String)
}).annotate({ identifier: "AssistantMessage.ProviderToolCall" })

/**
 * @since 0.3.0
 * @category models
 */
export type ProviderToolCall = typeof ProviderToolCall.Type

/**
 * The assistant message. `content[i]` is the block with content index `i`. The calls
 * the provider ran itself are `provider_tool_call` / `provider_tool_result` blocks, never
 * `tool_call` / `tool_result`; `provider_tool_calls` lists them with their results
 * (present when there is one), as the turn summary's `providerToolCalls` does.
 *
 * @since 0.3.0
 * @category schemas
 */
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  id: optional(Schema.String),
  model: optional(Schema.String),
  provider: optional(Schema.String),
  api: optional(Schema.String),
  content: Schema.Array(Content),
  provider_tool_calls: optional(Schema.Array(ProviderToolCall)),
  usage: Usage,
  stop_reason: Schema.NullOr(Schema.String),
  error_message: optional(Schema.String),
  timestamp: Count
}).annotate({ identifier: "AssistantMessage" })

/**
 * @since 0.3.0
 * @category models
 */
export type AssistantMessage = typeof AssistantMessage.Type

/**
 * What the accumulator yields for a block patch: the patch's fields, the content index
 * it assigned (or reused), and the message after it.
 *
 * @since 0.3.0
 * @category models
 */
export type BlockEvent =
  | {
    readonly type: "text_start" | "text_delta" | "text_end"
    readonly content_index: number
    readonly delta: string
    readonly partial: AssistantMessage
  }
  | {
    readonly type: "reasoning_start" | "reasoning_delta" | "reasoning_end"
    readonly content_index: number
    readonly delta: string
    readonly signature: string
    readonly partial: AssistantMessage
  }
  | {
    readonly type: "tool_start"
    readonly content_index: number
    readonly id: string
    readonly name: string
    readonly tool_type: string
    readonly provider_executed?: boolean
    readonly delta: string
    readonly partial: AssistantMessage
  }
  | {
    readonly type: "tool_delta" | "tool_end"
    readonly content_index: number
    readonly delta: string
    readonly partial: AssistantMessage
  }
  | {
    readonly type: "tool_result_start"
    readonly content_index: number
    readonly tool_use_id: string
    readonly name?: string
    readonly provider_executed?: boolean
    readonly delta: string
    readonly partial: AssistantMessage
  }
  | {
    readonly type: "tool_result_delta" | "tool_result_end"
    readonly content_index: number
    readonly delta: string
    readonly partial: AssistantMessage
  }

/**
 * The message's client tool calls: its `tool_call` blocks, the calls the caller must run.
 *
 * @since 0.3.0
 * @category accessors
 */
export const toolCalls = (message: AssistantMessage): ReadonlyArray<typeof ToolCallContent.Type> =>
  message.content.filter((block): block is typeof ToolCallContent.Type => block.type === "tool_call")

/**
 * Any event the accumulator yields: `message_start` and `message_delta` with the
 * message so far, block events, and `message_end` with the final message. When
 * `message_end` came with blocks still open, it closed them as their `*_end` would
 * (with what they had) and `closed` lists their content indexes (since 0.2.0).
 *
 * @since 0.3.0
 * @category models
 */
export type AssistantStreamEvent =
  | { readonly type: "message_start"; readonly partial: AssistantMessage }
  | { readonly type: "message_delta"; readonly partial: AssistantMessage }
  | BlockEvent
  | {
    readonly type: "message_end"
    readonly message: AssistantMessage
    readonly closed?: ReadonlyArray<number> | undefined
  }

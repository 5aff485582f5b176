/**
 * A provider-neutral request for one streamed turn: the model, a system prompt, the
 * conversation (user text, assistant turns with their text, reasoning and tool calls,
 * tool results), tool definitions and sampling options. Each wire API's request module
 * (`AnthropicRequest`, `OpenAiChatRequest`, `OpenAiResponsesRequest`, `GeminiRequest`)
 * encodes it into that provider's streaming HTTP request.
 *
 * Assistant turns keep what providers demand back in the next request: reasoning
 * `signature`s, redacted thinking `data`, `encryptedContent`, Gemini's
 * `thoughtSignature` in `providerMetadata`. Those are only valid for the provider
 * that issued them (`provider`): encoders send them to that provider and leave them
 * out for any other. Tool call ids may be in provider form or in history form
 * (`hist_tool_...`, see `ToolCallId`); encoders send provider form.
 *
 * @since 0.1.0
 */
import { Json } from "@sluice/core"
import * as Schema from "effect/Schema"

const optional = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(schema)

/**
 * User text.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UserMessage = Schema.TaggedStruct("user", { text: Schema.String }).annotate({
  identifier: "UserMessage"
})

/**
 * Text the assistant wrote. `providerMetadata` keeps what came with it
 * (`thoughtSignature` from Gemini).
 *
 * @since 0.1.0
 * @category schemas
 */
export const TextPart = Schema.TaggedStruct("text", {
  text: Schema.String,
  provider: optional(Schema.String),
  providerMetadata: optional(Json.JsonObject)
}).annotate({ identifier: "TextPart" })

/**
 * Reasoning the assistant did: its visible text (thinking or summary), and what its
 * `provider` needs to verify it (`signature`; `redactedData` of Anthropic's
 * `redacted_thinking`; `encryptedContent` of OpenAI reasoning; `id` of a Responses
 * reasoning item).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReasoningPart = Schema.TaggedStruct("reasoning", {
  text: Schema.String,
  provider: optional(Schema.String),
  id: optional(Schema.String),
  signature: optional(Schema.String),
  redactedData: optional(Schema.String),
  encryptedContent: optional(Schema.String)
}).annotate({ identifier: "ReasoningPart" })

/**
 * A tool call the assistant made. `arguments` is the JSON text as the model wrote it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolCallPart = Schema.TaggedStruct("tool_call", {
  id: Schema.String,
  name: Schema.String,
  arguments: Schema.String,
  provider: optional(Schema.String),
  providerMetadata: optional(Json.JsonObject)
}).annotate({ identifier: "ToolCallPart" })

/**
 * An item only its `provider` understands (a hosted tool call and its result, such as
 * a Responses `web_search_call` or an Anthropic `server_tool_use`), sent back to that
 * provider as it is and left out for any other.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ProviderItemPart = Schema.TaggedStruct("provider_item", {
  provider: Schema.String,
  item: Json.JsonObject
}).annotate({ identifier: "ProviderItemPart" })

/**
 * One part of an assistant turn.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AssistantPart = Schema.Union([TextPart, ReasoningPart, ToolCallPart, ProviderItemPart])

/**
 * @since 0.1.0
 * @category models
 */
export type AssistantPart = typeof AssistantPart.Type

/**
 * A turn of the assistant, its parts in the order they came.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AssistantMessage = Schema.TaggedStruct("assistant", { parts: Schema.Array(AssistantPart) }).annotate({
  identifier: "AssistantMessage"
})

/**
 * @since 0.1.0
 * @category models
 */
export type AssistantMessage = typeof AssistantMessage.Type

/**
 * The result of one tool call. `name` is the called tool's (Gemini matches results
 * by name); `isError` marks a failed call.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolResult = Schema.Struct({
  callId: Schema.String,
  name: Schema.String,
  output: Schema.String,
  isError: optional(Schema.Boolean)
}).annotate({ identifier: "ToolResult" })

/**
 * @since 0.1.0
 * @category models
 */
export type ToolResult = typeof ToolResult.Type

/**
 * The results of the tool calls of the assistant turn before it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolMessage = Schema.TaggedStruct("tool", { results: Schema.Array(ToolResult) }).annotate({
  identifier: "ToolMessage"
})

/**
 * One message of the conversation.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Message = Schema.Union([UserMessage, AssistantMessage, ToolMessage])

/**
 * @since 0.1.0
 * @category models
 */
export type Message = typeof Message.Type

/**
 * A tool the model may call: `parameters` is a JSON Schema object.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolDefinition = Schema.Struct({
  name: Schema.String,
  description: optional(Schema.String),
  parameters: Json.JsonObject
}).annotate({ identifier: "ToolDefinition" })

/**
 * @since 0.1.0
 * @category models
 */
export type ToolDefinition = typeof ToolDefinition.Type

/**
 * How much the model should reason: `effort` (OpenAI `reasoning_effort`, Gemini
 * `thinkingLevel`, an Anthropic thinking budget), or an explicit `budgetTokens`
 * (Anthropic `budget_tokens`, Gemini `thinkingBudget`); `summary` asks the Responses
 * API for reasoning summaries (default `auto` when reasoning is set).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Reasoning = Schema.Struct({
  effort: optional(Schema.Literals(["minimal", "low", "medium", "high"])),
  budgetTokens: optional(Schema.Int.check(Schema.isGreaterThan(0))),
  summary: optional(Schema.Literals(["auto", "concise", "detailed"]))
}).annotate({ identifier: "Reasoning" })

/**
 * @since 0.1.0
 * @category models
 */
export type Reasoning = typeof Reasoning.Type

/**
 * The request.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LlmRequest = Schema.Struct({
  model: Schema.NonEmptyString,
  system: optional(Schema.String),
  messages: Schema.Array(Message),
  tools: optional(Schema.Array(ToolDefinition)),
  temperature: optional(Schema.Number.check(Schema.isGreaterThanOrEqualTo(0))),
  maxTokens: optional(Schema.Int.check(Schema.isGreaterThan(0))),
  reasoning: optional(Reasoning)
}).annotate({ identifier: "LlmRequest" })

/**
 * @since 0.1.0
 * @category models
 */
export type LlmRequest = typeof LlmRequest.Type

/**
 * A request of one user prompt.
 *
 * @since 0.1.0
 * @category constructors
 */
export const prompt = (
  model: string,
  text: string,
  options: Omit<LlmRequest, "model" | "messages"> = {}
): LlmRequest => ({ ...options, model, messages: [{ _tag: "user", text }] })

/**
 * Whether a part may go to `provider`: parts that name no provider go anywhere.
 *
 * @since 0.1.0
 * @category guards
 */
export const isFor = (part: { readonly provider?: string | undefined }, provider: string): boolean =>
  part.provider === undefined || part.provider === provider

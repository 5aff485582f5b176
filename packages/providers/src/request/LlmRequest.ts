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
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"

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
 * A tool the model may call: `parameters` is a JSON Schema object. Decoding a tool
 * without `parameters` gives `{}` (docs/generation.md#requests): a tool that takes no
 * arguments need not spell out an empty schema. `tool` builds one the same way.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolDefinition = Schema.Struct({
  name: Schema.String,
  description: optional(Schema.String),
  parameters: Json.JsonObject.pipe(Schema.withDecodingDefaultKey(Effect.succeed({})))
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
 * Which tools the model may or must call: `auto` (the model decides, the providers'
 * default), `none` (no call, the tools still described), `required` (some call), or
 * `{ tool }` (a call of that tool, which `tools` must define). Sent only with tools
 * (docs/providers.md#tool-choice-and-response-format).
 *
 * @since 0.3.0
 * @category schemas
 */
export const ToolChoice = Schema.Union([
  Schema.Literals(["auto", "none", "required"]),
  Schema.Struct({ tool: Schema.NonEmptyString })
]).annotate({ identifier: "ToolChoice" })

/**
 * @since 0.3.0
 * @category models
 */
export type ToolChoice = typeof ToolChoice.Type

/**
 * What the answer's text should be: `text` (the default), or `json`, a JSON value, by
 * `schema` (a JSON Schema object) when given; `name` names the schema where the API asks
 * for one (OpenAI's `json_schema.name`, `response` when absent).
 *
 * @since 0.3.0
 * @category schemas
 */
export const ResponseFormat = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text") }),
  Schema.Struct({
    type: Schema.Literal("json"),
    schema: optional(Json.JsonObject),
    name: optional(Schema.NonEmptyString)
  })
]).annotate({ identifier: "ResponseFormat" })

/**
 * @since 0.3.0
 * @category models
 */
export type ResponseFormat = typeof ResponseFormat.Type

/**
 * The lowest `temperature` a request may ask for: 0.
 *
 * @since 0.3.0
 * @category constants
 */
export const minTemperature = 0

/**
 * The highest `temperature` a request may ask for: 2, for every provider (OpenAI's and
 * Gemini's range; Anthropic's own range ends at 1 and the API refuses more).
 *
 * @since 0.3.0
 * @category constants
 */
export const maxTemperature = 2

/**
 * The request. `temperature` is from 0 to 2, `maxTokens` a positive integer; `streaming`
 * chooses the streaming (default) or the non-streaming request.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LlmRequest = Schema.Struct({
  model: Schema.NonEmptyString,
  system: optional(Schema.String),
  messages: Schema.Array(Message),
  tools: optional(Schema.Array(ToolDefinition)),
  temperature: optional(Schema.Finite.check(Schema.isBetween({ minimum: minTemperature, maximum: maxTemperature }))),
  maxTokens: optional(Schema.Int.check(Schema.isGreaterThan(0))),
  reasoning: optional(Reasoning),
  /** Which tools the model may or must call (`ToolChoice`). Since 0.3.0. */
  toolChoice: optional(ToolChoice),
  /** Text (the default) or JSON, by a schema when given (`ResponseFormat`). Since 0.3.0. */
  responseFormat: optional(ResponseFormat),
  /**
   * The code-execution container to run in (Anthropic's `container`: the id a previous
   * response's `provider_metadata.container` names), so programmatic tool calling
   * continues in the same container; `RoundTrip.continueWith` carries it over. Since 0.3.0.
   */
  container: optional(Schema.String),
  /**
   * `false` sends the provider's non-streaming request (its whole answer as one JSON
   * body) and turns that answer into the same events; absent or `true` streams.
   */
  streaming: optional(Schema.Boolean)
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

/**
 * A request that breaks a rule of `LlmRequest` (docs/generation.md#requests): `field`
 * names the offending field by its path (`temperature`, `tools[1].name`), `message`
 * says what was wrong with it.
 *
 * @since 0.3.0
 * @category errors
 */
export class LlmRequestError extends Schema.TaggedError<LlmRequestError>()("LlmRequestError", {
  field: Schema.String,
  message: Schema.String
}) {}

const pathOf = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, key) => typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`,
    ""
  )

const decodeRequest = SchemaParser.decodeUnknownResult(LlmRequest)
const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * Checks a request (typed or not) against every rule of `LlmRequest` and fills its
 * defaults: a tool without `parameters` gets `{}`. The rules hold for every provider:
 * `temperature` a number from 0 to 2, `maxTokens` a positive integer, a non-empty
 * model, a forced `toolChoice` naming one of `tools`. Fails with a `LlmRequestError`
 * naming the first offending field.
 *
 * @since 0.3.0
 * @category validation
 */
export const validateResult = (request: unknown): Result.Result<LlmRequest, LlmRequestError> => {
  const decoded = decodeRequest(request)
  return Result.isSuccess(decoded) ? crossChecked(decoded.success) : Result.fail(errorOf(decoded.failure))
}

/** The rules between fields: a forced tool must be one of `tools`. */
const crossChecked = (request: LlmRequest): Result.Result<LlmRequest, LlmRequestError> => {
  const choice = request.toolChoice
  if (typeof choice !== "object" || request.tools?.some((tool) => tool.name === choice.tool) === true) {
    return Result.succeed(request)
  }
  const defined = request.tools?.map((tool) => tool.name) ?? []
  return Result.fail(
    new LlmRequestError({
      field: "toolChoice.tool",
      message: `toolChoice.tool: "${choice.tool}" is not one of the request's tools (${
        defined.length === 0 ? "none defined" : defined.join(", ")
      })`
    })
  )
}

const errorOf = (issue: SchemaIssue.Issue): LlmRequestError => {
  const first = formatIssue(issue).issues[0]
  const field = pathOf((first?.path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment))
  const message = first?.message ?? "invalid request"
  return new LlmRequestError({
    field: field === "" ? "request" : field,
    message: field === "temperature"
      ? `temperature must be a number from ${minTemperature} to ${maxTemperature}: ${message}`
      : `${field === "" ? "request" : field}: ${message}`
  })
}

const { messages: _messages, ...optionFields } = LlmRequest.fields
const decodeOptions = SchemaParser.decodeUnknownResult(Schema.Struct(optionFields))

/**
 * `validateResult` for a request already typed as `LlmRequest`: the same rules and
 * defaults for everything but the conversation, which is taken as it is (its parts are
 * typed already, and any value it carries goes to the provider unchanged). What the live
 * client and the generation entry point check before sending.
 *
 * @since 0.3.0
 * @category validation
 */
export const checkResult = (request: LlmRequest): Result.Result<LlmRequest, LlmRequestError> => {
  const { messages, ...options } = request
  const decoded = decodeOptions(options)
  if (Result.isSuccess(decoded)) return crossChecked({ ...decoded.success, messages })
  return Result.fail(errorOf(decoded.failure))
}

/**
 * `validateResult` as an Effect.
 *
 * @since 0.3.0
 * @category validation
 */
export const validate = (request: unknown): Effect.Effect<LlmRequest, LlmRequestError> =>
  Effect.fromResult(validateResult(request))

/**
 * A tool definition; `parameters` defaults to `{}` (no arguments).
 *
 * @since 0.3.0
 * @category constructors
 */
export const tool = (
  name: string,
  options: { readonly description?: string | undefined; readonly parameters?: Json.JsonObject | undefined } = {}
): ToolDefinition => ({
  name,
  ...(options.description === undefined ? {} : { description: options.description }),
  parameters: options.parameters ?? {}
})

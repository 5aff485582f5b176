/**
 * An `LlmRequest` as an OpenAI Chat Completions streaming request:
 * `POST {baseUrl}/chat/completions` with `Authorization: Bearer <key>`, `stream: true`
 * and `stream_options.include_usage` (so the last chunk carries usage). Also the
 * request of OpenAI-compatible servers (`variant` `openai-compatible`: `max_tokens`
 * instead of `max_completion_tokens`, and DeepSeek's `reasoning_content` sent back on
 * assistant turns it came on, or OpenRouter's `reasoning_details`, the entries as they
 * came, signatures and encrypted data byte for byte).
 *
 * Chat Completions has no field for reasoning of its own: OpenAI reasoning is not sent
 * back (use the Responses API for that), nor is any other provider's.
 *
 * @since 0.1.0
 */
import { Json, ToolCallId } from "@sluice/core"
import { describedBy } from "../internal/toolDescription.js"
import type { AssistantMessage, LlmRequest, ResponseFormat, ToolCallPart, ToolChoice } from "../request/LlmRequest.js"
import type { EncodeOptions, WireRequest } from "../request/WireRequest.js"
import { join } from "../request/WireRequest.js"

/**
 * The base URL of the OpenAI SDK: `https://api.openai.com/v1`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBaseUrl = "https://api.openai.com/v1"

/**
 * `openai-chat` (OpenAI itself) or `openai-compatible` (DeepSeek, OpenRouter, vLLM, ...).
 *
 * @since 0.1.0
 * @category models
 */
export type Variant = "openai-chat" | "openai-compatible"

/**
 * A tool call of the history as it goes back: a custom tool's call (`type: "custom"`,
 * its free text from the `{"input": ...}` arguments) when it came from this API as one,
 * else a function call, with the `extra_content` it came with (Gemini's thought
 * signature on its OpenAI-compatible endpoint) when it came from this variant.
 */
const toolCall = (part: typeof ToolCallPart.Type, variant: Variant): Json.JsonObject => {
  const id = ToolCallId.fromHistory(part.id)
  const metadata = part.provider === variant ? part.providerMetadata : undefined
  if (metadata?.type === "custom") {
    const parsed = Json.parseOrUndefined(part.arguments)
    const input = Json.isObject(parsed) && typeof parsed.input === "string" ? parsed.input : part.arguments
    return { id, type: "custom", custom: { name: part.name, input } }
  }
  const extra = metadata?.extra_content
  return {
    id,
    type: "function",
    function: { name: part.name, arguments: part.arguments },
    ...(Json.isObject(extra) ? { extra_content: extra } : {})
  }
}

const assistant = (message: AssistantMessage, variant: Variant): Json.JsonObject | undefined => {
  let content = ""
  let reasoning = ""
  const details: Array<Json.JsonValue> = []
  const calls: Array<Json.JsonObject> = []
  // the id of audio this API spoke in the message: it goes back so the model keeps its voice
  let audio: string | undefined
  for (const part of message.parts) {
    switch (part._tag) {
      case "text": {
        content += part.text
        const spoken = part.provider === variant ? part.providerMetadata?.audio : undefined
        if (Json.isObject(spoken) && typeof spoken.id === "string") audio = spoken.id
        break
      }
      case "reasoning":
        if (variant === "openai-compatible" && part.provider === variant) reasoning += part.text
        break
      case "tool_call":
        calls.push(toolCall(part, variant))
        break
      case "provider_item": {
        const sent = part.item.reasoning_details
        if (
          variant === "openai-compatible" && part.provider === variant && part.item.type === "reasoning_details" &&
          Array.isArray(sent)
        ) details.push(...sent)
        break
      }
    }
  }
  if (content === "" && reasoning === "" && details.length === 0 && calls.length === 0) return undefined
  return {
    role: "assistant",
    content: content === "" && calls.length > 0 ? null : content,
    // OpenRouter takes its details back whole (their text included); DeepSeek its text
    ...(details.length > 0 ? { reasoning_details: details } : reasoning === "" ? {} : { reasoning_content: reasoning }),
    ...(calls.length === 0 ? {} : { tool_calls: calls }),
    ...(audio === undefined ? {} : { audio: { id: audio } })
  }
}

/**
 * The chat `messages` of a request: the system prompt first, then one message per
 * user or assistant message and one `tool` message per tool result.
 *
 * @since 0.1.0
 * @category encoding
 */
export const messages = (request: LlmRequest, variant: Variant = "openai-chat"): Array<Json.JsonObject> => {
  const out: Array<Json.JsonObject> = []
  if (request.system !== undefined) out.push({ role: "system", content: request.system })
  for (const message of request.messages) {
    switch (message._tag) {
      case "user":
        out.push({ role: "user", content: message.text })
        break
      case "assistant": {
        const encoded = assistant(message, variant)
        if (encoded !== undefined) out.push(encoded)
        break
      }
      case "tool":
        for (const result of message.results) {
          out.push({ role: "tool", tool_call_id: ToolCallId.fromHistory(result.callId), content: result.output })
        }
        break
    }
  }
  return out
}

/**
 * A tool choice as Chat Completions' `tool_choice`: the mode as it reads, a forced tool
 * as `{ type: "function", function: { name } }`.
 *
 * @since 0.3.0
 * @category encoding
 */
export const toolChoice = (choice: ToolChoice): Json.JsonValue =>
  typeof choice === "string" ? choice : { type: "function", function: { name: choice.tool } }

/**
 * A response format as Chat Completions' `response_format`: `text`, `json_schema` (with
 * `name`, `response` when the request gives none) for JSON by a schema, `json_object`
 * for JSON without one.
 *
 * @since 0.3.0
 * @category encoding
 */
export const responseFormat = (format: ResponseFormat): Json.JsonObject =>
  format.type === "text"
    ? { type: "text" }
    : format.schema === undefined
    ? { type: "json_object" }
    : { type: "json_schema", json_schema: { name: format.name ?? "response", schema: format.schema } }

/**
 * The streaming request.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (request: LlmRequest, options: EncodeOptions, variant: Variant = "openai-chat"): WireRequest => ({
  url: join(options.baseUrl, "chat/completions"),
  headers: {
    authorization: `Bearer ${options.apiKey}`,
    "content-type": "application/json",
    accept: "text/event-stream"
  },
  body: {
    model: request.model,
    messages: messages(request, variant),
    ...(request.tools === undefined || request.tools.length === 0
      ? {}
      : {
        tools: request.tools.map((tool) => ({
          type: "function",
          function: {
            name: tool.name,
            ...describedBy(tool),
            parameters: tool.parameters
          }
        })),
        ...(request.toolChoice === undefined ? {} : { tool_choice: toolChoice(request.toolChoice) })
      }),
    ...(request.responseFormat === undefined ? {} : { response_format: responseFormat(request.responseFormat) }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.maxTokens === undefined
      ? {}
      : variant === "openai-chat"
      ? { max_completion_tokens: request.maxTokens }
      : { max_tokens: request.maxTokens }),
    ...(request.reasoning?.effort === undefined ? {} : { reasoning_effort: request.reasoning.effort }),
    stream: true,
    stream_options: { include_usage: true }
  }
})

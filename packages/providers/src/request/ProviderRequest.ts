/**
 * Every wire API's streaming request by provider name: the encoder, the default base
 * URL, and the environment variables that hold the API keys and override the base
 * URL.
 *
 * | provider | keys | base URL variable | default base URL |
 * |---|---|---|---|
 * | `openai-chat`, `openai-responses`, `openai-compatible` | `OPENAI_API_KEY` | `OPENAI_BASE_URL` | `https://api.openai.com/v1` |
 * | `anthropic` | `ANTHROPIC_API_KEY` | `ANTHROPIC_BASE_URL` | `https://api.anthropic.com` |
 * | `gemini` | `GEMINI_API_KEY` | `GEMINI_BASE_URL` | `https://generativelanguage.googleapis.com/v1beta` |
 *
 * A request with `streaming: false` is encoded as the provider's non-streaming request
 * (docs/generation.md#non-streaming-requests): the same body without `stream` (and
 * `stream_options`), `accept: application/json`, and Gemini's `:generateContent`
 * instead of `:streamGenerateContent?alt=sse`. Every encoding gives a tool without
 * `parameters` the empty schema `{}`; `encodeChecked` also checks the request's rules
 * (`LlmRequest.validateResult`: temperature from 0 to 2, ...) first.
 *
 * @since 0.1.0
 */
import type { Json } from "@sluice/core"
import * as Result from "effect/Result"
import * as AnthropicRequest from "../anthropic/AnthropicRequest.js"
import * as GeminiRequest from "../gemini/GeminiRequest.js"
import type { LlmRequest, LlmRequestError } from "./LlmRequest.js"
import { validateResult } from "./LlmRequest.js"
import * as OpenAiChatRequest from "../openai-chat/OpenAiChatRequest.js"
import * as OpenAiResponsesRequest from "../openai-responses/OpenAiResponsesRequest.js"
import type { ProviderName } from "../ProviderName.js"
import type { EncodeOptions, WireRequest } from "./WireRequest.js"

/**
 * The provider's request: the streaming one, or the non-streaming one when
 * `request.streaming === false`.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (provider: ProviderName, given: LlmRequest, options: EncodeOptions): WireRequest => {
  const request = withToolDefaults(given)
  const wire = encodeStreaming(provider, request, options)
  return request.streaming === false ? nonStreaming(wire) : wire
}

/**
 * The provider's request after `LlmRequest.validateResult` accepted `request` (a typed
 * value or not): a `LlmRequestError` naming the field otherwise.
 *
 * @since 0.3.0
 * @category encoding
 */
export const encodeChecked = (
  provider: ProviderName,
  request: unknown,
  options: EncodeOptions
): Result.Result<WireRequest, LlmRequestError> =>
  Result.map(validateResult(request), (valid) => encode(provider, valid, options))

/**
 * Whether a request asks for the non-streaming form (`streaming: false`).
 *
 * @since 0.3.0
 * @category predicates
 */
export const isNonStreaming = (request: LlmRequest): boolean => request.streaming === false

/** Every tool with a `parameters` schema, `{}` when a caller left it out. */
const withToolDefaults = (request: LlmRequest): LlmRequest => {
  const tools = request.tools
  // `parameters` is required by the type, but a caller outside TypeScript may omit it
  if (tools === undefined || tools.every((tool) => (tool.parameters as Json.JsonObject | undefined) !== undefined)) {
    return request
  }
  return {
    ...request,
    tools: tools.map((tool) => ({ ...tool, parameters: (tool.parameters as Json.JsonObject | undefined) ?? {} }))
  }
}

/** A streaming request made non-streaming: no `stream` / `stream_options`, JSON back. */
const nonStreaming = (wire: WireRequest): WireRequest => {
  const { stream: _stream, stream_options: _options, ...body } = wire.body
  return { url: wire.url, headers: { ...wire.headers, accept: "application/json" }, body }
}

const encodeStreaming = (provider: ProviderName, request: LlmRequest, options: EncodeOptions): WireRequest => {
  switch (provider) {
    case "openai-chat":
    case "openai-compatible":
      return OpenAiChatRequest.encode(request, options, provider)
    case "openai-responses":
      return OpenAiResponsesRequest.encode(request, options)
    case "anthropic":
      return AnthropicRequest.encode(request, options)
    case "gemini":
      return GeminiRequest.encode(request, options)
  }
}

/**
 * The base URL the provider's official SDK uses by default.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBaseUrl = (provider: ProviderName): string => {
  switch (provider) {
    case "openai-chat":
    case "openai-compatible":
    case "openai-responses":
      return OpenAiChatRequest.defaultBaseUrl
    case "anthropic":
      return AnthropicRequest.defaultBaseUrl
    case "gemini":
      return GeminiRequest.defaultBaseUrl
  }
}

const family = (provider: ProviderName): "OPENAI" | "ANTHROPIC" | "GEMINI" =>
  provider === "anthropic" ? "ANTHROPIC" : provider === "gemini" ? "GEMINI" : "OPENAI"

/**
 * The environment variable with the provider's API keys (a comma-separated list).
 *
 * @since 0.1.0
 * @category constants
 */
export const apiKeyVariable = (provider: ProviderName): string => `${family(provider)}_API_KEY`

/**
 * The environment variable that overrides the provider's base URL.
 *
 * @since 0.1.0
 * @category constants
 */
export const baseUrlVariable = (provider: ProviderName): string => `${family(provider)}_BASE_URL`

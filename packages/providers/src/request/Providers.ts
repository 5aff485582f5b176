/**
 * Every wire API by provider name, in one registry: its streaming normalizer (from SSE
 * events, or from the body's bytes with the framing in the same step), its
 * non-streaming decoder, its request encoder, its default base URL and the environment
 * variables that hold its API keys and override that base URL.
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
import * as Anthropic from "../anthropic/Anthropic.js"
import * as AnthropicRequest from "../anthropic/AnthropicRequest.js"
import * as Gemini from "../gemini/Gemini.js"
import * as GeminiRequest from "../gemini/GeminiRequest.js"
import type { DecodeSse, Normalize, NormalizeResponse } from "../Normalizer.js"
import * as OpenAiChat from "../openai-chat/OpenAiChat.js"
import * as OpenAiChatRequest from "../openai-chat/OpenAiChatRequest.js"
import * as OpenAiResponses from "../openai-responses/OpenAiResponses.js"
import * as OpenAiResponsesRequest from "../openai-responses/OpenAiResponsesRequest.js"
import type { ProviderName } from "../ProviderName.js"
import type { LlmRequest, LlmRequestError } from "./LlmRequest.js"
import { validateResult } from "./LlmRequest.js"
import type { EncodeOptions, WireRequest } from "./WireRequest.js"

/**
 * One wire API.
 *
 * @since 0.1.0
 * @category models
 */
export interface Provider {
  readonly name: ProviderName
  readonly normalize: Normalize
  /** `normalize` with the SSE framing in the same step (since 0.3.0). */
  readonly decodeSse: DecodeSse
  readonly normalizeResponse: NormalizeResponse
  /**
   * The wire API's own streaming request for `request`, as given (no tool defaults, no
   * non-streaming form: `encode` adds those) (since 0.3.0).
   */
  readonly encodeStreaming: (request: LlmRequest, options: EncodeOptions) => WireRequest
  /** The base URL the provider's official SDK uses by default (since 0.3.0). */
  readonly defaultBaseUrl: string
  /** The environment variable with the API keys, a comma-separated list (since 0.3.0). */
  readonly apiKeyVariable: string
  /** The environment variable that overrides the base URL (since 0.3.0). */
  readonly baseUrlVariable: string
}

const openAi = { apiKeyVariable: "OPENAI_API_KEY", baseUrlVariable: "OPENAI_BASE_URL" } as const

const providers: { readonly [K in ProviderName]: Provider } = {
  "openai-chat": {
    name: "openai-chat",
    normalize: OpenAiChat.normalize,
    decodeSse: OpenAiChat.decodeSse,
    normalizeResponse: OpenAiChat.normalizeResponse,
    encodeStreaming: (request, options) => OpenAiChatRequest.encode(request, options, "openai-chat"),
    defaultBaseUrl: OpenAiChatRequest.defaultBaseUrl,
    ...openAi
  },
  "openai-compatible": {
    name: "openai-compatible",
    normalize: OpenAiChat.normalizeCompatible,
    decodeSse: OpenAiChat.decodeSseCompatible,
    normalizeResponse: OpenAiChat.normalizeCompatibleResponse,
    encodeStreaming: (request, options) => OpenAiChatRequest.encode(request, options, "openai-compatible"),
    defaultBaseUrl: OpenAiChatRequest.defaultBaseUrl,
    ...openAi
  },
  "openai-responses": {
    name: "openai-responses",
    normalize: OpenAiResponses.normalize,
    decodeSse: OpenAiResponses.decodeSse,
    normalizeResponse: OpenAiResponses.normalizeResponse,
    encodeStreaming: OpenAiResponsesRequest.encode,
    defaultBaseUrl: OpenAiResponsesRequest.defaultBaseUrl,
    ...openAi
  },
  anthropic: {
    name: "anthropic",
    normalize: Anthropic.normalize,
    decodeSse: Anthropic.decodeSse,
    normalizeResponse: Anthropic.normalizeResponse,
    encodeStreaming: AnthropicRequest.encode,
    defaultBaseUrl: AnthropicRequest.defaultBaseUrl,
    apiKeyVariable: "ANTHROPIC_API_KEY",
    baseUrlVariable: "ANTHROPIC_BASE_URL"
  },
  gemini: {
    name: "gemini",
    normalize: Gemini.normalize,
    decodeSse: Gemini.decodeSse,
    normalizeResponse: Gemini.normalizeResponse,
    encodeStreaming: GeminiRequest.encode,
    defaultBaseUrl: GeminiRequest.defaultBaseUrl,
    apiKeyVariable: "GEMINI_API_KEY",
    baseUrlVariable: "GEMINI_BASE_URL"
  }
}

/**
 * The wire API of the given name.
 *
 * @since 0.1.0
 * @category accessors
 */
export const get = (name: ProviderName): Provider => providers[name]

/**
 * All wire APIs.
 *
 * @since 0.1.0
 * @category accessors
 */
export const all: ReadonlyArray<Provider> = Object.values(providers)

/**
 * The provider's request: the streaming one, or the non-streaming one when
 * `request.streaming === false`.
 *
 * @since 0.3.0
 * @category encoding
 */
export const encode = (provider: ProviderName, given: LlmRequest, options: EncodeOptions): WireRequest => {
  const request = withToolDefaults(given)
  const wire = providers[provider].encodeStreaming(request, options)
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

/**
 * The base URL the provider's official SDK uses by default.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultBaseUrl = (provider: ProviderName): string => providers[provider].defaultBaseUrl

/**
 * The environment variable with the provider's API keys (a comma-separated list).
 *
 * @since 0.3.0
 * @category constants
 */
export const apiKeyVariable = (provider: ProviderName): string => providers[provider].apiKeyVariable

/**
 * The environment variable that overrides the provider's base URL.
 *
 * @since 0.3.0
 * @category constants
 */
export const baseUrlVariable = (provider: ProviderName): string => providers[provider].baseUrlVariable

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
 * @since 0.1.0
 */
import * as AnthropicRequest from "./AnthropicRequest.js"
import * as GeminiRequest from "./GeminiRequest.js"
import type { LlmRequest } from "./LlmRequest.js"
import * as OpenAiChatRequest from "./OpenAiChatRequest.js"
import * as OpenAiResponsesRequest from "./OpenAiResponsesRequest.js"
import type { ProviderName } from "./ProviderName.js"
import type { EncodeOptions, WireRequest } from "./WireRequest.js"

/**
 * The provider's streaming request.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (provider: ProviderName, request: LlmRequest, options: EncodeOptions): WireRequest => {
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

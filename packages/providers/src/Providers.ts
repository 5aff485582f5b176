/**
 * Every wire API by name: its streaming normalizer and its non-streaming decoder.
 *
 * @since 0.1.0
 */
import * as Anthropic from "./Anthropic.js"
import * as Gemini from "./Gemini.js"
import type { Normalize, NormalizeResponse } from "./Normalizer.js"
import * as OpenAiChat from "./OpenAiChat.js"
import * as OpenAiResponses from "./OpenAiResponses.js"
import type { ProviderName } from "./ProviderName.js"

/**
 * One wire API.
 *
 * @since 0.1.0
 * @category models
 */
export interface Provider {
  readonly name: ProviderName
  readonly normalize: Normalize
  readonly normalizeResponse: NormalizeResponse
}

const providers: { readonly [K in ProviderName]: Provider } = {
  "openai-chat": {
    name: "openai-chat",
    normalize: OpenAiChat.normalize,
    normalizeResponse: OpenAiChat.normalizeResponse
  },
  "openai-compatible": {
    name: "openai-compatible",
    normalize: OpenAiChat.normalizeCompatible,
    normalizeResponse: OpenAiChat.normalizeCompatibleResponse
  },
  "openai-responses": {
    name: "openai-responses",
    normalize: OpenAiResponses.normalize,
    normalizeResponse: OpenAiResponses.normalizeResponse
  },
  anthropic: { name: "anthropic", normalize: Anthropic.normalize, normalizeResponse: Anthropic.normalizeResponse },
  gemini: { name: "gemini", normalize: Gemini.normalize, normalizeResponse: Gemini.normalizeResponse }
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

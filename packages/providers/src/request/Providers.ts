/**
 * Every wire API by name: its streaming normalizer (from SSE events, or from the body's
 * bytes with the framing in the same step) and its non-streaming decoder.
 *
 * @since 0.1.0
 */
import * as Anthropic from "../anthropic/Anthropic.js"
import * as Gemini from "../gemini/Gemini.js"
import type { DecodeSse, Normalize, NormalizeResponse } from "../Normalizer.js"
import * as OpenAiChat from "../openai-chat/OpenAiChat.js"
import * as OpenAiResponses from "../openai-responses/OpenAiResponses.js"
import type { ProviderName } from "../ProviderName.js"

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
}

const providers: { readonly [K in ProviderName]: Provider } = {
  "openai-chat": {
    name: "openai-chat",
    normalize: OpenAiChat.normalize,
    decodeSse: OpenAiChat.decodeSse,
    normalizeResponse: OpenAiChat.normalizeResponse
  },
  "openai-compatible": {
    name: "openai-compatible",
    normalize: OpenAiChat.normalizeCompatible,
    decodeSse: OpenAiChat.decodeSseCompatible,
    normalizeResponse: OpenAiChat.normalizeCompatibleResponse
  },
  "openai-responses": {
    name: "openai-responses",
    normalize: OpenAiResponses.normalize,
    decodeSse: OpenAiResponses.decodeSse,
    normalizeResponse: OpenAiResponses.normalizeResponse
  },
  anthropic: {
    name: "anthropic",
    normalize: Anthropic.normalize,
    decodeSse: Anthropic.decodeSse,
    normalizeResponse: Anthropic.normalizeResponse
  },
  gemini: {
    name: "gemini",
    normalize: Gemini.normalize,
    decodeSse: Gemini.decodeSse,
    normalizeResponse: Gemini.normalizeResponse
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

/**
 * `@sluice/providers`: every supported provider's wire format into the hub StreamEvent
 * vocabulary, streaming and non-streaming, with error classification and the rules of
 * tool-call reassembly.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as Anthropic from "./anthropic/Anthropic.js"

/**
 * @since 0.1.0
 */
export * as ErrorClassification from "./ErrorClassification.js"

/**
 * @since 0.1.0
 */
export * as Citations from "./Citations.js"

/**
 * @since 0.1.0
 */
export * as Gemini from "./gemini/Gemini.js"

/**
 * @since 0.1.0
 */
export * as Normalizer from "./Normalizer.js"

/**
 * @since 0.1.0
 */
export * as OpenAiChat from "./openai-chat/OpenAiChat.js"

/**
 * @since 0.1.0
 */
export * as OpenAiResponses from "./openai-responses/OpenAiResponses.js"

/**
 * @since 0.1.0
 */
export * as ProviderName from "./ProviderName.js"

/**
 * @since 0.1.0
 */
export * as Providers from "./request/Providers.js"

/**
 * @since 0.3.0
 */
export * as ToolCalls from "./ToolCalls.js"

/**
 * @since 0.1.0
 */
export * as WireDecodeError from "./WireDecodeError.js"

/**
 * @since 0.1.0
 */
export * as AnthropicRequest from "./anthropic/AnthropicRequest.js"

/**
 * @since 0.1.0
 */
export * as GeminiRequest from "./gemini/GeminiRequest.js"

/**
 * @since 0.1.0
 */
export * as LiveRetry from "./live/LiveRetry.js"

/**
 * @since 0.1.0
 */
export * as LlmRequest from "./request/LlmRequest.js"

/**
 * @since 0.1.0
 */
export * as OpenAiChatRequest from "./openai-chat/OpenAiChatRequest.js"

/**
 * @since 0.1.0
 */
export * as OpenAiResponsesRequest from "./openai-responses/OpenAiResponsesRequest.js"

/**
 * @since 0.1.0
 */
export * as ProviderClient from "./live/ProviderClient.js"

/**
 * @since 0.3.0
 */
export * as ProviderHttp from "./live/ProviderHttp.js"

/**
 * @since 0.1.0
 */
export * as RoundTrip from "./request/RoundTrip.js"

/**
 * @since 0.1.0
 */
export * as WireRequest from "./request/WireRequest.js"

/**
 * @since 0.1.0
 */
export * as TranscriptFormat from "./TranscriptFormat.js"

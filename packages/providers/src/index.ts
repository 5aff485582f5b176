/**
 * `@sluice/providers`: every supported provider's wire format into the hub StreamEvent
 * vocabulary, streaming and non-streaming, with error classification and tool-call
 * accumulation.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as Anthropic from "./Anthropic.js"

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
export * as Gemini from "./Gemini.js"

/**
 * @since 0.1.0
 */
export * as Normalizer from "./Normalizer.js"

/**
 * @since 0.1.0
 */
export * as OpenAiChat from "./OpenAiChat.js"

/**
 * @since 0.1.0
 */
export * as OpenAiResponses from "./OpenAiResponses.js"

/**
 * @since 0.1.0
 */
export * as ProviderName from "./ProviderName.js"

/**
 * @since 0.1.0
 */
export * as Providers from "./Providers.js"

/**
 * @since 0.1.0
 */
export * as ToolCallAccumulator from "./ToolCallAccumulator.js"

/**
 * @since 0.1.0
 */
export * as WireDecodeError from "./WireDecodeError.js"

/**
 * @since 0.1.0
 */
export * as AnthropicRequest from "./AnthropicRequest.js"

/**
 * @since 0.1.0
 */
export * as GeminiRequest from "./GeminiRequest.js"

/**
 * @since 0.1.0
 */
export * as LiveRetry from "./LiveRetry.js"

/**
 * @since 0.1.0
 */
export * as LlmRequest from "./LlmRequest.js"

/**
 * @since 0.1.0
 */
export * as OpenAiChatRequest from "./OpenAiChatRequest.js"

/**
 * @since 0.1.0
 */
export * as OpenAiResponsesRequest from "./OpenAiResponsesRequest.js"

/**
 * @since 0.1.0
 */
export * as ProviderClient from "./ProviderClient.js"

/**
 * @since 0.1.0
 */
export * as ProviderRequest from "./ProviderRequest.js"

/**
 * @since 0.1.0
 */
export * as RoundTrip from "./RoundTrip.js"

/**
 * @since 0.1.0
 */
export * as WireRequest from "./WireRequest.js"

/**
 * @since 0.1.0
 */
export * as TranscriptFormat from "./TranscriptFormat.js"

/**
 * @since 0.3.0
 */
export * as ErrorDescription from "./ErrorDescription.js"

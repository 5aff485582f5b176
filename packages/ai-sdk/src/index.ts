/**
 * `@sluice/ai-sdk`: Vercel AI SDK streams into Sluice StreamEvents.
 *
 * @since 0.1.0
 */

/**
 * @since 0.3.0
 */
export * as AiSdkGeneration from "./AiSdkGeneration.js"

/**
 * @since 0.1.0
 */
export * as AiSdkPartError from "./AiSdkPartError.js"

/**
 * @since 0.1.0
 */
export * as AiSdkStream from "./AiSdkStream.js"

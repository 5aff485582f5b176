/**
 * `@sluice/effect-ai`: `effect/ai` response streams into Sluice StreamEvents.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as EffectAiStream from "./EffectAiStream.js"

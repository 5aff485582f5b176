/**
 * `@sluice/effect-ai`: `effect/ai` response streams into Sluice StreamEvents, and
 * Sluice's provider clients as `effect/ai`'s `LanguageModel`.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as EffectAiStream from "./EffectAiStream.js"

/**
 * @since 0.3.0
 */
export * as SluiceLanguageModel from "./SluiceLanguageModel.js"

/**
 * The wire APIs Sluice reads.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * `openai-chat | openai-compatible | openai-responses | anthropic | gemini`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ProviderName = Schema.Literals([
  "openai-chat",
  "openai-compatible",
  "openai-responses",
  "anthropic",
  "gemini"
])

/**
 * @since 0.1.0
 * @category models
 */
export type ProviderName = typeof ProviderName.Type

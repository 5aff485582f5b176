/**
 * Token estimates for batching decisions.
 *
 * @since 0.1.0
 */

/**
 * Estimated token count of a number of characters: length divided by 4 (docs/upserts.md),
 * rounded up so that any non-empty text counts at least one token.
 *
 * @since 0.1.0
 * @category estimates
 */
export const tokensForLength = (length: number): number => Math.ceil(length / 4)

/**
 * Estimated token count of a text (docs/upserts.md's `estimateTokenCount`).
 *
 * @since 0.1.0
 * @category estimates
 */
export const estimateTokenCount = (text: string): number => tokensForLength(text.length)

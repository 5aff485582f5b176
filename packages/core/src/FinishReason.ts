/**
 * Why a turn stopped generating.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * `stop | length | tool-calls | content-filter | error | other`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FinishReason = Schema.Literals(["stop", "length", "tool-calls", "content-filter", "error", "other"])
  .annotate({
    identifier: "FinishReason"
  })

/**
 * @since 0.1.0
 * @category models
 */
export type FinishReason = typeof FinishReason.Type

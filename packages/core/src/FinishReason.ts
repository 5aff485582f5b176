/**
 * Why a turn stopped generating.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * `stop | length | tool-calls | content-filter | error | paused | other`.
 *
 * `paused` (since 0.2.0): the provider paused the turn before it was done (Anthropic
 * `stop_reason: "pause_turn"`, a long server-tool run) and the caller must continue it:
 * send the response back as the last assistant message of the next request, unchanged,
 * and the provider picks the turn up where it stopped.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FinishReason = Schema.Literals([
  "stop",
  "length",
  "tool-calls",
  "content-filter",
  "error",
  "paused",
  "other"
])
  .annotate({
    identifier: "FinishReason"
  })

/**
 * @since 0.1.0
 * @category models
 */
export type FinishReason = typeof FinishReason.Type

/**
 * Why a turn stopped before its events ended it: `aborted` (the process was told to
 * stop: SIGINT, SIGTERM, an interrupted fiber), `cancelled` (someone asked for it:
 * `TurnPipeline.cancel`, the server's cancel endpoint) or `producer_lost` (the turn's
 * lease lapsed while this process was paused, so others may have ended it).
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.3.0
 * @category schemas
 */
export const StopReason = Schema.Literals(["aborted", "cancelled", "producer_lost"]).annotate({
  identifier: "StopReason"
})

/**
 * @since 0.3.0
 * @category models
 */
export type StopReason = typeof StopReason.Type

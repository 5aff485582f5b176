/**
 * The last entry of a turn, defined once for every writer and reader (docs/redis.md#the-last-entry).
 *
 * | stream | last entry | what may come just before it |
 * |---|---|---|
 * | Stream A (StreamEvents) | `response_done` | `response_error` (a failed turn: then `response_done` has status `error`) |
 * | Stream B (UI payloads) | the turn event `turn_completed` | the turn event `turn_error` (a failed turn: then `turn_completed` has status `error` and the usage) |
 *
 * An error entry never ends a turn: a reader that stops at `response_error` or
 * `turn_error` misses the `response_done` / `turn_completed` after it, and with it the
 * turn's usage. Nothing is ever written after the last entry.
 *
 * The module has no run-time dependency (not even `effect`), so a browser client can
 * import it (`@sluice/core/LastEntry`) without pulling in the schemas.
 *
 * @since 0.3.0
 */
import type { StreamEvent } from "./StreamEvent.js"

/**
 * The `type` of the StreamEvent that ends a turn's Stream A.
 *
 * @since 0.3.0
 * @category constants
 */
export const lastEventType = "response_done" as const

/**
 * The `type` of the turn event that ends a turn's Stream B.
 *
 * @since 0.3.0
 * @category constants
 */
export const lastTurnEventType = "turn_completed" as const

/**
 * The `payloadType` of a Stream B entry that holds a turn event.
 *
 * @since 0.3.0
 * @category constants
 */
export const turnEventPayloadType = "turn_event" as const

/**
 * Whether a StreamEvent payload ends its turn (`response_done`).
 *
 * @since 0.3.0
 * @category predicates
 */
export const isLastPayload = (payload: { readonly type: string }): boolean => payload.type === lastEventType

/**
 * Whether a StreamEvent is the last event of its turn (`response_done`).
 *
 * @since 0.3.0
 * @category predicates
 */
export const isLastEvent = (event: Pick<StreamEvent, "payload">): boolean => isLastPayload(event.payload)

/**
 * Whether a UI payload (an upsert or a turn event, decoded) is the last of its turn
 * (`turn_completed`).
 *
 * @since 0.3.0
 * @category predicates
 */
export const isLastTurnEvent = (payload: { readonly type: string }): boolean => payload.type === lastTurnEventType

/**
 * Whether a Stream A entry, given its `payloadType` field, ends its turn.
 *
 * @since 0.3.0
 * @category predicates
 */
export const isLastStreamAEntry = (payloadType: string | undefined): boolean => payloadType === lastEventType

const typeOf = (payload: string): unknown => {
  try {
    const parsed: unknown = JSON.parse(payload)
    return typeof parsed === "object" && parsed !== null && "type" in parsed ? parsed.type : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether a Stream B entry, given its `payloadType` and `payload` fields, ends its
 * turn: a `turn_event` whose payload is a `turn_completed`.
 *
 * @since 0.3.0
 * @category predicates
 */
export const isLastStreamBEntry = (payloadType: string | undefined, payload: string | undefined): boolean => {
  if (payloadType !== turnEventPayloadType || payload === undefined) return false
  // only a payload that names the type is parsed: most turn events are not the last
  return payload.includes(lastTurnEventType) && typeOf(payload) === lastTurnEventType
}

/**
 * Whether an entry of either stream ends its turn, given its `payloadType` and
 * `payload` fields. The two streams' payload types never overlap (Stream B's are
 * `item_upsert` and `turn_event`), so one predicate serves both.
 *
 * @since 0.3.0
 * @category predicates
 */
export const isLastEntry = (payloadType: string | undefined, payload: string | undefined): boolean =>
  isLastStreamAEntry(payloadType) || isLastStreamBEntry(payloadType, payload)

/**
 * Whether an entry of either stream is the error that may come just before the last
 * entry of a failed turn (`response_error` in Stream A, a `turn_error` turn event in
 * Stream B). It does not end the turn.
 *
 * @since 0.3.0
 * @category predicates
 */
export const isErrorEntry = (payloadType: string | undefined, payload: string | undefined): boolean =>
  payloadType === "response_error" ||
  (payloadType === turnEventPayloadType && payload !== undefined && payload.includes("turn_error") &&
    typeOf(payload) === "turn_error")

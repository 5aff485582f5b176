/**
 * What the client reads from the turn API, typed from `@sluice/core`'s schemas by
 * type-only imports (they cost nothing at run time), and the small hand-written checks
 * that hold a body to those types before the client trusts it.
 *
 * @since 0.3.0
 */
import type { StreamEvent, UITurnEvent, UIUpsert } from "@sluice/core"

/**
 * An item's full state so far: core's `UIUpsert`.
 *
 * @since 0.1.0
 * @category models
 */
export type Upsert = UIUpsert.UIUpsert

/**
 * A turn event: core's `UITurnEvent` (`turn_started`, `turn_completed`, `turn_error`).
 *
 * @since 0.1.0
 * @category models
 */
export type TurnEvent = UITurnEvent.UITurnEvent

/**
 * Token counts of a finished turn: core's `UITurnEventUsage`.
 *
 * @since 0.1.0
 * @category models
 */
export type Usage = UITurnEvent.UITurnEventUsage

/**
 * The error a turn ended with: core's `UITurnEventError`.
 *
 * @since 0.1.0
 * @category models
 */
export type TurnError = UITurnEvent.UITurnEventError

/**
 * `streaming` until the turn ends, then how it ended (core's `ResponseStatus`).
 *
 * @since 0.1.0
 * @category models
 */
export type TurnStatus = "streaming" | StreamEvent.ResponseStatus

/**
 * `GET /v1/turns/:turnId`: the server's `TurnSnapshot` (the server's tests hold the two
 * types together).
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  readonly turnId: string
  readonly threadId?: string
  readonly modelId?: string
  readonly providerId?: string
  readonly status: TurnStatus
  readonly usage?: Usage
  readonly error?: TurnError
  readonly items: ReadonlyArray<Upsert>
  readonly lastEventId: string
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

// The values of core's literal types, as run-time sets (nothing of core is bundled): a
// record keyed by the type, so the compiler wants every value of it and no other, and a
// value added to core's schema fails here until it is added.
const valuesOf = (record: Readonly<Record<string, true>>): ReadonlySet<unknown> => new Set(Object.keys(record))
const itemTypes = valuesOf(
  {
    message: true,
    reasoning: true,
    tool_call: true,
    tool_output: true,
    error: true,
    compaction: true,
    approval_request: true
  } satisfies Record<Upsert["itemType"], true>
)
const changeTypes = valuesOf(
  { created: true, updated: true, completed: true } satisfies Record<Upsert["changeType"], true>
)
const statuses = valuesOf(
  { streaming: true, complete: true, error: true, aborted: true, cancelled: true } satisfies Record<TurnStatus, true>
)

/**
 * Whether a parsed value is an upsert: the fields the client relies on are checked.
 *
 * @since 0.1.0
 * @category guards
 */
export const isUpsert = (value: unknown): value is Upsert =>
  isObject(value) && value["type"] === "item_upsert" && typeof value["itemId"] === "string" &&
  itemTypes.has(value["itemType"]) && changeTypes.has(value["changeType"]) && typeof value["content"] === "string"

const isUsage = (value: unknown): value is Usage =>
  isObject(value) && typeof value["promptTokens"] === "number" && typeof value["completionTokens"] === "number" &&
  typeof value["totalTokens"] === "number"

const isError = (value: unknown): value is TurnError =>
  isObject(value) && typeof value["code"] === "string" && typeof value["message"] === "string"

/**
 * Whether a parsed value is a turn event.
 *
 * @since 0.1.0
 * @category guards
 */
export const isTurnEvent = (value: unknown): value is TurnEvent => {
  if (!isObject(value)) return false
  switch (value["type"]) {
    case "turn_started":
      return true
    case "turn_completed":
      return statuses.has(value["status"]) && value["status"] !== "streaming" &&
        (value["usage"] === undefined || isUsage(value["usage"]))
    case "turn_error":
      return isError(value["error"])
    default:
      return false
  }
}

/**
 * Whether a parsed body is a snapshot.
 *
 * @since 0.1.0
 * @category guards
 */
export const isSnapshot = (value: unknown): value is Snapshot =>
  isObject(value) && typeof value["turnId"] === "string" && statuses.has(value["status"]) &&
  Array.isArray(value["items"]) && value["items"].every(isUpsert) && typeof value["lastEventId"] === "string" &&
  (value["usage"] === undefined || isUsage(value["usage"])) && (value["error"] === undefined || isError(value["error"]))

/**
 * A turn of `GET /v1/turns` (the server's `TurnSummary`): its id and start, and, when
 * the server knows them, its provider and model, its status, when it ended, how long
 * it took and how soon it gave its first output (ms from its first entry).
 *
 * @since 0.3.0
 * @category models
 */
export interface TurnListEntry {
  readonly turnId: string
  readonly startedAt: number
  readonly providerId?: string
  readonly modelId?: string
  readonly status?: TurnStatus
  readonly endedAt?: number
  readonly durationMs?: number
  readonly firstOutputMs?: number
}

/**
 * `GET /v1/turns`: recent turns, newest first.
 *
 * @since 0.3.0
 * @category models
 */
export interface TurnList {
  readonly turns: ReadonlyArray<TurnListEntry>
}

/**
 * Whether a parsed body is the list of turns.
 *
 * @since 0.3.0
 * @category guards
 */
export const isTurnList = (value: unknown): value is TurnList =>
  isObject(value) && Array.isArray(value["turns"]) &&
  value["turns"].every((turn) =>
    isObject(turn) && typeof turn["turnId"] === "string" && typeof turn["startedAt"] === "number" &&
    (turn["status"] === undefined || statuses.has(turn["status"]))
  )

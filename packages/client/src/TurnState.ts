/**
 * The state of a followed turn and its fold: the snapshot first, then each upsert and
 * turn event of the live feed. Every change makes a new state object and leaves the old
 * one as it was, so a state can be compared by reference (React's
 * `useSyncExternalStore` re-renders exactly when it changes).
 *
 * @since 0.1.0
 */
import type { LastEntry } from "@sluice/core"
import type { ClientError } from "./ClientError.js"
import type { Snapshot, TurnError, TurnEvent, TurnStatus, Upsert, Usage } from "./Wire.js"

// core's `LastEntry.lastTurnEventType`, held to it by the type (nothing of core is bundled)
const lastTurnEventType: typeof LastEntry.lastTurnEventType = "turn_completed"

/**
 * Where the connection to the server stands:
 *
 * - `loading`: reading the snapshot;
 * - `live`: the feed is open;
 * - `reconnecting`: the feed dropped (or could not be opened) and is opened again
 *   after a backoff, from the last event seen;
 * - `finished`: the turn has ended and every event of it is in the state;
 * - `failed`: following stopped on an error that retrying will not mend (`lastError`);
 * - `closed`: the caller stopped following (`close()` or its abort signal).
 *
 * @since 0.1.0
 * @category models
 */
export type Connection = "loading" | "live" | "reconnecting" | "finished" | "failed" | "closed"

/**
 * A turn as the client knows it.
 *
 * - `items`: each item's latest full state (its upsert), in the order the items first
 *   appeared;
 * - `status`, `usage`, `error`: how the turn stands or ended (`status` is `error` from
 *   a failed turn's `turn_error` on, before its `turn_completed`);
 * - `ended`: whether the turn's last entry (`turn_completed`, core's `LastEntry`) is in
 *   the state: a failed turn's `turn_error` is followed by `turn_completed` with the
 *   usage, and following stops only after it;
 * - `lastEventId`: the last entry applied (`undefined` before the snapshot), from which
 *   the feed resumes;
 * - `connection`, `lastError`: how following goes, and the last error met.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnState {
  readonly turnId: string
  readonly threadId?: string | undefined
  readonly modelId?: string | undefined
  readonly providerId?: string | undefined
  readonly status: TurnStatus
  readonly usage?: Usage | undefined
  readonly error?: TurnError | undefined
  readonly ended?: boolean | undefined
  readonly items: ReadonlyArray<Upsert>
  readonly lastEventId: string | undefined
  readonly connection: Connection
  readonly lastError?: ClientError | undefined
}

/**
 * The state before anything is read.
 *
 * @since 0.1.0
 * @category constructors
 */
export const initial = (turnId: string): TurnState => ({
  turnId,
  status: "streaming",
  items: [],
  lastEventId: undefined,
  connection: "loading"
})

/**
 * The state of a loaded snapshot (the connection as it was).
 *
 * @since 0.1.0
 * @category folding
 */
export const fromSnapshot = (state: TurnState, snapshot: Snapshot): TurnState => ({
  ...state,
  threadId: snapshot.threadId,
  modelId: snapshot.modelId,
  providerId: snapshot.providerId,
  status: snapshot.status,
  usage: snapshot.usage,
  error: snapshot.error,
  ended: snapshotEnded(snapshot),
  items: snapshot.items,
  lastEventId: snapshot.lastEventId
})

/**
 * Whether a snapshot shows the turn's last entry: only `turn_completed` gives a status
 * other than `streaming` and `error`, or a usage. A snapshot in status `error` without
 * a usage may stop at the `turn_error` before the last entry; the feed tells (`ended`).
 *
 * @since 0.3.0
 * @category predicates
 */
export const snapshotEnded = (snapshot: Snapshot): boolean =>
  snapshot.status !== "streaming" && (snapshot.status !== "error" || snapshot.usage !== undefined)

/**
 * The state of a turn found ended without a further entry: the server closed the feed
 * at once after the last entry applied (it does so only when that entry is the turn's
 * last).
 *
 * @since 0.3.0
 * @category folding
 */
export const ended = (state: TurnState): TurnState => (state.ended === true ? state : { ...state, ended: true })

/**
 * Applies an upsert read as entry `entryId`: it replaces its item (keeping the item's
 * place) or adds the item at the end. An entry at or before `lastEventId` was applied
 * already and changes nothing.
 *
 * @since 0.1.0
 * @category folding
 */
export const applyUpsert = (state: TurnState, entryId: string, upsert: Upsert): TurnState => {
  if (!isAfter(entryId, state.lastEventId)) return state
  const at = state.items.findIndex((item) => item.itemId === upsert.itemId)
  const items = at < 0 ? [...state.items, upsert] : state.items.map((item, i) => (i === at ? upsert : item))
  return {
    ...state,
    items,
    threadId: state.threadId ?? upsert.threadId,
    providerId: state.providerId ?? upsert.providerId,
    lastEventId: entryId
  }
}

/**
 * Applies a turn event read as entry `entryId` (at or before `lastEventId`: nothing).
 *
 * @since 0.1.0
 * @category folding
 */
export const applyTurnEvent = (state: TurnState, entryId: string, event: TurnEvent): TurnState => {
  if (!isAfter(entryId, state.lastEventId)) return state
  switch (event.type) {
    case "turn_started":
      return {
        ...state,
        threadId: event.threadId,
        modelId: event.modelId ?? state.modelId,
        providerId: event.providerId ?? state.providerId,
        lastEventId: entryId
      }
    case lastTurnEventType:
      return { ...state, status: event.status, usage: event.usage ?? state.usage, ended: true, lastEventId: entryId }
    case "turn_error":
      return { ...state, status: "error", error: event.error, lastEventId: entryId }
  }
}

/**
 * Whether the turn has ended: its last entry (`turn_completed`) is in the state. A
 * failed turn's status is `error` from its `turn_error` on, but it ends only with the
 * `turn_completed` (and usage) after it.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isEnded = (state: TurnState): boolean => state.ended === true

/**
 * The state with a new connection state and, when given, the error met (the same
 * object when nothing changes).
 *
 * @since 0.1.0
 * @category folding
 */
export const withConnection = (state: TurnState, connection: Connection, lastError?: ClientError): TurnState =>
  state.connection === connection && (lastError === undefined || state.lastError === lastError)
    ? state
    : { ...state, connection, lastError: lastError ?? state.lastError }

const entryIdPattern = /^(\d+)-(\d+)$/

/**
 * Whether entry id `id` (`<ms>-<seq>`) comes after `last`; everything comes after
 * `undefined`, and an id that is not an entry id is never after anything.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isAfter = (id: string, last: string | undefined): boolean => {
  if (last === undefined) return true
  const a = entryIdPattern.exec(id)
  const b = entryIdPattern.exec(last)
  if (a === null || b === null) return false
  const ms = BigInt(a[1]!) - BigInt(b[1]!)
  return ms > 0n || (ms === 0n && BigInt(a[2]!) > BigInt(b[2]!))
}

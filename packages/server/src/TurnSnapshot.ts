/**
 * The snapshot of a turn (docs/http.md#snapshot): what a UI shows
 * when it opens a turn that is running or over. It folds the turn's Stream B into the
 * latest upsert of each item, in the order the items first appeared, and the turn's
 * status from its turn events, and names the last entry it read so that a client can
 * follow the turn live from there.
 *
 * @since 0.1.0
 */
import { StreamBMessage, UITurnEvent, UIUpsert } from "@sluice/core"
import { ReadBudget, type RedisError, RedisStreams, type StreamEntry, TurnEntry, TurnKeys } from "@sluice/redis"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * `streaming` until a turn event ends the turn, then the status it ended with:
 * `complete`, `error` (also for `turn_error`), `aborted` or `cancelled`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TurnStatus = Schema.Literal("streaming", "complete", "error", "aborted", "cancelled").annotations({
  identifier: "TurnStatus"
})

/**
 * @since 0.1.0
 * @category models
 */
export type TurnStatus = typeof TurnStatus.Type

/**
 * A turn as its Stream B tells it so far.
 *
 * - `items`: the latest upsert of each item, in the order the items first appeared.
 * - `status`, with `usage` (from `turn_completed`) and `error` (from `turn_error`)
 *   when known; `threadId`, `modelId` and `providerId` from `turn_started` or the
 *   upserts.
 * - `lastEventId`: the id of the last entry read. `GET .../upserts` with
 *   `Last-Event-ID: <lastEventId>` (or `?after=`) continues from there.
 * - `entries`: how many entries were read.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TurnSnapshot = Schema.Struct({
  turnId: Schema.UUID,
  threadId: Schema.optionalWith(Schema.UUID, { exact: true }),
  modelId: Schema.optionalWith(Schema.String, { exact: true }),
  providerId: Schema.optionalWith(Schema.String, { exact: true }),
  status: TurnStatus,
  usage: Schema.optionalWith(UITurnEvent.UITurnEventUsage, { exact: true }),
  error: Schema.optionalWith(UITurnEvent.UITurnEventError, { exact: true }),
  items: Schema.Array(UIUpsert.UIUpsert),
  lastEventId: Schema.String,
  entries: Schema.Int.pipe(Schema.nonNegative())
}).annotations({ identifier: "TurnSnapshot" })

/**
 * @since 0.1.0
 * @category models
 */
export type TurnSnapshot = typeof TurnSnapshot.Type

/**
 * An entry of the turn's Stream B is not a StreamBMessage with a valid payload.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidEntry extends Schema.TaggedError<InvalidEntry>()("InvalidEntry", {
  key: Schema.String,
  entryId: Schema.String,
  detail: Schema.String
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return `entry ${this.entryId} of ${this.key} is invalid: ${this.detail}`
  }
}

/**
 * A snapshot being folded: `add` each payload in stream order, then `result`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Folder {
  readonly add: (entryId: string, payload: StreamBMessage.UIPayload) => void
  readonly result: () => TurnSnapshot
}

/**
 * A fresh fold for a turn. Items keep the position of their first upsert and the
 * content of their last.
 *
 * @since 0.1.0
 * @category constructors
 */
export const folder = (turnId: string): Folder => {
  const items = new Map<string, UIUpsert.UIUpsert>()
  let snapshot: Omit<TurnSnapshot, "items"> = { turnId, status: "streaming", lastEventId: "0-0", entries: 0 }
  return {
    add: (entryId, payload) => {
      snapshot = { ...snapshot, lastEventId: entryId, entries: snapshot.entries + 1 }
      switch (payload.type) {
        case "item_upsert": {
          items.set(payload.itemId, payload)
          if (snapshot.threadId === undefined) snapshot = { ...snapshot, threadId: payload.threadId }
          if (snapshot.providerId === undefined && payload.providerId !== undefined) {
            snapshot = { ...snapshot, providerId: payload.providerId }
          }
          return
        }
        case "turn_started": {
          snapshot = {
            ...snapshot,
            threadId: payload.threadId,
            ...(payload.modelId === undefined ? {} : { modelId: payload.modelId }),
            ...(payload.providerId === undefined ? {} : { providerId: payload.providerId })
          }
          return
        }
        case "turn_completed": {
          snapshot = {
            ...snapshot,
            threadId: payload.threadId,
            status: payload.status,
            ...(payload.usage === undefined ? {} : { usage: payload.usage })
          }
          return
        }
        case "turn_error": {
          snapshot = { ...snapshot, threadId: payload.threadId, status: "error", error: payload.error }
          return
        }
      }
    },
    result: () => ({ ...snapshot, items: Array.from(items.values()) })
  }
}

/**
 * Folds payloads, in stream order, into a snapshot.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromPayloads = (
  turnId: string,
  payloads: Iterable<readonly [entryId: string, payload: StreamBMessage.UIPayload]>
): TurnSnapshot => {
  const fold = folder(turnId)
  for (const [entryId, payload] of payloads) fold.add(entryId, payload)
  return fold.result()
}

/**
 * The most entries one read takes while a snapshot is loaded.
 *
 * @since 0.1.0
 * @category constants
 */
export const pageSize = 1000

/**
 * About the most bytes one read takes while a snapshot is loaded (`ReadBudget`: each
 * page's count is sized from the largest entry seen so far).
 *
 * @since 0.3.0
 * @category constants
 */
export const pageBytes = ReadBudget.defaultMaxBytes

const payloadOf = (key: string, entry: StreamEntry.StreamEntry): Effect.Effect<StreamBMessage.UIPayload, InvalidEntry> =>
  TurnEntry.toStreamBMessage(entry).pipe(
    Effect.flatMap((message) => StreamBMessage.decodePayload(message.payload)),
    Effect.mapError((error) =>
      new InvalidEntry({ key, entryId: entry.id, detail: ParseResult.TreeFormatter.formatErrorSync(error) }))
  )

/**
 * Loads the snapshot of a turn from its Stream B under `prefix`, in pages of at most
 * `pageSize` entries and about `pageBytes` bytes. The fold keeps only the latest
 * upsert of each item, so what a load holds is about the turn's final content plus one
 * page, however many entries the stream has. `None` when the stream does not exist
 * (never written, or expired). Fails with `InvalidEntry` for an entry that is not a
 * valid StreamBMessage.
 *
 * @since 0.1.0
 * @category loading
 */
export const load = (
  prefix: string,
  turnId: string
): Effect.Effect<Option.Option<TurnSnapshot>, RedisError.RedisError | InvalidEntry, RedisStreams.RedisStreams> =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const key = TurnKeys.upsertsKey(prefix, turnId)
    const fold = folder(turnId)
    const pages = ReadBudget.pager({ maxCount: pageSize, maxBytes: pageBytes })
    let start = "-"
    while (true) {
      const count = pages.count()
      const page = yield* redis.xrange(key, start, "+", count)
      pages.seen(page)
      for (const entry of page) fold.add(entry.id, yield* payloadOf(key, entry))
      if (page.length < count) break
      start = `(${page[page.length - 1]!.id}`
    }
    const snapshot = fold.result()
    return snapshot.entries === 0 ? Option.none() : Option.some(snapshot)
  })

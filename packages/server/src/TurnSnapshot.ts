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
import { ReadBudget, type RedisError, RedisStreams, type StreamEntry } from "@sluice/redis"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SnapshotFold from "./internal/snapshotFold.js"
import * as SnapshotJsonText from "./internal/snapshotJson.js"

/**
 * `streaming` until a turn event ends the turn, then the status it ended with:
 * `complete`, `error` (also for `turn_error`), `aborted` or `cancelled`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TurnStatus = Schema.Literals(["streaming", "complete", "error", "aborted", "cancelled"]).annotate({
  identifier: "TurnStatus"
})

/**
 * @since 0.1.0
 * @category models
 */
export type TurnStatus = typeof TurnStatus.Type

const UUID = Schema.String.check(Schema.isUUID())

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
  turnId: UUID,
  threadId: Schema.optionalKey(UUID),
  modelId: Schema.optionalKey(Schema.String),
  providerId: Schema.optionalKey(Schema.String),
  status: TurnStatus,
  usage: Schema.optionalKey(UITurnEvent.UITurnEventUsage),
  error: Schema.optionalKey(UITurnEvent.UITurnEventError),
  items: Schema.Array(UIUpsert.UIUpsert),
  lastEventId: Schema.String,
  entries: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
}).annotate({ identifier: "TurnSnapshot" })

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

const keepUpsert = (upsert: UIUpsert.UIUpsert) => upsert
const keepText = (_: UIUpsert.UIUpsert, text: string) => text

/**
 * A fresh fold for a turn. Items keep the position of their first upsert and the
 * content of their last.
 *
 * @since 0.1.0
 * @category constructors
 */
export const folder = (turnId: string): Folder => {
  const fold = SnapshotFold.make(turnId, keepUpsert)
  return {
    add: (entryId, payload) => fold.add(entryId, payload, ""),
    result: () => {
      const { header, items } = fold.result()
      return { ...header, items }
    }
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
 * @since 0.1.0
 * @category constants
 */
export const pageBytes = ReadBudget.defaultMaxBytes

const invalid = (key: string, entry: StreamEntry.StreamEntry) => (error: Schema.SchemaError) =>
  new InvalidEntry({ key, entryId: entry.id, detail: error.message })

const payloadOf = (key: string, entry: StreamEntry.StreamEntry) =>
  TurnEntry.toStreamBMessage(entry).pipe(
    Effect.flatMap((message) =>
      Effect.map(StreamBMessage.decodePayload(message.payload), (payload) => [payload, message.payload] as const)
    ),
    Effect.mapError(invalid(key, entry))
  )

const parseJson = Schema.decodeUnknownResult(Schema.fromJsonString(Schema.Unknown))
const decodeExact = Schema.decodeUnknownResult(StreamBMessage.UIPayload, { onExcessProperty: "error" })
const decodeLoose = Schema.decodeUnknownResult(StreamBMessage.UIPayload)

/**
 * An entry's payload, and its JSON text as an item of the snapshot: the text as
 * stored when it holds nothing the payload's schema does not know (the usual case, so
 * no long content is encoded again), else the decoded payload encoded anew.
 */
const payloadTextOf = (key: string, entry: StreamEntry.StreamEntry) =>
  TurnEntry.toStreamBMessage(entry).pipe(
    Effect.flatMap((message) =>
      Effect.fromResult(Result.flatMap(parseJson(message.payload), (json) =>
        Result.match(decodeExact(json), {
          onSuccess: (payload) => Result.succeed([payload, message.payload] as const),
          onFailure: () => Result.map(decodeLoose(json), (payload) => [payload, JSON.stringify(payload)] as const)
        })))
    ),
    Effect.mapError(invalid(key, entry))
  )

/**
 * Folds the turn's Stream B page by page; `None` when it has no entries.
 */
const fold = <I>(
  prefix: string,
  turnId: string,
  payloadOf: (
    key: string,
    entry: StreamEntry.StreamEntry
  ) => Effect.Effect<readonly [StreamBMessage.UIPayload, string], InvalidEntry>,
  keep: (upsert: UIUpsert.UIUpsert, text: string) => I
): Effect.Effect<
  Option.Option<SnapshotFold.Folded<I>>,
  RedisError.RedisError | InvalidEntry,
  RedisStreams.RedisStreams
> =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const key = TurnKeys.upsertsKey(prefix, turnId)
    const folding = SnapshotFold.make(turnId, keep)
    const pages = ReadBudget.pager({ maxCount: pageSize, maxBytes: pageBytes })
    let start = "-"
    while (true) {
      const count = pages.count()
      const page = yield* redis.xrange(key, start, "+", count)
      pages.seen(page)
      for (const entry of page) {
        const [payload, text] = yield* payloadOf(key, entry)
        folding.add(entry.id, payload, text)
      }
      if (page.length < count) break
      start = `(${page[page.length - 1]!.id}`
    }
    const folded = folding.result()
    return folded.header.entries === 0 ? Option.none() : Option.some(folded)
  })

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
  Effect.map(fold(prefix, turnId, payloadOf, keepUpsert), Option.map(({ header, items }) => ({ ...header, items })))

/**
 * A snapshot as JSON text, with its status.
 *
 * @since 0.1.0
 * @category models
 */
export interface SnapshotJson {
  readonly status: TurnStatus
  /** The `TurnSnapshot`'s JSON text. */
  readonly json: string
}

/**
 * `load`, as the snapshot's JSON text: what `GET /v1/turns/:turnId` answers. Each
 * entry is decoded and checked as `load` does (failing with `InvalidEntry` alike), but
 * the items go into the text as Stream B holds them, so a snapshot of long items is
 * not encoded again: `JSON.parse` of `json` equals what `load` gives.
 *
 * @since 0.1.0
 * @category loading
 */
export const loadJson = (
  prefix: string,
  turnId: string
): Effect.Effect<Option.Option<SnapshotJson>, RedisError.RedisError | InvalidEntry, RedisStreams.RedisStreams> =>
  Effect.map(
    fold(prefix, turnId, payloadTextOf, keepText),
    Option.map(({ header, items }) => ({ status: header.status, json: SnapshotJsonText.render(header, items) }))
  )

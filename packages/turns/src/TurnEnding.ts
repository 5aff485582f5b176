/**
 * Ends a turn its producer can no longer end: appends the ending after whatever the
 * streams hold, unless the turn's last entry (core's `LastEntry`) is already there.
 * Stream A gets `response_error` then `response_done` (status `error`), Stream B the
 * turn events `turn_error` then `turn_completed` (status `error`): the same two entries
 * a producer writes for a failed turn, so every reader stops at the same entry.
 *
 * A stream's ending is written as one atomic step (`RedisStreams.xaddAfter`: one Lua
 * script on Redis), only if the entry it read as the stream's last is still the last:
 * whoever writes first wins. A second server that notices the same lost turn writes
 * nothing, reads the stream again and goes on from what it finds. A stream that ends
 * at an error entry (a turn whose producer died right after its error) gets only the
 * last entry; one that ends at the last entry is left alone. No reader ever sees an
 * ending halfway: each stream's is one step, and `end` is uninterruptible, so a reader
 * that goes away while its watcher writes the ending cannot cut it between the two
 * streams.
 *
 * The entries take the sealed ids (`sealedAfter`): the sequence numbers after the
 * stream's last entry, with `1` for their milliseconds (`1-<n+1>`, `1-<n+2>`), above
 * every id the publisher writes (`0-<n>`). Redis refuses an `XADD` whose id is not
 * above the stream's top, so once a turn is ended this way, every later write of its
 * producer (a producer that was only paused, coming back with writes in flight) is
 * refused by Redis itself, atomically, at no cost to the producer's writes: nothing is
 * ever written past the last entry (docs/redis.md#leases-and-endings).
 *
 * @since 0.3.0
 */
import { Ids, LastEntry, StreamBMessage, StreamEvent, TurnEvents } from "@sluice/core"
import * as EntryId from "@sluice/redis/EntryId"
import { RedisError } from "@sluice/redis/RedisError"
import { RedisStreams, type XAddEntry } from "@sluice/redis/RedisStreams"
import { field, type Fields, type StreamEntry } from "@sluice/redis/StreamEntry"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as TurnEntry from "./TurnEntry.js"
import * as TurnKeys from "./TurnKeys.js"

/**
 * Why a turn was ended by someone other than its producer.
 *
 * @since 0.3.0
 * @category models
 */
export interface Ending {
  /** The error code readers see, `producer_lost` for a lapsed lease. */
  readonly code: string
  readonly message: string
}

/**
 * The ending of a turn whose producer's lease lapsed.
 *
 * @since 0.3.0
 * @category constants
 */
export const producerLost: Ending = {
  code: "producer_lost",
  message: "the process producing this turn stopped renewing its lease and did not end the turn"
}

/**
 * The error object a turn's ending carries in Stream A's `response_error`: the
 * ending's code and message, an `api_error` that is not retryable.
 *
 * @since 0.3.0
 * @category payloads
 */
export const errorObject = (ending: Ending): StreamEvent.ErrorObject => ({
  code: ending.code,
  message: ending.message,
  type: "api_error",
  retryable: false
})

/**
 * Stream A's error entry of an ending: `response_error` with the ending's error.
 *
 * @since 0.3.0
 * @category payloads
 */
export const errorPayload = (responseId: string, ending: Ending): StreamEvent.Payload => ({
  type: "response_error",
  response_id: responseId,
  error: errorObject(ending)
})

/**
 * Stream A's last entry of a turn the producer did not see end (core's `LastEntry`:
 * `response_done`) with the turn's status: finish reason `error` for `error`, none
 * for any other status.
 *
 * @since 0.3.0
 * @category payloads
 */
export const lastPayload = (responseId: string, status: StreamEvent.ResponseStatus): StreamEvent.Payload => ({
  type: LastEntry.lastEventType,
  response_id: responseId,
  status,
  finish_reason: status === "error" ? "error" : null
})

/**
 * Stream A's ending of a failed turn, `[error, last]`: the ending's
 * `response_error`, then `response_done` with status `error`.
 *
 * @since 0.3.0
 * @category payloads
 */
export const streamAEnding = (
  responseId: string,
  ending: Ending
): readonly [error: StreamEvent.Payload, last: StreamEvent.Payload] => [
  errorPayload(responseId, ending),
  lastPayload(responseId, "error")
]

/**
 * The turn a Stream B turn event names.
 *
 * @since 0.3.0
 * @category models
 */
export interface TurnMeta {
  readonly turnId: string
  readonly threadId: string
}

/**
 * Stream B's ending of a failed turn, `[error, last]`, built by the upsert stage's own
 * rules (core's `TurnEvents`, which the upsert stage uses): `turn_error`
 * with the ending's code and message, then `turn_completed` (core's `LastEntry`) with
 * status `error`.
 *
 * @since 0.3.0
 * @category payloads
 */
export const streamBEnding = (
  meta: TurnMeta,
  ending: Ending
): readonly [error: StreamBMessage.UIPayload, last: StreamBMessage.UIPayload] => [
  TurnEvents.turnError(meta, ending),
  TurnEvents.turnCompleted(meta, "error", undefined)
]

/**
 * What `end` did: `ended` (it wrote the ending, or the part of it that was missing),
 * `already_ended` (the stream's last entry was there), or `empty` (the turn has no
 * entries to end).
 *
 * @since 0.3.0
 * @category models
 */
export type Outcome = "ended" | "already_ended" | "empty"

const fieldOf = (entry: StreamEntry, name: string): string | undefined => Option.getOrUndefined(field(entry, name))

/**
 * Whether an entry of either stream is its turn's last entry (`TurnEntry.isFinal`, on
 * core's `LastEntry`): `response_done`
 * in Stream A, a `turn_completed` turn event in Stream B. Readers stop after it; an
 * error entry (`response_error`, `turn_error`) does not end a turn.
 *
 * @since 0.3.0
 * @category predicates
 */
export const isLast: (entry: StreamEntry) => boolean = TurnEntry.isFinal

const isError = (entry: StreamEntry): boolean =>
  LastEntry.isErrorEntry(fieldOf(entry, "payloadType"), fieldOf(entry, "payload"))

const attempts = 5

/**
 * The milliseconds part of the ids an ending takes: above the publisher's (`0`), so
 * that Redis refuses every later write of the producer.
 *
 * @since 0.3.0
 * @category constants
 */
export const sealedMs = 1n

/**
 * The sealed id after an entry id: its sequence number plus one, with `sealedMs` for
 * its milliseconds (`0-<n>` and `1-<n>` give `1-<n+1>`). `None` for an id at or past
 * the largest one.
 *
 * @since 0.3.0
 * @category ids
 */
export const sealedAfter = (id: EntryId.EntryId): Option.Option<EntryId.EntryId> =>
  id.ms > sealedMs
    ? EntryId.next(id)
    : id.seq < EntryId.maxPart
    ? Option.some({ ms: sealedMs, seq: id.seq + 1n })
    : Option.none()

/**
 * Whether an entry id is a sealed one (`sealedAfter`): a turn whose stream's top id
 * is sealed was ended by someone other than its producer, and takes no more writes.
 *
 * @since 0.3.0
 * @category ids
 */
export const isSealed = (id: string): boolean =>
  Option.match(EntryId.parse(id), { onNone: () => false, onSome: (parsed) => parsed.ms >= sealedMs })

/** The sealed id after an entry id, as text. */
const idAfter = (id: string): string =>
  Option.getOrElse(Option.map(Option.flatMap(EntryId.parse(id), sealedAfter), EntryId.format), () => id)

/**
 * Writes a stream's ending, `[error, last]`, after the stream's last entry, as one
 * atomic step (`RedisStreams.xaddAfter`): both when the stream is running, only `last`
 * when it already ends at an error entry, nothing when it ends at its last entry. The
 * entries take the sealed ids after the stream's last entry; when another writer
 * appended in between, nothing is written, the stream is read again and the ending
 * goes on from what is there.
 */
const append = (
  key: string,
  ending: readonly [error: Fields, last: Fields]
): Effect.Effect<Outcome, RedisError, RedisStreams> =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams
    for (let attempt = 0; attempt < attempts; attempt++) {
      const found = yield* redis.xlast(key)
      if (Option.isNone(found)) return "empty"
      const last = found.value
      if (isLast(last)) return "already_ended"
      const pending = isError(last) ? [ending[1]] : ending
      const entries: Array<XAddEntry> = []
      let id = last.id
      for (const fields of pending) {
        id = idAfter(id)
        entries.push({ id, fields })
      }
      if (yield* redis.xaddAfter(key, last.id, entries)) return "ended"
    }
    return yield* new RedisError({
      reason: "Rejected",
      command: "XADD",
      key,
      detail: `another writer kept appending to ${key}; gave up ending the turn after ${attempts} attempts`
    })
  })

/** The turn's `response_start`, the first entry of Stream A, when it is there. */
const startOf = (prefix: string, turnId: string) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams
    const [first] = yield* redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+", 1)
    if (first === undefined) return Option.none()
    const event = yield* Effect.option(TurnEntry.toStreamEvent(first))
    return Option.flatMap(
      event,
      (e) => (e.payload.type === "response_start" ? Option.some({ event: e, start: e.payload }) : Option.none())
    )
  })

/**
 * Ends the turn in both streams with the given ending, unless it has ended already:
 * Stream A first, then Stream B, each written whole (see the module's description).
 * Uninterruptible: once begun it finishes, whoever stops waiting for it. Returns what
 * it did to Stream B, the stream readers follow.
 *
 * @since 0.3.0
 * @category endings
 */
export const end = (prefix: string, turnId: string, ending: Ending): Effect.Effect<Outcome, RedisError, RedisStreams> =>
  Effect.uninterruptible(Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const start = yield* startOf(prefix, turnId)
    if (Option.isNone(start)) return "empty"
    const { event, start: payload } = start.value
    const context = { runId: event.run_id, traceContext: event.trace_context }
    const fields = (payloadOf: StreamEvent.Payload) =>
      Result.getOrThrow(
        TurnEntry.fromStreamEvent(turnId, StreamEvent.envelope(context, payloadOf, Ids.generateEventId(), now))
      )
    const [errorA, lastA] = streamAEnding(payload.response_id, ending)
    yield* append(TurnKeys.eventsKey(prefix, turnId), [fields(errorA), fields(lastA)])
    const turnEvent = (payloadOf: StreamBMessage.UIPayload) =>
      TurnEntry.fromStreamBMessage(StreamBMessage.wrap(payloadOf, Ids.generateEventId(), now))
    const [errorB, lastB] = streamBEnding({ turnId, threadId: payload.thread_id }, ending)
    return yield* append(TurnKeys.upsertsKey(prefix, turnId), [turnEvent(errorB), turnEvent(lastB)])
  }))

/**
 * Ends a turn its producer can no longer end: appends the terminal entries to Stream A
 * (`response_error` then `response_done`, status `error`) and Stream B (`turn_error`)
 * after whatever the streams hold, unless a terminal entry is already there.
 *
 * Each entry takes the id after the stream's last (`0-<n+1>`), the publisher's own id
 * scheme, so whoever writes first wins: a second server that notices the same lost
 * turn, or the producer itself coming back after its lease lapsed, is refused by Redis
 * (`IdTooSmall`), reads the stream again and finds it ended. Nothing is ever written
 * past a terminal entry.
 *
 * @since 0.2.0
 */
import { Ids, StreamBMessage, StreamEvent } from "@sluice/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as EntryId from "./EntryId.js"
import { RedisError } from "./RedisError.js"
import { RedisStreams } from "./RedisStreams.js"
import type { Fields, StreamEntry } from "./StreamEntry.js"
import * as TurnEntry from "./TurnEntry.js"
import * as TurnKeys from "./TurnKeys.js"

/**
 * Why a turn was ended by someone other than its producer.
 *
 * @since 0.2.0
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
 * @since 0.2.0
 * @category constants
 */
export const producerLost: Ending = {
  code: "producer_lost",
  message: "the process producing this turn stopped renewing its lease and did not end the turn"
}

/**
 * What `end` did: `ended` (it wrote the terminal entries), `already_ended` (someone
 * had), or `empty` (the turn has no entries to end).
 *
 * @since 0.2.0
 * @category models
 */
export type Outcome = "ended" | "already_ended" | "empty"

const attempts = 5

/** The id after an entry's, in the publisher's `0-<n>` scheme (a bare next id otherwise). */
const idAfter = (entry: StreamEntry): string =>
  Option.getOrElse(Option.map(Option.flatMap(EntryId.parse(entry.id), EntryId.next), EntryId.format), () => "*")

/**
 * Appends the entries after the stream's last entry, unless that entry is terminal;
 * retries when another writer took the id first.
 */
const append = (
  key: string,
  entries: readonly [Fields, ...Array<Fields>]
): Effect.Effect<Outcome, RedisError, RedisStreams> =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams
    for (let attempt = 0; attempt < attempts; attempt++) {
      const last = yield* redis.xlast(key)
      if (Option.isNone(last)) return "empty"
      if (TurnEntry.isFinal(last.value)) return "already_ended"
      const first = idAfter(last.value)
      const written = yield* Effect.result(redis.xadd(key, { id: first, fields: entries[0] }))
      if (Result.isFailure(written)) {
        if (written.failure.reason === "IdTooSmall") continue
        return yield* written.failure
      }
      // the first entry ended the stream; the rest follow it, after it
      let previous: StreamEntry = { id: written.success, fields: entries[0] }
      for (const fields of entries.slice(1)) {
        const id = idAfter(previous)
        const next = yield* redis.xadd(key, { id, fields })
        previous = { id: next, fields }
      }
      return "ended"
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
 * Ends the turn in both streams with the given ending, unless it has ended already.
 * Returns what it did to Stream B, the stream readers follow.
 *
 * @since 0.2.0
 * @category endings
 */
export const end = (prefix: string, turnId: string, ending: Ending): Effect.Effect<Outcome, RedisError, RedisStreams> =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const start = yield* startOf(prefix, turnId)
    const error = { code: ending.code, message: ending.message, type: "api_error" as const, retryable: false }
    if (Option.isSome(start)) {
      const { event, start: payload } = start.value
      const context = { runId: event.run_id, traceContext: event.trace_context }
      const fields = (payloadOf: StreamEvent.Payload) =>
        Result.getOrThrow(
          TurnEntry.fromStreamEvent(turnId, StreamEvent.envelope(context, payloadOf, Ids.generateEventId(), now))
        )
      yield* append(TurnKeys.eventsKey(prefix, turnId), [
        fields({ type: "response_error", response_id: payload.response_id, error }),
        fields({ type: "response_done", response_id: payload.response_id, status: "error", finish_reason: "error" })
      ])
    }
    const threadId = Option.map(start, (s) => s.start.thread_id)
    if (Option.isNone(threadId)) return "empty"
    return yield* append(TurnKeys.upsertsKey(prefix, turnId), [
      TurnEntry.fromStreamBMessage(
        StreamBMessage.wrap(
          {
            type: "turn_error",
            turnId,
            threadId: threadId.value,
            error: { code: ending.code, message: ending.message }
          },
          Ids.generateEventId(),
          now
        )
      )
    ])
  })

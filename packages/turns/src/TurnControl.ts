/**
 * Requests to the processes that run turns, through one control stream per key prefix
 * (`<prefix>:control`). A server appends a request (`cancel` a turn); every producer
 * process follows the stream with one connection, whatever the number of its turns,
 * and acts on the requests for the turns it runs. A request reaches the producer as
 * soon as Redis hands the entry to its blocked read.
 *
 * @since 0.3.0
 */
import type { RedisError } from "@sluice/redis/RedisError"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import { field, type StreamEntry } from "@sluice/redis/StreamEntry"
import * as Effect from "effect/Effect"
import * as Filter from "effect/Filter"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TurnKeys from "./TurnKeys.js"

/**
 * A request: cancel the turn.
 *
 * @since 0.3.0
 * @category models
 */
export interface CancelRequest {
  readonly type: "cancel"
  readonly turnId: string
}

/** How many requests the control stream keeps (`MAXLEN ~`). */
const maxLen = 10_000

/** How long the control stream lives after its last request. */
const retentionMs = 24 * 60 * 60 * 1000

/**
 * Asks whichever process runs the turn to cancel it.
 *
 * @since 0.3.0
 * @category requests
 */
export const requestCancel = (prefix: string, turnId: string): Effect.Effect<void, RedisError, RedisStreams> =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams
    const key = TurnKeys.controlKey(prefix)
    yield* redis.xadd(key, { id: "*", fields: [["type", "cancel"], ["turnId", turnId]] }, { maxLen })
    yield* redis.pexpire(key, retentionMs)
  })

const toRequest = (entry: StreamEntry): Option.Option<CancelRequest> =>
  Option.isSome(Option.filter(field(entry, "type"), (type) => type === "cancel"))
    ? Option.map(field(entry, "turnId"), (turnId) => ({ type: "cancel", turnId }))
    : Option.none()

/**
 * Where the control stream ends now: the id after which `requests` reads.
 *
 * @since 0.3.0
 * @category requests
 */
export const position = (prefix: string): Effect.Effect<string, RedisError, RedisStreams> =>
  RedisStreams.use((redis) =>
    Effect.map(
      redis.xlast(TurnKeys.controlKey(prefix)),
      Option.match({ onNone: () => "0-0", onSome: (entry) => entry.id })
    )
  )

/**
 * The requests appended after `after` (by default: from now on), for as long as the
 * stream is read; entries of other kinds are skipped. Holds one connection while it
 * runs.
 *
 * @since 0.3.0
 * @category requests
 */
export const requests = (prefix: string, after?: string): Stream.Stream<CancelRequest, RedisError, RedisStreams> =>
  Stream.unwrap(
    Effect.gen(function*() {
      const redis = yield* RedisStreams
      const from = after ?? (yield* position(prefix))
      return Stream.filterMap(
        redis.tail(TurnKeys.controlKey(prefix), { after: from }),
        Filter.fromPredicateOption(toRequest)
      )
    })
  )

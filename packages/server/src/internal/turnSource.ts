/**
 * A Sluice turn's streams as read-only durable streams: Stream A or B in
 * `RedisStreams`, JSON (each entry its `TurnEntry.TurnEntryJson`), closed once the turn
 * has ended.
 *
 * @internal
 */
import { Ids } from "@sluice/core"
import type { DurableSource, DurableStreams } from "@sluice/durable-streams"
import { RedisStreams } from "@sluice/redis"
import { TurnEnding, TurnEntry, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as SharedTail from "../SharedTail.js"
import * as TurnFeed from "../TurnFeed.js"

const encoder = new TextEncoder()

/**
 * Stream A or B of a turn, read-only: JSON, one value per entry, closed once it holds
 * the turn's last entry (`TurnEnding.isLast`: `response_done`, `turn_completed`; not
 * the error entry before it). A wait that finds nothing checks the producer's lease (a
 * turn whose producer died is ended with `producer_lost`, as on the SSE routes).
 *
 * @internal
 */
export const turnSource = (
  redis: RedisStreams.RedisStreamsService,
  prefix: string,
  turnId: string,
  stream: TurnKeys.TurnStream,
  tails?: SharedTail.SharedTailService
): DurableSource.Source => {
  const key = TurnKeys.streamKey(prefix, turnId, stream)
  return {
    load: Effect.map(
      redis.xlast(key),
      Option.map((last) => ({
        contentType: "application/json",
        tail: last.id,
        closed: TurnEnding.isLast(last),
        meta: {},
        signal: last.id,
        gone: false
      }))
    ),
    read: (after, count) =>
      Effect.map(
        redis.xrange(key, `(${after}`, "+", count),
        (entries) =>
          entries.map((entry) => ({
            id: entry.id,
            data: encoder.encode(`${JSON.stringify(TurnEntry.toJson(entry))},`)
          }))
      ),
    awaitChange: (view, timeoutMs) =>
      (tails === undefined ? redis.tail(key, { after: view.tail }) : tails.follow(key, view.tail)).pipe(
        Stream.take(1),
        Stream.runDrain,
        Effect.as(true),
        Effect.timeoutOrElse({ duration: timeoutMs, orElse: () => Effect.succeed(false) }),
        Effect.flatMap((changed) =>
          changed
            ? Effect.void
            : Effect.asVoid(
              Effect.provideService(TurnFeed.endIfProducerLost(prefix, turnId), RedisStreams.RedisStreams, redis)
            )
        )
      ),
    touched: () => Effect.void
  }
}

const turnPath = /^turns\/([^/]+)\/(events|upserts)$/

/**
 * Every turn's streams as read-only durable streams under `turns/`:
 * `turns/<turnId>/events` (Stream A) and `turns/<turnId>/upserts` (Stream B).
 *
 * @internal
 */
export const turnStreams = (
  redis: RedisStreams.RedisStreamsService,
  prefix: string,
  tails?: SharedTail.SharedTailService
): DurableStreams.ReadOnlyStreams => ({
  prefix: "turns/",
  source: (name) => {
    const turn = turnPath.exec(name)
    return turn === null || !Ids.isUuid(turn[1]!)
      ? Option.none()
      : Option.some(turnSource(redis, prefix, turn[1]!, turn[2] === "events" ? "events" : "upserts", tails))
  },
  writeRefusal: "a turn's streams are written by its pipeline only",
  forkRefusal: "a turn's streams cannot be forked"
})

/**
 * A producer whose turn another writer ended (`TurnEnding.end`: a server that found its
 * lease lapsed while it was paused) writes nothing after the last entry, on the
 * in-memory store and on redis-server: the ending takes sealed ids (`1-<n>`, above
 * every `0-<n>` the publisher writes), so Redis refuses each of the producer's later
 * writes, in flight or not; the writer fails with `Ended` and deletes no entry it did
 * not supersede with a confirmed one (docs/redis.md#leases-and-endings).
 */
import { describe, expect, it, layer } from "@effect/vitest"
import * as EntryId from "@sluice/redis/EntryId"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as RedisStreamsLive from "@sluice/redis/RedisStreamsLive"
import * as RedisStreamsMemory from "@sluice/redis/RedisStreamsMemory"
import { streamEvents, upsertMessages } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"
import * as TurnEnding from "../src/TurnEnding.js"
import * as TurnKeys from "../src/TurnKeys.js"
import * as TurnPublisher from "../src/TurnPublisher.js"

const prefix = `sluice-ended-${randomUUID().slice(0, 8)}`

const ids = (key: string) =>
  Effect.map(RedisStreams.use((redis) => redis.xrange(key, "-", "+")), (entries) => entries.map((entry) => entry.id))
const lastEntries = (key: string) =>
  Effect.map(
    RedisStreams.use((redis) => redis.xrange(key, "-", "+")),
    (entries) => entries.filter(TurnEnding.isLast).map((entry) => entry.id)
  )

const suite = (name: string, streams: Layer.Layer<RedisStreams, unknown>) =>
  layer(streams, { timeout: 60_000 })(name, (it) => {
    describe("a producer coming back after another writer ended its turn", () => {
      it.effect("its writes are refused (Ended): nothing after the last entry, each item's latest upsert kept", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          const publisher = yield* TurnPublisher.make({ prefix, retryBaseMs: 0, retryMaxMs: 0, retryAttempts: 2 })
          const writers = yield* publisher.writers(turnId)
          const events = streamEvents(turnId, 12)
          const messages = upsertMessages(turnId, 6)
          // the producer's first writes: Stream A at 0-5, Stream B at 0-3 (item-1's
          // second upsert, which supersedes 0-2)
          yield* writers.events(events.slice(0, 5), () => Effect.void)
          yield* writers.upserts(messages.slice(0, 3), () => Effect.void)
          // paused past its lease: a reader's server ends the turn
          expect(yield* TurnEnding.end(prefix, turnId, TurnEnding.producerLost)).toBe("ended")
          const eventsKey = TurnKeys.eventsKey(prefix, turnId)
          const upsertsKey = TurnKeys.upsertsKey(prefix, turnId)
          expect(yield* ids(eventsKey)).toStrictEqual(["0-1", "0-2", "0-3", "0-4", "0-5", "1-6", "1-7"])
          expect(yield* ids(upsertsKey)).toStrictEqual(["0-1", "0-2", "0-3", "1-4", "1-5"])

          // it comes back with the rest of its turn, its own last entries included
          const passedA: Array<unknown> = []
          const passedB: Array<unknown> = []
          const a = yield* Effect.flip(
            writers.events(events.slice(5), (passed) => Effect.sync(() => passedA.push(...passed)))
          )
          const b = yield* Effect.flip(
            writers.upserts(messages.slice(3), (passed) => Effect.sync(() => passedB.push(...passed)))
          )
          expect([a.reason, a.entryId, b.reason, b.entryId]).toStrictEqual(["Ended", "0-6", "Ended", "0-4"])
          expect([passedA.length, passedB.length]).toStrictEqual([0, 0])
          // and every later write fails the same way, writing nothing
          expect((yield* Effect.flip(writers.events(events.slice(11), () => Effect.void))).reason).toBe("Ended")

          // one last entry per stream, the other writer's, at its end; Stream B lost only
          // 0-2, superseded by the confirmed 0-3, which holds item-1's latest content
          expect(yield* ids(eventsKey)).toStrictEqual(["0-1", "0-2", "0-3", "0-4", "0-5", "1-6", "1-7"])
          expect(yield* ids(upsertsKey)).toStrictEqual(["0-1", "0-3", "1-4", "1-5"])
          expect([yield* lastEntries(eventsKey), yield* lastEntries(upsertsKey)]).toStrictEqual([["1-7"], ["1-5"]])
          // and nobody ends it again
          expect(yield* TurnEnding.end(prefix, turnId, TurnEnding.producerLost)).toBe("already_ended")
        }))

      it.effect("a turn the producer ended itself is left alone: its ending stays at the publisher's ids", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          const publisher = yield* TurnPublisher.make({ prefix, retryBaseMs: 0, retryMaxMs: 0, retryAttempts: 2 })
          const writers = yield* publisher.writers(turnId)
          yield* writers.events(streamEvents(turnId, 6), () => Effect.void)
          yield* writers.upserts(upsertMessages(turnId, 4), () => Effect.void)
          expect(yield* TurnEnding.end(prefix, turnId, TurnEnding.producerLost)).toBe("already_ended")
          expect(yield* lastEntries(TurnKeys.eventsKey(prefix, turnId))).toStrictEqual(["0-6"])
          expect(yield* lastEntries(TurnKeys.upsertsKey(prefix, turnId))).toStrictEqual(["0-4"])
        }))
    })
  })

suite("on RedisStreamsMemory", RedisStreamsMemory.layer)
suite("on RedisStreamsLive", RedisStreamsLive.layer({ url: inject("redisUrl") }))

describe("TurnEnding's sealed ids", () => {
  it("the id after 0-<n> or 1-<n> is 1-<n+1>, above every id the publisher writes", () => {
    const after = (id: string) => Option.map(Option.flatMap(EntryId.parse(id), TurnEnding.sealedAfter), EntryId.format)
    expect([after("0-7"), after("1-8"), after("5-3")]).toStrictEqual([
      Option.some("1-8"),
      Option.some("1-9"),
      Option.some("5-4")
    ])
    expect(["0-1", "0-18446744073709551615", "1-2", "1700000000000-0"].map(TurnEnding.isSealed)).toStrictEqual([
      false,
      false,
      true,
      true
    ])
  })
})

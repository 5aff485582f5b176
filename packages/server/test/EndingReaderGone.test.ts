/**
 * The `producer_lost` ending a reader's lease check writes, on the in-memory store and
 * the TestClock: an `/events` follower (Stream A) reads it to `response_done`, and the
 * ending lands whole in both streams even when the reader whose check started it goes
 * away at once (its stream interrupted while the ending is being written).
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams, RedisStreamsMemory, type StreamEntry } from "@sluice/redis"
import { untilSleeping, withSleeps } from "@sluice/testing/clock"
import { prefix, producer, publishEvents } from "@sluice/testing/server"
import { gatedEnding, streamEvents, upsertMessages } from "@sluice/testing/turns"
import { TurnEnding, TurnEntry, TurnKeys } from "@sluice/turns"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { randomUUID } from "node:crypto"
import * as TurnFeed from "../src/TurnFeed.js"

const leaseMs = 6_000
const follow = { blockMs: 1000, resumeAttempts: 3, resumeBaseMs: 0, resumeMaxMs: 0 }

// A turn in progress whose producer holds a lease nobody renews: 5 events, 4 messages.
const deadProducerTurn = Effect.gen(function*() {
  const redis = yield* RedisStreams.RedisStreams
  const turnId = randomUUID()
  yield* redis.setPx(TurnKeys.leasedKey(prefix, turnId), "1", 24 * 60 * 60 * 1000)
  yield* redis.setPx(TurnKeys.leaseKey(prefix, turnId), "1", leaseMs)
  yield* publishEvents(turnId, streamEvents(turnId, 20).slice(0, 5))
  const produce = yield* producer(turnId, upsertMessages(turnId, 20))
  yield* produce.release(4)
  return turnId
})

const typeOf = (entry: StreamEntry.StreamEntry) => entry.fields.find(([name]) => name === "payloadType")?.[1]

// Both streams end whole: the error, then the last entry, once each.
const endings = (turnId: string) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const a = yield* redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+")
    const b = yield* redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")
    const turnEvents = yield* Effect.forEach(
      b.slice(-2),
      (entry) =>
        Effect.map(
          TurnEntry.toStreamBMessage(entry),
          (message) => (JSON.parse(message.payload) as { type: string }).type
        )
    )
    return {
      a: a.slice(-2).map(typeOf),
      b: turnEvents,
      sizes: [a.length, b.length],
      last: [a.filter(TurnEnding.isLast).length, b.filter(TurnEnding.isLast).length]
    }
  })

const whole = {
  a: ["response_error", "response_done"],
  b: ["turn_error", "turn_completed"],
  sizes: [7, 6],
  last: [1, 1]
}

describe("a producer_lost ending and its reader", () => {
  it.effect(
    "an /events follower reads the ending to response_done and ends; Stream B ends whole too",
    () =>
      Effect.gen(function*() {
        const turnId = yield* deadProducerTurn
        const fiber = yield* TurnFeed.follow(TurnKeys.eventsKey(prefix, turnId), {
          ...follow,
          after: "0-0",
          producer: { prefix, turnId, everyMs: 3_000 }
        }).pipe(Stream.runCollect, Effect.forkChild)
        yield* untilSleeping(1)
        yield* TestClock.adjust(3_000)
        yield* untilSleeping(1)
        yield* TestClock.adjust(3_000)
        const seen = Array.from(yield* Fiber.join(fiber))
        expect(seen.map(typeOf).slice(-2)).toStrictEqual(["response_error", "response_done"])
        expect(seen.length).toBe(7)
        expect(yield* endings(turnId)).toStrictEqual(whole)
      }).pipe(withSleeps, Effect.provide(RedisStreamsMemory.layer)),
    30_000
  )

  it.effect(
    "the ending lands whole when the reader that started it goes away while it is written",
    () =>
      Effect.gen(function*() {
        const turnId = yield* deadProducerTurn
        const started = yield* Deferred.make<void>()
        const gate = yield* Deferred.make<void>()
        const gated = yield* Layer.build(gatedEnding(started, gate))
        const reader = yield* TurnFeed.follow(TurnKeys.upsertsKey(prefix, turnId), {
          ...follow,
          after: "0-0",
          producer: { prefix, turnId, everyMs: 3_000 }
        }).pipe(Stream.runCollect, Effect.provideContext(gated), Effect.forkChild)
        yield* untilSleeping(1)
        yield* TestClock.adjust(3_000)
        yield* untilSleeping(1)
        yield* TestClock.adjust(3_000)
        yield* Deferred.await(started)
        // the reader goes away (its client left) while its check writes the ending
        const leaving = yield* Effect.forkChild(Fiber.interrupt(reader))
        for (let i = 0; i < 8; i++) yield* Effect.yieldNow
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(leaving)
        expect(yield* endings(turnId)).toStrictEqual(whole)
      }).pipe(withSleeps, Effect.provide(RedisStreamsMemory.layer)),
    30_000
  )
})

/**
 * A producer that dies mid-turn, on the in-memory store and the TestClock: a reader
 * that follows the turn checks the producer's lease every `leaseCheckMs`, ends the
 * turn with `producer_lost` once the lease has lapsed (`turn_error`, then the turn's
 * last entry `turn_completed`), receives that ending and closes.
 * A turn that never had a lease is never ended this way.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams, RedisStreamsMemory, type StreamEntry } from "@sluice/redis"
import { untilSleeping, withSleeps } from "@sluice/testing/clock"
import {
  bearer,
  open,
  prefix,
  producer,
  publishEvents,
  type Received,
  received,
  request,
  serve,
  tokens
} from "@sluice/testing/server"
import { streamEvents, upsertMessages } from "@sluice/testing/turns"
import { TurnKeys } from "@sluice/turns"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { randomUUID } from "node:crypto"
import * as TurnFeed from "../src/TurnFeed.js"
import type * as TurnSnapshot from "../src/TurnSnapshot.js"

const auth = bearer(tokens[0])
const leaseMs = 6_000

// A turn in progress: Stream A's first events and Stream B's first `n` messages, with
// a lease (as a producer takes it) that nobody renews: the producer is dead from now on.
const deadProducerTurn = (n: number, options: { readonly lease: boolean }) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const turnId = randomUUID()
    if (options.lease) {
      yield* redis.setPx(TurnKeys.leasedKey(prefix, turnId), "1", 24 * 60 * 60 * 1000)
      yield* redis.setPx(TurnKeys.leaseKey(prefix, turnId), "1", leaseMs)
    }
    yield* publishEvents(turnId, streamEvents(turnId, 20).slice(0, 5))
    const messages = upsertMessages(turnId, 20)
    const produce = yield* producer(turnId, messages)
    yield* produce.release(n)
    return { turnId, messages, produce }
  })

const payloadOf = (entry: StreamEntry.StreamEntry) => entry.fields.find(([name]) => name === "payload")?.[1] ?? ""
const typeOf = (entry: StreamEntry.StreamEntry) => entry.fields.find(([name]) => name === "payloadType")?.[1]

const follow = { blockMs: 1000, resumeAttempts: 3, resumeBaseMs: 0, resumeMaxMs: 0 }

describe("TurnFeed.follow watching the producer", () => {
  it.effect("a lapsed lease ends the turn with producer_lost in both streams; the follower gets it and ends", () =>
    Effect.gen(function*() {
      const { turnId } = yield* deadProducerTurn(4, { lease: true })
      const key = TurnKeys.upsertsKey(prefix, turnId)
      const fiber = yield* TurnFeed.follow(key, {
        ...follow,
        after: "0-0",
        producer: { prefix, turnId, everyMs: 3_000 }
      }).pipe(
        Stream.runCollect,
        Effect.forkChild
      )
      yield* untilSleeping(1)
      // 3 s: the lease still holds, the turn goes on.
      yield* TestClock.adjust(3_000)
      yield* untilSleeping(1)
      expect(fiber.pollUnsafe() === undefined).toBe(true)
      // 6 s: the lease has lapsed at the next check.
      yield* TestClock.adjust(3_000)
      const entries = Array.from(yield* Fiber.join(fiber))
      // the ending at the sealed ids after the producer's last entry (docs/redis.md#leases-and-endings)
      expect(entries.map((entry) => entry.id)).toStrictEqual(["0-1", "0-2", "0-3", "0-4", "1-5", "1-6"])
      expect(entries.slice(4).map(typeOf)).toStrictEqual(["turn_event", "turn_event"])
      expect(JSON.parse(payloadOf(entries[4]!))).toMatchObject({
        type: "turn_error",
        turnId,
        error: { code: "producer_lost" }
      })
      // the turn's last entry follows the error, and the follower reads on to it
      expect(JSON.parse(payloadOf(entries[5]!))).toMatchObject({ type: "turn_completed", turnId, status: "error" })
      const redis = yield* RedisStreams.RedisStreams
      const streamA = yield* redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+")
      expect(streamA.slice(-2).map(typeOf)).toStrictEqual(["response_error", "response_done"])
      // Another reader that notices later writes nothing more.
      expect(yield* TurnFeed.endIfProducerLost(prefix, turnId)).toBe(false)
      expect((yield* redis.xrange(key, "-", "+")).length).toBe(6)
    }).pipe(withSleeps, Effect.provide(RedisStreamsMemory.layer)))

  it.effect("a turn that never had a lease is never declared lost", () =>
    Effect.gen(function*() {
      const { turnId, messages, produce } = yield* deadProducerTurn(4, { lease: false })
      const key = TurnKeys.upsertsKey(prefix, turnId)
      const fiber = yield* TurnFeed.follow(key, {
        ...follow,
        after: "0-0",
        producer: { prefix, turnId, everyMs: 3_000 }
      }).pipe(
        Stream.runCollect,
        Effect.forkChild
      )
      for (let i = 0; i < 20; i++) {
        yield* untilSleeping(1)
        yield* TestClock.adjust(3_000)
      }
      expect(fiber.pollUnsafe() === undefined).toBe(true)
      yield* produce.release(messages.length - 4)
      const entries = Array.from(yield* Fiber.join(fiber))
      expect(entries.length).toBe(messages.length)
      expect(JSON.parse(payloadOf(entries.at(-1)!))).toMatchObject({ type: "turn_completed" })
    }).pipe(withSleeps, Effect.provide(RedisStreamsMemory.layer)))
})

describe("producer_lost over HTTP", () => {
  it.effect("an SSE reader of a turn whose producer died gets turn_error producer_lost and the stream closes", () =>
    Effect.gen(function*() {
      const base = yield* serve({ leaseCheckMs: 3_000 })
      const { turnId, messages } = yield* deadProducerTurn(3, { lease: true })
      const opened = yield* open(`${base}/v1/turns/${turnId}/upserts`, auth)
      const pull = yield* Stream.toPull(opened.events)
      const seen: Array<Received> = []
      while (seen.length < 3) seen.push(...Array.from(yield* pull, received))
      expect(seen.map((event) => event.data)).toStrictEqual(messages.slice(0, 3).map((message) => message.payload))
      // heartbeat, idle timeout and the lease check sleep on the Clock
      yield* untilSleeping(3)
      yield* TestClock.adjust(3_000)
      yield* untilSleeping(3)
      yield* TestClock.adjust(3_000)
      const end = yield* Effect.flip(
        Effect.forever(Effect.map(pull, (chunk) => seen.push(...Array.from(chunk, received))))
      )
      expect(Cause.isDone(end)).toBe(true)
      expect(seen.length).toBe(5)
      expect(seen[3]).toMatchObject({ id: "1-4", event: "turn_event" })
      expect(JSON.parse(seen[3]!.data)).toMatchObject({ type: "turn_error", error: { code: "producer_lost" } })
      expect(seen[4]).toMatchObject({ id: "1-5", event: "turn_event" })
      expect(JSON.parse(seen[4]!.data)).toMatchObject({ type: "turn_completed", status: "error" })
    }).pipe(withSleeps, Effect.provide(RedisStreamsMemory.layer)))

  it.effect("the snapshot of such a turn ends it too, and shows it ended", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const { turnId } = yield* deadProducerTurn(3, { lease: true })
      const before = (yield* request(`${base}/v1/turns/${turnId}`, auth)).body as TurnSnapshot.TurnSnapshot
      expect(before.status).toBe("streaming")
      yield* TestClock.adjust(leaseMs)
      const after = (yield* request(`${base}/v1/turns/${turnId}`, auth)).body as TurnSnapshot.TurnSnapshot
      expect(after).toMatchObject({ status: "error", error: { code: "producer_lost" }, lastEventId: "1-5" })
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

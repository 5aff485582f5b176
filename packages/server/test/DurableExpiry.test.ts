/**
 * A stream's expiry wakes its waiting readers as a delete does, on the in-memory
 * store and the TestClock: a long-poll waiting at the tail of a stream with a TTL (or
 * an expiry time) answers 404 once the clock reaches the stream's deadline, not when
 * the long-poll's own time runs out (410 for a stream that forks keep); an SSE read
 * ends then.
 */
import { describe, expect, it } from "@effect/vitest"
import { DurableStoreMemory } from "@sluice/durable-streams"
import { RedisStreamsMemory } from "@sluice/redis"
import { sleeps, untilSleeping, withSleeps } from "@sluice/testing/clock"
import { bearer, open, serve, tokens } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { randomUUID } from "node:crypto"

const auth = bearer(tokens[0])
const longPollMs = 20_000

const status = (url: string, init: RequestInit) =>
  Effect.promise(async () => {
    const response = await fetch(url, init)
    await response.arrayBuffer()
    return response.status
  })

// A long-poll at the tail of `stream`, waiting once it sleeps on the clock.
const waitingLongPoll = (stream: string) =>
  Effect.gen(function*() {
    const before = (yield* sleeps).length
    const fiber = yield* Effect.forkChild(status(`${stream}?offset=now&live=long-poll`, { headers: auth }))
    yield* untilSleeping(before + 1)
    return fiber
  })

const stores = Layer.merge(RedisStreamsMemory.layer, DurableStoreMemory.layer)

describe("Durable Streams readers and a stream's expiry", () => {
  it.effect(
    "a waiting long-poll answers 404 when the TTL passes, not when its own time runs out",
    () =>
      Effect.gen(function*() {
        const base = yield* serve({ durableLongPollMs: longPollMs })
        const stream = `${base}/v1/stream/chats/${randomUUID()}`
        expect(yield* status(stream, { method: "PUT", headers: { ...auth, "stream-ttl": "1" } })).toBe(201)
        const waiting = yield* waitingLongPoll(stream)
        // the read renewed the TTL: the stream expires 1 s from now
        yield* TestClock.adjust(999)
        expect(waiting.pollUnsafe()).toBeUndefined()
        yield* TestClock.adjust(1)
        expect(yield* Fiber.join(waiting)).toBe(404)
        expect(yield* status(stream, { method: "HEAD", headers: auth })).toBe(404)
      }).pipe(withSleeps, Effect.provide(stores)),
    30_000
  )

  it.effect(
    "so does one on a stream with an expiry time; a stream that a fork keeps answers 410",
    () =>
      Effect.gen(function*() {
        const base = yield* serve({ durableLongPollMs: longPollMs })
        const stream = `${base}/v1/stream/chats/${randomUUID()}`
        const expiresAt = new Date((yield* TestClock.testClockWith((clock) => clock.currentTimeMillis)) + 2_000)
        const at = { ...auth, "stream-expires-at": expiresAt.toISOString() }
        expect(yield* status(stream, { method: "PUT", headers: at })).toBe(201)
        const waiting = yield* waitingLongPoll(stream)
        yield* TestClock.adjust(2_000)
        expect(yield* Fiber.join(waiting)).toBe(404)

        const source = `${base}/v1/stream/chats/${randomUUID()}`
        expect(yield* status(source, { method: "PUT", headers: { ...auth, "stream-ttl": "1" } })).toBe(201)
        const fork = `${base}/v1/stream/chats/${randomUUID()}`
        const forked = { ...auth, "stream-forked-from": new URL(source).pathname, "stream-ttl": "60" }
        expect(yield* status(fork, { method: "PUT", headers: forked })).toBe(201)
        const kept = yield* waitingLongPoll(source)
        yield* TestClock.adjust(1_000)
        expect(yield* Fiber.join(kept)).toBe(410)
      }).pipe(withSleeps, Effect.provide(stores)),
    30_000
  )

  it.effect("a waiting SSE read ends when the TTL passes", () =>
    Effect.gen(function*() {
      const base = yield* serve({ durableLongPollMs: longPollMs })
      const stream = `${base}/v1/stream/chats/${randomUUID()}`
      const json = { ...auth, "content-type": "application/json" }
      expect(yield* status(stream, { method: "PUT", headers: { ...json, "stream-ttl": "1" }, body: "[{\"n\":1}]" }))
        .toBe(201)
      const before = (yield* sleeps).length
      const opened = yield* open(`${stream}?offset=-1&live=sse`, auth)
      expect(opened.status).toBe(200)
      const events = yield* Effect.forkChild(Stream.runCollect(opened.events))
      yield* untilSleeping(before + 1)
      yield* TestClock.adjust(999)
      expect(events.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust(1)
      const received = Array.from(yield* Fiber.join(events))
      // the entry and its control event, then nothing: the stream ended
      expect(received.map((event) => event.event)).toStrictEqual(["data", "control"])
    }).pipe(withSleeps, Effect.provide(stores), Effect.scoped), 30_000)
})

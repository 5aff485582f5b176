/**
 * Following a turn's stream without HTTP: resuming a failed tail, giving up, and the
 * SSE text with heartbeats and idle timeouts on the TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Sse } from "@sluice/core"
import { RedisError, RedisStreamsMemory, type StreamEntry } from "@sluice/redis"
import { prefix, producer, publishUpserts } from "@sluice/testing/server"
import { upsertMessages } from "@sluice/testing/turns"
import { TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { randomUUID } from "node:crypto"
import * as TurnFeed from "../src/TurnFeed.js"
import { pass, watchedTails } from "./support/tails.js"

const follow = { blockMs: 1000, resumeAttempts: 3, resumeBaseMs: 0, resumeMaxMs: 0 }

const ids = (entries: ReadonlyArray<StreamEntry.StreamEntry>) => Array.from(entries, (entry) => entry.id)
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `0-${from + i}`)

describe("TurnFeed.follow", () => {
  it.effect("resumes a failed tail from the last entry it passed on: every entry once, in order", () => {
    const watched = watchedTails((call) => (call < 3 ? { fail: true, after: 7, reason: "Unavailable" } : pass))
    return Effect.gen(function*() {
      const turnId = randomUUID()
      yield* publishUpserts(turnId, upsertMessages(turnId, 30))
      const entries = yield* Stream.runCollect(
        TurnFeed.follow(TurnKeys.upsertsKey(prefix, turnId), { ...follow, after: "0-2" })
      )
      expect(ids(entries)).toStrictEqual(range(3, 30))
      expect(watched.log.starts).toStrictEqual(["0-2", "0-9", "0-16", "0-23"])
      expect(watched.log.open).toBe(0)
    }).pipe(Effect.provide(watched.layer.pipe(Layer.provideMerge(RedisStreamsMemory.layer))))
  })

  it.effect("the retry budget starts over once an entry arrives", () => {
    // Every tail fails after one entry: more failures than resumeAttempts, each after progress.
    const watched = watchedTails((call) => (call < 8 ? { fail: true, after: 1, reason: "Unavailable" } : pass))
    return Effect.gen(function*() {
      const turnId = randomUUID()
      yield* publishUpserts(turnId, upsertMessages(turnId, 10))
      const entries = yield* Stream.runCollect(
        TurnFeed.follow(TurnKeys.upsertsKey(prefix, turnId), { ...follow, after: "0-0" })
      )
      expect(ids(entries)).toStrictEqual(range(1, 10))
      expect(watched.log.starts.length).toBe(9)
    }).pipe(Effect.provide(watched.layer.pipe(Layer.provideMerge(RedisStreamsMemory.layer))))
  })

  it.effect("gives up after resumeAttempts failures in a row with the RedisError, after passing on what it read", () => {
    const watched = watchedTails((
      call
    ) => (call === 0
      ? { fail: true, after: 4, reason: "Unavailable" }
      : { fail: true, after: 0, reason: "Unavailable" })
    )
    return Effect.gen(function*() {
      const turnId = randomUUID()
      yield* publishUpserts(turnId, upsertMessages(turnId, 10))
      const seen: Array<string> = []
      const error = yield* TurnFeed.follow(TurnKeys.upsertsKey(prefix, turnId), { ...follow, after: "0-0" }).pipe(
        Stream.runForEach((entry) => Effect.sync(() => seen.push(entry.id))),
        Effect.flip
      )
      expect(error).toBeInstanceOf(RedisError.RedisError)
      expect(error.reason).toBe("Unavailable")
      expect(seen).toStrictEqual(range(1, 4))
      // The first tail, then resumeAttempts more from the last entry passed on.
      expect(watched.log.starts).toStrictEqual(["0-0", "0-4", "0-4", "0-4"])
      expect(watched.log.open).toBe(0)
    }).pipe(Effect.provide(watched.layer.pipe(Layer.provideMerge(RedisStreamsMemory.layer))))
  })

  it.effect("waits resumeBaseMs * 2^n, capped at resumeMaxMs, between attempts (on the Clock)", () => {
    const watched = watchedTails(() => ({ fail: true, after: 0, reason: "Unavailable" }))
    return Effect.gen(function*() {
      const turnId = randomUUID()
      yield* publishUpserts(turnId, upsertMessages(turnId, 3))
      const fiber = yield* TurnFeed.follow(TurnKeys.upsertsKey(prefix, turnId), {
        ...follow,
        after: "0-0",
        resumeAttempts: 4,
        resumeBaseMs: 100,
        resumeMaxMs: 300
      }).pipe(Stream.runDrain, Effect.forkChild)
      const startsAfter = (ms: number) =>
        Effect.andThen(TestClock.adjust(ms), Effect.sync(() => watched.log.starts.length))
      yield* TestClock.adjust(0)
      expect(watched.log.starts.length).toBe(1)
      expect(yield* startsAfter(99)).toBe(1)
      expect(yield* startsAfter(1)).toBe(2)
      expect(yield* startsAfter(200)).toBe(3)
      expect(yield* startsAfter(299)).toBe(3)
      expect(yield* startsAfter(1)).toBe(4)
      expect(yield* startsAfter(300)).toBe(5)
      const exit = yield* Fiber.await(fiber)
      expect(exit._tag).toBe("Failure")
    }).pipe(Effect.provide(watched.layer.pipe(Layer.provideMerge(RedisStreamsMemory.layer))))
  })

  it.effect("a refused read (Rejected) is not retried", () => {
    const watched = watchedTails(() => ({ fail: true, after: 2, reason: "Rejected" }))
    return Effect.gen(function*() {
      const turnId = randomUUID()
      yield* publishUpserts(turnId, upsertMessages(turnId, 10))
      const error = yield* Effect.flip(
        Stream.runDrain(TurnFeed.follow(TurnKeys.upsertsKey(prefix, turnId), { ...follow, after: "0-0" }))
      )
      expect(error.reason).toBe("Rejected")
      expect(watched.log.starts).toStrictEqual(["0-0"])
    }).pipe(Effect.provide(watched.layer.pipe(Layer.provideMerge(RedisStreamsMemory.layer))))
  })

  it.effect("after the entry that ended the turn there is nothing to follow; after an earlier one, the rest", () =>
    Effect.gen(function*() {
      const turnId = randomUUID()
      yield* publishUpserts(turnId, upsertMessages(turnId, 6))
      const key = TurnKeys.upsertsKey(prefix, turnId)
      expect(ids(yield* Stream.runCollect(TurnFeed.follow(key, { ...follow, after: "0-6" })))).toStrictEqual([])
      expect(ids(yield* Stream.runCollect(TurnFeed.follow(key, { ...follow, after: "0-5" })))).toStrictEqual(["0-6"])
      // an id past the end of the finished turn (one kept from a longer turn)
      expect(ids(yield* Stream.runCollect(TurnFeed.follow(key, { ...follow, after: "0-99" })))).toStrictEqual([])
      expect(ids(yield* Stream.runCollect(TurnFeed.follow(key, { ...follow, after: "9-0" })))).toStrictEqual([])
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("on a running turn, an id past its last entry waits for the entries after that id", () =>
    Effect.gen(function*() {
      const turnId = randomUUID()
      const messages = upsertMessages(turnId, 12)
      const produce = yield* producer(turnId, messages)
      yield* produce.release(3)
      const key = TurnKeys.upsertsKey(prefix, turnId)
      const fiber = yield* Stream.runCollect(TurnFeed.follow(key, { ...follow, after: "0-8" })).pipe(Effect.forkChild)
      yield* produce.release(9)
      expect(ids(yield* Fiber.join(fiber))).toStrictEqual(range(9, 12))
    }).pipe(Effect.scoped, Effect.provide(RedisStreamsMemory.layer)))
})

const decodeAll = (text: string) =>
  Effect.map(Sse.decodeText(text), (events) => events.map((e) => ({ id: e.id, event: e.event, data: e.data })))

describe("TurnFeed.sse", () => {
  const entry = (n: number, payloadType = "item_upsert"): StreamEntry.StreamEntry => ({
    id: `0-${n}`,
    fields: [["eventId", randomUUID()], ["timestamp", "1"], ["turnId", randomUUID()], ["payloadType", payloadType], [
      "payload",
      JSON.stringify({ n, text: "line one\nline two" })
    ]]
  })

  it.effect("frames each entry as id, event and data, after the opening comment", () =>
    Effect.gen(function*() {
      const text = (yield* Stream.runCollect(
        Stream.make(entry(1), entry(2, "turn_event")).pipe(TurnFeed.sse({ heartbeatMs: 1000, idleTimeoutMs: 5000 }))
      )).join("")
      expect(text.startsWith(TurnFeed.opening)).toBe(true)
      expect(yield* decodeAll(text)).toStrictEqual([
        { id: "0-1", event: "item_upsert", data: JSON.stringify({ n: 1, text: "line one\nline two" }) },
        { id: "0-2", event: "turn_event", data: JSON.stringify({ n: 2, text: "line one\nline two" }) }
      ])
    }))

  it.effect("sends `: ping` every heartbeatMs while no entry comes, and closes after idleTimeoutMs", () =>
    Effect.gen(function*() {
      const pieces: Array<string> = []
      const fiber = yield* Stream.concat(Stream.make(entry(1)), Stream.never).pipe(
        TurnFeed.sse({ heartbeatMs: 1000, idleTimeoutMs: 3500 }),
        Stream.runForEach((piece) => Effect.sync(() => pieces.push(piece))),
        Effect.forkChild
      )
      yield* TestClock.adjust(0)
      expect(pieces.filter((p) => p === TurnFeed.ping).length).toBe(0)
      yield* TestClock.adjust(1000)
      expect(pieces.filter((p) => p === TurnFeed.ping).length).toBe(1)
      yield* TestClock.adjust(2000)
      expect(pieces.filter((p) => p === TurnFeed.ping).length).toBe(3)
      yield* TestClock.adjust(500)
      yield* Fiber.join(fiber)
      expect(pieces[0]).toBe(TurnFeed.opening)
      expect(yield* decodeAll(pieces.join(""))).toStrictEqual([
        { id: "0-1", event: "item_upsert", data: JSON.stringify({ n: 1, text: "line one\nline two" }) }
      ])
    }))

  it.effect("a failure after the response began ends the stream with a stream_error event", () =>
    Effect.gen(function*() {
      const unavailable = new RedisError.RedisError({
        reason: "Unavailable",
        command: "XREAD",
        key: "k",
        detail: "connection closed"
      })
      const text = (yield* Stream.runCollect(
        Stream.concat(Stream.make(entry(1)), Stream.fail(unavailable)).pipe(
          TurnFeed.sse({ heartbeatMs: 1000, idleTimeoutMs: 5000 })
        )
      )).join("")
      const events = yield* decodeAll(text)
      expect(events.length).toBe(2)
      expect(events[1]!.event).toBe("stream_error")
      expect(JSON.parse(events[1]!.data).error.code).toBe("redis_unavailable")
    }))

  it.effect("an entry without the fields of docs/redis.md#entries ends the stream with an invalid_entry stream_error", () =>
    Effect.gen(function*() {
      const broken: StreamEntry.StreamEntry = { id: "0-2", fields: [["payloadType", "item_upsert"]] }
      const text = (yield* Stream.runCollect(
        Stream.make(entry(1), broken).pipe(TurnFeed.sse({ heartbeatMs: 1000, idleTimeoutMs: 5000 }))
      )).join("")
      const events = yield* decodeAll(text)
      expect(events.map((e) => e.event)).toStrictEqual(["item_upsert", "stream_error"])
      const body = JSON.parse(events[1]!.data)
      expect(body.error.code).toBe("invalid_entry")
      expect(body.error.message).toMatch(/eventId/)
    }))
})

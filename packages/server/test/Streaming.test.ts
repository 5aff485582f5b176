/**
 * SSE connections over real HTTP on the in-memory store: clients that go away, tails
 * that fail, heartbeats and idle streams on the TestClock, a server that closes.
 * (What readers see is in Readers.test.ts.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Sse } from "@sluice/core"
import { RedisStreamsMemory } from "@sluice/redis"
import { untilSleeping, withSleeps } from "@sluice/testing/clock"
import {
  bearer,
  expectedFrames,
  open,
  producer,
  publishEvents,
  publishUpserts,
  readAll,
  type Received,
  received,
  request,
  serve,
  tokens
} from "@sluice/testing/server"
import { streamEvents, upsertMessages } from "@sluice/testing/turns"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { randomUUID } from "node:crypto"
import * as SharedTail from "../src/SharedTail.js"
import { pass, watchedTails } from "./support/tails.js"

const auth = bearer(tokens[0])

/**
 * A turn of `total` messages, `before` of them published, resumed with `lastEventId`;
 * the rest are then published and the stream read to its end (which must be clean).
 */
const resumeRunningTurn = (total: number, before: number, lastEventId: string) =>
  Effect.gen(function*() {
    const base = yield* serve()
    const turnId = randomUUID()
    const messages = upsertMessages(turnId, total)
    const produce = yield* producer(turnId, messages)
    yield* produce.release(before)
    const opened = yield* open(`${base}/v1/turns/${turnId}/upserts`, { ...auth, "last-event-id": lastEventId })
    const pull = yield* Stream.toPull(opened.events)
    yield* produce.release(total - before)
    const seen: Array<Received> = []
    const end = yield* Effect.flip(
      Effect.forever(Effect.map(pull, (chunk) => seen.push(...Array.from(chunk, received))))
    )
    expect(Cause.isDone(end)).toBe(true)
    return { messages, seen }
  })

describe("SSE connections", () => {
  it.effect("a client that goes away leaves the shared tail, which closes idleMs later, and frees its stream slot", () => {
    const watched = watchedTails()
    return Effect.gen(function*() {
      const base = yield* serve({ maxStreamsPerToken: 1 })
      const turnId = randomUUID()
      const messages = upsertMessages(turnId, 20)
      const produce = yield* producer(turnId, messages)
      yield* produce.release(5)
      const url = `${base}/v1/turns/${turnId}/upserts`
      const opened = yield* open(url, auth)
      const pull = yield* Stream.toPull(opened.events)
      const seen: Array<Received> = []
      while (seen.length < 5) seen.push(...Array.from(yield* pull, received))
      // The shared tail opens in a fiber of its own.
      for (let spins = 0; watched.log.open === 0 && spins < 1_000; spins++) yield* Effect.yieldNow
      expect(watched.log.open).toBe(1)
      // The one slot of the token is taken.
      expect((yield* request(url, auth)).status).toBe(429)
      yield* opened.abort
      // The server notices and interrupts the stream; the slot is free again.
      const again = yield* Effect.retry(
        Effect.filterOrFail(readFirst(url, auth), (status) => status === 200, (status) => `still ${status}`),
        { times: 20 }
      )
      expect(again).toBe(200)
      // With no reader left (the server notices each client's going on its own time),
      // the shared tail closes once it has been idle for idleMs on the Clock.
      for (let round = 0; watched.log.open > 0 && round < 10; round++) {
        yield* TestClock.adjust(SharedTail.defaults.idleMs)
        for (let spins = 0; watched.log.open > 0 && spins < 1_000; spins++) yield* Effect.yieldNow
      }
      yield* watched.released(1)
      expect(watched.log.open).toBe(0)
    }).pipe(Effect.provide(watched.layer.pipe(Layer.provideMerge(RedisStreamsMemory.layer))))
  })

  // The turn's first entry is read before the rest is written: the shared tail opens
  // after it ("0-1") and reads the rest live.
  const liveTurn = (total: number) =>
    Effect.gen(function*() {
      const turnId = randomUUID()
      const messages = upsertMessages(turnId, total)
      const produce = yield* producer(turnId, messages)
      yield* produce.release(1)
      return { turnId, messages, produce }
    })

  it.effect("a shared tail that fails mid-turn is resumed from the last entry it read: the client sees every entry once", () => {
    const watched = watchedTails((call) => (call < 4 ? { fail: true, after: 9, reason: "Unavailable" } : pass))
    return Effect.gen(function*() {
      const base = yield* serve({ resumeBaseMs: 0, resumeMaxMs: 0 })
      const { messages, produce, turnId } = yield* liveTurn(50)
      const opened = yield* open(`${base}/v1/turns/${turnId}/upserts`, auth)
      const pull = yield* Stream.toPull(opened.events)
      const seen: Array<Received> = []
      while (seen.length < 1) seen.push(...Array.from(yield* pull, received))
      yield* produce.release(49)
      const end = yield* Effect.flip(
        Effect.forever(Effect.map(pull, (chunk) => seen.push(...Array.from(chunk, received))))
      )
      expect(Cause.isDone(end)).toBe(true)
      expect(seen).toStrictEqual(expectedFrames(messages))
      expect(watched.log.starts).toStrictEqual(["0-1", "0-10", "0-19", "0-28", "0-37"])
    }).pipe(Effect.provide(watched.layer.pipe(Layer.provideMerge(RedisStreamsMemory.layer))))
  })

  it.effect("a shared tail that keeps failing ends its readers' streams with a stream_error event after the entries they read", () => {
    const watched = watchedTails((call) => ({ fail: true, after: call === 0 ? 3 : 0, reason: "Unavailable" }))
    return Effect.gen(function*() {
      const base = yield* serve({ resumeAttempts: 2, resumeBaseMs: 0, resumeMaxMs: 0 })
      const { messages, produce, turnId } = yield* liveTurn(10)
      const opened = yield* open(`${base}/v1/turns/${turnId}/upserts`, auth)
      const pull = yield* Stream.toPull(opened.events)
      const events: Array<Received> = []
      while (events.length < 1) events.push(...Array.from(yield* pull, received))
      yield* produce.release(9)
      const end = yield* Effect.flip(
        Effect.forever(Effect.map(pull, (chunk) => events.push(...Array.from(chunk, received))))
      )
      expect(Cause.isDone(end)).toBe(true)
      expect(events.slice(0, 4)).toStrictEqual(expectedFrames(messages).slice(0, 4))
      expect(events.length).toBe(5)
      expect(events[4]!.event).toBe("stream_error")
      expect(JSON.parse(events[4]!.data)).toMatchObject({ error: { code: "redis_unavailable" } })
      expect(watched.log.starts).toStrictEqual(["0-1", "0-4", "0-4"])
    }).pipe(Effect.provide(watched.layer.pipe(Layer.provideMerge(RedisStreamsMemory.layer))))
  })

  it.effect("heartbeat comments every heartbeatMs on the Clock; an idle stream closes after idleTimeoutMs, and resuming continues it", () =>
    Effect.gen(function*() {
      const base = yield* serve({ heartbeatMs: 1_000, idleTimeoutMs: 2_500 })
      const turnId = randomUUID()
      const messages = upsertMessages(turnId, 8)
      const produce = yield* producer(turnId, messages)
      yield* produce.release(2)
      const url = `${base}/v1/turns/${turnId}/upserts`
      const opened = yield* open(url, auth)
      const decoder = new TextDecoder()
      const pull = yield* Stream.toPull(opened.bytes)
      let text = ""
      const readUntil = (predicate: (text: string) => boolean) =>
        Effect.gen(function*() {
          while (!predicate(text)) {
            text += Array.from(yield* pull, (bytes) => decoder.decode(bytes, { stream: true })).join("")
          }
        })
      yield* readUntil((t) => t.includes("id: 0-2\n"))
      expect(text.startsWith(": connected\n\n")).toBe(true)
      // The heartbeat and the idle timeout wait on the server's Clock (the TestClock).
      yield* untilSleeping(2)
      yield* TestClock.adjust(1_000)
      yield* readUntil((t) => t.endsWith(": ping\n\n"))
      yield* TestClock.adjust(1_000)
      yield* readUntil((t) => t.split(": ping\n\n").length === 3)
      yield* TestClock.adjust(500)
      // Idle for 2.5 s: the server ends the stream without the turn's end.
      const end = yield* Effect.flip(pull)
      expect(Cause.isDone(end)).toBe(true)
      const frames = yield* Sse.decodeText(text)
      expect(frames.map(received)).toStrictEqual(expectedFrames(messages.slice(0, 2)))
      yield* produce.release(6)
      expect(yield* readAll(url, { ...auth, "last-event-id": "0-2" })).toStrictEqual(expectedFrames(messages, 2))
    }).pipe(withSleeps, Effect.provide(RedisStreamsMemory.layer)))
})

describe("resuming past the end", () => {
  it.effect("an id past the last entry of a finished turn closes the stream at once, with no event, and frees the slot", () =>
    Effect.gen(function*() {
      const base = yield* serve({ maxStreamsPerToken: 1 })
      const turnId = randomUUID()
      yield* publishUpserts(turnId, upsertMessages(turnId, 10))
      for (const stream of ["upserts", "events"] as const) {
        if (stream === "events") yield* publishEvents(turnId, streamEvents(turnId, 10))
        const url = `${base}/v1/turns/${turnId}/${stream}`
        // No heartbeat, no idle timeout: the TestClock never moves here, so only an
        // immediate close ends these reads.
        expect(yield* readAll(url, { ...auth, "last-event-id": "0-99" })).toStrictEqual([])
        expect(yield* readAll(`${url}?after=0-10`, auth)).toStrictEqual([])
        expect(yield* readAll(`${url}?after=1-0`, auth)).toStrictEqual([])
        // The one slot of the token is free again.
        expect(yield* readFirst(url, auth)).toBe(200)
      }
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("an id past the last entry of a running turn waits for the entries after it", () =>
    Effect.gen(function*() {
      const { messages, seen } = yield* resumeRunningTurn(20, 4, "0-7")
      expect(seen).toStrictEqual(expectedFrames(messages, 7))
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("a running turn that ends before reaching the id closes the stream when it ends, with no event", () =>
    Effect.gen(function*() {
      const { seen } = yield* resumeRunningTurn(10, 3, "0-99")
      expect(seen).toStrictEqual([])
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

describe("closing the server", () => {
  it.effect("ends open streams cleanly with a server_closing event, and the server's scope closes", () =>
    Effect.gen(function*() {
      const serverScope = yield* Scope.make()
      const base = yield* Scope.provide(serve(), serverScope)
      const turnId = randomUUID()
      const messages = upsertMessages(turnId, 10)
      const produce = yield* producer(turnId, messages)
      yield* produce.release(4)
      const opened = yield* open(`${base}/v1/turns/${turnId}/upserts`, auth)
      const pull = yield* Stream.toPull(opened.events)
      const seen: Array<Received> = []
      while (seen.length < 4) seen.push(...Array.from(yield* pull, received))
      yield* Scope.close(serverScope, Exit.void)
      // the readers are told to reconnect (elsewhere), after the last entry they got
      const closing: Array<Received> = []
      while (closing.length < 1) closing.push(...Array.from(yield* pull, received))
      // (it has no id of its own: a reader's last event id stays the last entry's)
      expect(closing).toStrictEqual([{ id: "0-4", event: "server_closing", data: "{\"reconnect\":true}" }])
      // The response ends as a stream does, not as a broken connection.
      const end = yield* Effect.flip(pull)
      expect(Cause.isDone(end)).toBe(true)
      expect(seen).toStrictEqual(expectedFrames(messages.slice(0, 4)))
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

// The status of a stream request, read to its first event and then dropped.
const readFirst = (url: string, headers: Record<string, string>) =>
  Effect.scoped(Effect.flatMap(open(url, headers), (opened) =>
    opened.status === 200
      ? Effect.as(Stream.runDrain(Stream.take(opened.events, 1)), opened.status)
      : Effect.succeed(opened.status)))

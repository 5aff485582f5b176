/**
 * Readers that come before the turn (`awaitTurnMs`): an SSE route asked for a turn
 * whose stream is not written yet waits for it, on the server's Clock (the TestClock
 * here), before answering; the reader then gets the whole turn, or 404
 * `turn_not_found` once the bound has passed. Real HTTP on the in-memory store.
 */
import { describe, expect, it } from "@effect/vitest"
import { followTurn } from "@sluice/client"
import { RedisStreamsMemory } from "@sluice/redis"
import { sleeps, withSleeps } from "@sluice/testing/clock"
import {
  bearer,
  call,
  expectedFrames,
  open,
  producer,
  publishEvents,
  received,
  serve,
  tokens
} from "@sluice/testing/server"
import { streamEvents, upsertMessages } from "@sluice/testing/turns"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { randomUUID } from "node:crypto"
import * as TurnFeed from "../src/TurnFeed.js"
import { uiTurn } from "./support/uiTurns.js"

const auth = bearer(tokens[0])

// Waits (without sleeping: the request and the server run on their own) until some
// fiber sleeps on the TestClock until `at`: a waiting reader's next look. A reader
// answered at once never sleeps, and this dies.
const untilSleepAt = (at: number) =>
  Effect.gen(function*() {
    for (let spins = 0; spins < 100_000; spins++) {
      if ((yield* sleeps).includes(at)) return
      yield* Effect.yieldNow
    }
    return yield* Effect.die(new Error(`no sleep until ${at} on the TestClock`))
  })

// The next look of a reader that started waiting now.
const nextLook = Effect.flatMap(Clock.currentTimeMillis, (now) => untilSleepAt(now + TurnFeed.awaitPollMs))

// A GET of a stream route read to its end: status, and the body's SSE events.
const readStream = (url: string) =>
  Effect.scoped(Effect.gen(function*() {
    const opened = yield* open(url, auth)
    const events = Array.from(yield* Stream.runCollect(opened.events), received)
    return { status: opened.status, events }
  }))

describe("a reader that comes before the turn", () => {
  it.effect("is answered once the stream is written, and follows the whole turn to its end", () =>
    Effect.gen(function*() {
      const base = yield* serve({ awaitTurnMs: 5_000 })
      const turnId = randomUUID()
      const reader = yield* Effect.forkChild(readStream(`${base}/v1/turns/${turnId}/upserts`))
      // The server looked, found nothing, and waits.
      yield* nextLook
      const messages = upsertMessages(turnId, 12)
      const produce = yield* producer(turnId, messages)
      yield* produce.release(3)
      // Its next look finds the first entries; the response begins from the start.
      yield* TestClock.adjust(TurnFeed.awaitPollMs)
      yield* produce.release(9)
      const { events, status } = yield* Fiber.join(reader)
      expect(status).toBe(200)
      expect(events).toStrictEqual(expectedFrames(messages))
    }).pipe(withSleeps, Effect.provide(RedisStreamsMemory.layer)))

  it.effect("on /events and /ui-message-stream too: the same answer as a reader that came after the turn", () =>
    Effect.gen(function*() {
      const base = yield* serve({ awaitTurnMs: 5_000 })
      const eventsTurn = randomUUID()
      const uiTurnId = randomUUID()
      const eventsUrl = `${base}/v1/turns/${eventsTurn}/events`
      const uiUrl = `${base}/v1/turns/${uiTurnId}/ui-message-stream`
      const early = yield* Effect.forkChild(readStream(eventsUrl))
      const earlyUi = yield* Effect.forkChild(call(uiUrl, { headers: auth }))
      yield* nextLook
      // Two readers wait; a second look of each is due at the same time.
      yield* Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.gen(function*() {
          for (let spins = 0; spins < 100_000; spins++) {
            if ((yield* sleeps).filter((at) => at === now + TurnFeed.awaitPollMs).length >= 2) return
            yield* Effect.yieldNow
          }
          return yield* Effect.die(new Error("the two readers do not both wait"))
        }))
      yield* publishEvents(eventsTurn, streamEvents(eventsTurn, 6))
      yield* publishEvents(uiTurnId, uiTurn(uiTurnId))
      yield* TestClock.adjust(TurnFeed.awaitPollMs)
      const read = yield* Fiber.join(early)
      const readUi = yield* Fiber.join(earlyUi)
      expect(read.status).toBe(200)
      expect(read.events.length).toBe(6)
      expect(read.events).toStrictEqual((yield* readStream(eventsUrl)).events)
      expect(readUi.status).toBe(200)
      expect(readUi.contentType).toMatch(/^text\/event-stream/)
      expect(readUi.text.endsWith("data: [DONE]\n\n")).toBe(true)
      expect(readUi.text).toStrictEqual((yield* call(uiUrl, { headers: auth })).text)
    }).pipe(withSleeps, Effect.provide(RedisStreamsMemory.layer)))

  it.effect("@sluice/client's followTurn, started before the turn's first write, follows it to its end", () =>
    Effect.gen(function*() {
      const base = yield* serve({ awaitTurnMs: 5_000 })
      const turnId = randomUUID()
      const handle = followTurn(base, turnId, { token: tokens[0], awaitTurnMs: 5_000 })
      // the snapshot is not there: the client opens the feed, which the server holds
      yield* nextLook
      expect(handle.getSnapshot().connection).toBe("loading")
      const messages = upsertMessages(turnId, 10)
      const produce = yield* producer(turnId, messages)
      yield* produce.release(2)
      yield* TestClock.adjust(TurnFeed.awaitPollMs)
      yield* produce.release(8)
      const final = yield* Effect.promise(() => handle.done)
      expect([final.connection, final.status, final.lastEventId, final.lastError]).toStrictEqual([
        "finished",
        "complete",
        "0-10",
        undefined
      ])
      // what a reader that came after the turn sees
      const after = yield* Effect.promise(() => followTurn(base, turnId, { token: tokens[0] }).done)
      expect(final.items).toStrictEqual(after.items)
      expect(final.items.map((item) => item.content)).toStrictEqual([
        Array.from({ length: 8 }, (_, i) => `word ${i + 1} `).join("")
      ])
    }).pipe(withSleeps, Effect.provide(RedisStreamsMemory.layer)))

  it.effect("of a turn that never comes is answered 404 turn_not_found once awaitTurnMs have passed, not before", () =>
    Effect.gen(function*() {
      const awaitTurnMs = 1_000
      const base = yield* serve({ awaitTurnMs })
      for (const route of ["upserts", "events", "ui-message-stream"]) {
        const start = yield* Clock.currentTimeMillis
        const reader = yield* Effect.forkChild(call(`${base}/v1/turns/${randomUUID()}/${route}`, { headers: auth }))
        // It looks every awaitPollMs up to the bound; until then it is still waiting.
        for (let at = start + TurnFeed.awaitPollMs; at <= start + awaitTurnMs; at += TurnFeed.awaitPollMs) {
          yield* untilSleepAt(at)
          expect(reader.pollUnsafe()).toBeUndefined()
          yield* TestClock.adjust(TurnFeed.awaitPollMs)
        }
        const answer = yield* Fiber.join(reader)
        expect(answer.status).toBe(404)
        expect(JSON.parse(answer.text)).toMatchObject({
          error: { code: "turn_not_found", message: expect.stringContaining(`waited up to ${awaitTurnMs} ms`) }
        })
      }
    }).pipe(withSleeps, Effect.provide(RedisStreamsMemory.layer)))

  it.effect("holds one of its token's stream slots while it waits, and is answered 404 at once when the server closes", () =>
    Effect.gen(function*() {
      const serverScope = yield* Scope.make()
      const base = yield* Scope.provide(serve({ awaitTurnMs: 60_000, maxStreamsPerToken: 1 }), serverScope)
      const url = `${base}/v1/turns/${randomUUID()}/upserts`
      const reader = yield* Effect.forkChild(call(url, { headers: auth }))
      yield* nextLook
      // The one slot is the waiting reader's.
      const second = yield* call(`${base}/v1/turns/${randomUUID()}/events`, { headers: auth })
      expect(second.status).toBe(429)
      yield* Scope.close(serverScope, Exit.void)
      const answer = yield* Fiber.join(reader)
      expect(answer.status).toBe(404)
      expect(JSON.parse(answer.text)).toMatchObject({ error: { code: "turn_not_found" } })
    }).pipe(withSleeps, Effect.provide(RedisStreamsMemory.layer)))

  it.effect("with awaitTurnMs 0 (the library's default) is answered 404 at once", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const answer = yield* call(`${base}/v1/turns/${randomUUID()}/upserts`, { headers: auth })
      expect(answer.status).toBe(404)
      expect(JSON.parse(answer.text)).toMatchObject({ error: { code: "turn_not_found" } })
      expect(yield* TurnFeed.awaitStream("nowhere", { waitMs: 0 })).toBe(false)
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

/**
 * The server's sweep of turns whose producer died, on the in-memory store and the
 * TestClock: a turn nobody reads is ended `producer_lost` once its lease lapses; a turn
 * whose lease holds, a turn that ended on its own and a turn without a lease are left
 * as they are; two servers sweeping the same prefix end a turn once.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams, RedisStreamsMemory, type StreamEntry } from "@sluice/redis"
import { untilSleeping, withSleeps } from "@sluice/testing/clock"
import { bearer, prefix, producer, publishEvents, request, serve, tokens } from "@sluice/testing/server"
import { streamEvents, upsertMessages } from "@sluice/testing/turns"
import { TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import { randomUUID } from "node:crypto"
import * as LeaseSweeper from "../src/internal/leaseSweeper.js"

const leaseMs = 6_000
const options: LeaseSweeper.SweepOptions = { prefix, everyMs: 5_000, batch: 100 }

const typeOf = (entry: StreamEntry.StreamEntry) => entry.fields.find(([name]) => name === "payloadType")?.[1]
const payloadOf = (entry: StreamEntry.StreamEntry) => entry.fields.find(([name]) => name === "payload")?.[1] ?? ""

// A turn in the index with Stream A's first events and Stream B's first messages; with
// a lease that nobody renews when `lease` says so (its producer is dead from now on).
const turn = (options: { readonly lease: boolean; readonly ended?: boolean }) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const turnId = randomUUID()
    yield* redis.zadd(TurnKeys.turnsKey(prefix), 1, turnId)
    if (options.lease) {
      yield* redis.setPx(TurnKeys.leasedKey(prefix, turnId), "1", 24 * 60 * 60 * 1000)
      yield* redis.setPx(TurnKeys.leaseKey(prefix, turnId), "1", leaseMs)
    }
    const events = streamEvents(turnId, 20)
    const messages = upsertMessages(turnId, 20)
    yield* publishEvents(turnId, options.ended === true ? events : events.slice(0, 5))
    const produce = yield* producer(turnId, messages)
    yield* produce.release(options.ended === true ? messages.length : 4)
    return turnId
  })

const streams = (turnId: string) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    return {
      a: yield* redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+"),
      b: yield* redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")
    }
  })

describe("the server's sweep of dead producers", () => {
  it.effect("ends a lapsed turn nobody reads, in both streams, and leaves the others alone", () =>
    Effect.gen(function*() {
      const dead = yield* turn({ lease: true })
      const noLease = yield* turn({ lease: false })
      const before = { dead: yield* streams(dead), noLease: yield* streams(noLease) }
      const swept: LeaseSweeper.Swept = { ended: new Set() }

      // the lease still holds: nothing is ended
      expect(yield* LeaseSweeper.sweepOnce(options, swept)).toBe(0)
      yield* TestClock.adjust(leaseMs)
      expect(yield* LeaseSweeper.sweepOnce(options, swept)).toBe(1)

      const after = yield* streams(dead)
      expect(after.a.length).toBe(before.dead.a.length + 2)
      expect(after.a.slice(-2).map(typeOf)).toStrictEqual(["response_error", "response_done"])
      expect(after.b.length).toBe(before.dead.b.length + 2)
      expect(JSON.parse(payloadOf(after.b.at(-2)!))).toMatchObject({
        type: "turn_error",
        turnId: dead,
        error: { code: "producer_lost" }
      })
      expect(JSON.parse(payloadOf(after.b.at(-1)!))).toMatchObject({
        type: "turn_completed",
        turnId: dead,
        status: "error"
      })
      expect(yield* streams(noLease)).toStrictEqual(before.noLease)

      // the next sweeps write nothing more, and remember the turn as ended
      expect(yield* LeaseSweeper.sweepOnce(options, swept)).toBe(0)
      expect(swept.ended.has(dead)).toBe(true)
      expect((yield* streams(dead)).b.length).toBe(after.b.length)
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("a turn that ended on its own is not ended again when its lease is gone", () =>
    Effect.gen(function*() {
      const done = yield* turn({ lease: true, ended: true })
      const before = yield* streams(done)
      yield* TestClock.adjust(leaseMs)
      expect(yield* LeaseSweeper.sweepOnce(options, { ended: new Set() })).toBe(0)
      expect(yield* streams(done)).toStrictEqual(before)
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("two servers sweeping the same prefix end a dead turn once", () =>
    Effect.gen(function*() {
      const dead = yield* turn({ lease: true })
      const before = yield* streams(dead)
      yield* TestClock.adjust(leaseMs)
      const [first, second] = yield* Effect.all([
        LeaseSweeper.sweepOnce(options, { ended: new Set() }),
        LeaseSweeper.sweepOnce(options, { ended: new Set() })
      ], { concurrency: 2 })
      expect(first + second).toBe(1)
      const after = yield* streams(dead)
      expect(after.a.length).toBe(before.a.length + 2)
      expect(after.b.length).toBe(before.b.length + 2)
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("sweeps on its own every everyMs of Effect's Clock", () =>
    Effect.gen(function*() {
      const dead = yield* turn({ lease: true })
      const before = yield* streams(dead)
      const fiber = yield* Effect.forkChild(LeaseSweeper.sweep(options))
      yield* untilSleeping(1)
      yield* TestClock.adjust(options.everyMs)
      yield* untilSleeping(1)
      // 5 s: the lease (6 s) still holds
      expect((yield* streams(dead)).b.length).toBe(before.b.length)
      yield* TestClock.adjust(options.everyMs)
      yield* untilSleeping(1)
      expect((yield* streams(dead)).b.length).toBe(before.b.length + 2)
      yield* Fiber.interrupt(fiber)
    }).pipe(withSleeps, Effect.provide(RedisStreamsMemory.layer)))

  it.effect("over HTTP: a turn nobody reads is listed ended once the server has swept", () =>
    Effect.gen(function*() {
      const base = yield* serve({ sweepEveryMs: 5_000 })
      const dead = yield* turn({ lease: true })
      const statusOf = Effect.map(
        request(`${base}/v1/turns`, bearer(tokens[0])),
        (response) => {
          const body: unknown = response.body
          const turns = typeof body === "object" && body !== null && "turns" in body && Array.isArray(body.turns)
            ? body.turns
            : []
          const listed: unknown = turns.find((t: unknown) =>
            typeof t === "object" && t !== null && "turnId" in t && t.turnId === dead
          )
          return typeof listed === "object" && listed !== null && "status" in listed ? listed.status : undefined
        }
      )
      expect(yield* statusOf).toBe("streaming")
      // the sweep at 5 s finds the lease (6 s) held; the one at 10 s ends the turn
      for (let i = 0; i < 2; i++) {
        yield* untilSleeping(1)
        yield* TestClock.adjust(options.everyMs)
      }
      for (let i = 0; i < 1_000 && (yield* statusOf) === "streaming"; i++) yield* Effect.yieldNow
      expect(yield* statusOf).toBe("error")
    }).pipe(withSleeps, Effect.provide(RedisStreamsMemory.layer)))
})

/**
 * Shared waits (`StreamWaits`) on a redis-server of their own: waiters of many streams
 * share at most `connections` blocking connections and each wakes on its stream; a
 * stream the running `XREAD` does not cover yet is covered at once (its block is
 * restarted, not waited out); a waiter's `dueMs` is kept by Redis's clock (the test's
 * clock never moves); its own timeout by Effect's `Clock`.
 */
import { describe, expect, it } from "@effect/vitest"
import { scopedRedisServer } from "@sluice/testing/redis"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import { Redis } from "ioredis"
import * as StreamWaits from "../src/StreamWaits.js"

const probe = (url: string) =>
  Effect.acquireRelease(
    Effect.sync(() => new Redis(url, { maxRetriesPerRequest: 1 })),
    (redis) => Effect.sync(() => redis.disconnect())
  )

const blockedTails = (redis: Redis) =>
  Effect.map(
    Effect.promise(() => redis.call("CLIENT", "LIST")),
    (list) => String(list).split("\n").filter((line) => / name=sluice-tail .* flags=b /.test(line)).length
  )

const xadd = (redis: Redis, key: string) => Effect.promise(() => redis.call("XADD", key, "*", "v", "1"))

/** A redis-server of the test's own, a connection to it, and the waits on it. */
const onServer = (options: Partial<StreamWaits.StreamWaitsOptions>) =>
  Effect.gen(function*() {
    const server = yield* scopedRedisServer()
    const redis = yield* probe(server.url)
    const waits = yield* StreamWaits.make({ url: server.url }, options)
    return { redis, waits }
  })

describe("StreamWaits", () => {
  it.effect(
    "waiters of 200 streams share 2 blocking connections, and each wakes on its stream",
    () =>
      Effect.gen(function*() {
        const { redis, waits } = yield* onServer({ connections: 2 })
        const keys = Array.from({ length: 200 }, (_, i) => `waits:${i}`)
        const waiting = yield* Effect.forkChild(
          Effect.forEach(
            [...keys, ...keys],
            (key) => waits.await({ key, after: "0-0", timeoutMs: 60_000 }),
            { concurrency: "unbounded" }
          )
        )
        while ((yield* waits.streams) < 200 || (yield* blockedTails(redis)) < 2) yield* Effect.yieldNow
        expect(yield* waits.connections).toBe(2)
        yield* Effect.forEach(keys, (key) => xadd(redis, key), { discard: true })
        const woken = yield* Fiber.join(waiting)
        expect(woken.filter((w) => w === "changed").length).toBe(400)
        // a waiter from an id its stream has passed is woken at once
        expect(yield* waits.await({ key: keys[0]!, after: "0-0", timeoutMs: 60_000 })).toBe("changed")
      }),
    60_000
  )

  it.effect(
    "a stream that joins a blocked read is covered at once, not when its block (10 min) runs out",
    () =>
      Effect.gen(function*() {
        const { redis, waits } = yield* onServer({ connections: 1, blockMs: 600_000 })
        const first = yield* Effect.forkChild(waits.await({ key: "first", after: "0-0", timeoutMs: 600_000 }))
        while ((yield* blockedTails(redis)) < 1) yield* Effect.yieldNow
        for (let i = 0; i < 20; i++) {
          const joined = yield* Effect.forkChild(waits.await({ key: `late:${i}`, after: "0-0", timeoutMs: 600_000 }))
          while ((yield* waits.streams) < 2) yield* Effect.yieldNow
          yield* xadd(redis, `late:${i}`)
          expect(yield* Fiber.join(joined)).toBe("changed")
        }
        yield* xadd(redis, "first")
        expect(yield* Fiber.join(first)).toBe("changed")
        expect(yield* waits.connections).toBe(1)
      }),
    60_000
  )

  it.effect("dueMs is kept by Redis's block, the waiter's timeout by the Clock", () =>
    Effect.gen(function*() {
      const server = yield* scopedRedisServer()
      const waits = yield* StreamWaits.make({ url: server.url }, { connections: 1 })
      // the test's clock stands still: Redis's block ends the wait
      expect(yield* waits.await({ key: "quiet", after: "0-0", timeoutMs: 600_000, dueMs: 200 })).toBe("due")
      const timing = yield* Effect.forkChild(waits.await({ key: "quiet", after: "0-0", timeoutMs: 5_000 }), {
        startImmediately: true
      })
      while ((yield* waits.streams) < 1) yield* Effect.yieldNow
      yield* TestClock.adjust(5_000)
      expect(yield* Fiber.join(timing)).toBe("timeout")
    }), 60_000)
})

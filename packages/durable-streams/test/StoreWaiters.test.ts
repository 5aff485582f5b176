/**
 * The live store's waits on a redis-server of their own: a wait that is answered gives
 * its blocking connection back for the next, so a reader that waits after every append
 * holds one connection, not one per append; a wait interrupted mid-block closes its
 * connection (it may still be blocked) rather than giving it back.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { Redis } from "ioredis"
import { randomUUID } from "node:crypto"
import { scopedRedisServer } from "../../redis/test/support/RedisServer.js"
import { DurableStore } from "../src/DurableStore.js"
import * as DurableStoreLive from "../src/DurableStoreLive.js"

const persist = { _tag: "Persist" } as const
const bytes = (text: string) => new TextEncoder().encode(text)

/** A connection of the test's own that lists the server's clients. */
const probe = (url: string) =>
  Effect.acquireRelease(
    Effect.sync(() => new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1 })),
    (redis) => Effect.promise(() => redis.quit().catch(() => "closed"))
  )

const clients = (redis: Redis) =>
  Effect.map(Effect.promise(() => redis.call("CLIENT", "LIST")), (list) => String(list).split("\n"))

/** How many connections the server has accepted since it started. */
const accepted = (redis: Redis) =>
  Effect.map(
    Effect.promise(() => redis.call("INFO", "stats")),
    (info) => Number(/total_connections_received:(\d+)/.exec(String(info))?.[1] ?? NaN)
  )

/** The store's blocking connections (`sluice-tail`), and how many of them are blocked. */
const waiters = (redis: Redis) =>
  Effect.map(clients(redis), (lines) => {
    const tails = lines.filter((line) => / name=sluice-tail /.test(line))
    return { open: tails.length, blocked: tails.filter((line) => / flags=b /.test(line)).length }
  })

describe("DurableStoreLive waits", () => {
  it.effect(
    "a reader that waits after every append holds one blocking connection; an interrupted wait closes its own",
    () =>
      Effect.gen(function*() {
        const server = yield* scopedRedisServer()
        const redis = yield* probe(server.url)
        const program = Effect.gen(function*() {
          const store = yield* DurableStore
          const stream = randomUUID()
          yield* store.commit(stream, { expect: 0, set: { ct: "text/plain" }, append: [], expiry: persist })
          const before = yield* accepted(redis)
          for (let round = 0; round < 30; round++) {
            const state = Option.getOrThrow(yield* store.load(stream))
            const waiting = yield* Effect.forkChild(store.awaitChange(stream, state.signal, 30_000))
            // the wait is blocked on the server before the append (no clock: the server says so)
            while ((yield* waiters(redis)).blocked < 1) yield* Effect.yieldNow
            yield* store.commit(stream, {
              expect: state.version,
              set: {},
              append: [bytes(`${round}`)],
              expiry: persist
            })
            expect(yield* Fiber.join(waiting)).toBe(true)
          }
          // one blocking connection opened for the thirty waits, and kept
          expect((yield* accepted(redis)) - before).toBe(1)
          expect(yield* waiters(redis)).toStrictEqual({ open: 1, blocked: 0 })

          const state = Option.getOrThrow(yield* store.load(stream))
          const interrupted = yield* Effect.forkChild(store.awaitChange(stream, state.signal, 30_000))
          while ((yield* waiters(redis)).blocked < 1) yield* Effect.yieldNow
          yield* Fiber.interrupt(interrupted)
          while ((yield* waiters(redis)).open > 0) yield* Effect.yieldNow
          expect(yield* waiters(redis)).toStrictEqual({ open: 0, blocked: 0 })
        })
        yield* program.pipe(Effect.provide(DurableStoreLive.layer({ url: server.url, prefix: "waiters" })))
      }),
    120_000
  )
})

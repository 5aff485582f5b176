/**
 * The live store's waits on a redis-server of their own (docs/http.md#shared-waits):
 * waits are shared by stream and spread over at most `waitConnections` blocking
 * connections, so a thousand waits of one stream, and a thousand of a thousand
 * streams, hold no more blocking connections than that, and each wakes on the commit
 * to its stream; a reader that waits after every append reuses the one connection; an
 * interrupted wait leaves the others waiting.
 */
import { describe, expect, it } from "@effect/vitest"
import { scopedRedisServer } from "@sluice/testing/redis"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { Redis } from "ioredis"
import { randomUUID } from "node:crypto"
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

/** The store's connections (`sluice*`), its blocking ones (`sluice-tail`), and how many of those are blocked. */
const connections = (redis: Redis) =>
  Effect.map(clients(redis), (lines) => {
    const tails = lines.filter((line) => / name=sluice-tail /.test(line))
    return {
      store: lines.filter((line) => / name=sluice/.test(line)).length,
      open: tails.length,
      blocked: tails.filter((line) => / flags=b /.test(line)).length
    }
  })

/** How many scripts the server has run (a wait runs one before it joins an `XREAD`). */
const scripts = (redis: Redis) =>
  Effect.map(
    Effect.promise(() => redis.call("INFO", "commandstats")),
    (info) => Number(/cmdstat_eval:calls=(\d+)/.exec(String(info))?.[1] ?? 0)
  )

/** Until `blocked` of the store's blocking connections are blocked on the server. */
const untilBlocked = (redis: Redis, blocked: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100_000; i++) {
      if ((yield* connections(redis)).blocked >= blocked) return
      yield* Effect.yieldNow
    }
  })

const created = (store: DurableStore["Service"], stream: string) =>
  store.commit(stream, { expect: 0, set: { ct: "text/plain" }, append: [], expiry: persist })

/** Appends `text` to the stream as it is now. */
const append = (store: DurableStore["Service"], stream: string, text: string) =>
  Effect.flatMap(store.load(stream), (state) =>
    store.commit(stream, {
      expect: Option.getOrThrow(state).version,
      set: {},
      append: [bytes(text)],
      expiry: persist
    }))

/** `program` on a redis-server of its own, with a connection of the test's to it. */
const onServer = <A>(
  options: Partial<DurableStoreLive.DurableLiveOptions>,
  program: (redis: Redis) => Effect.Effect<A, unknown, DurableStore>
) =>
  Effect.gen(function*() {
    const server = yield* scopedRedisServer()
    const redis = yield* probe(server.url)
    return yield* program(redis).pipe(
      Effect.provide(DurableStoreLive.layer({ url: server.url, prefix: "waiters", ...options }))
    )
  })

describe("DurableStoreLive waits", () => {
  it.effect(
    "a thousand waits of one stream and a thousand of a thousand streams hold at most waitConnections; each wakes",
    () =>
      onServer({ waitConnections: 4 }, (redis) =>
        Effect.gen(function*() {
          const store = yield* DurableStore
          const one = randomUUID()
          const many = Array.from({ length: 1_000 }, () => randomUUID())
          yield* created(store, one)
          yield* Effect.forEach(many, (stream) => created(store, stream), { concurrency: 50, discard: true })
          const before = yield* connections(redis)
          const signalOf = (stream: string) =>
            Effect.map(store.load(stream), (state) => Option.getOrThrow(state).signal)
          const oneSignal = yield* signalOf(one)
          const manySignals = yield* Effect.forEach(many, signalOf, { concurrency: 50 })
          const ran = yield* scripts(redis)
          const waiting = yield* Effect.forkChild(
            Effect.all([
              Effect.forEach(
                Array.from({ length: 1_000 }),
                () => store.awaitChange(one, oneSignal, 120_000),
                { concurrency: "unbounded" }
              ),
              Effect.forEach(many, (stream, i) => store.awaitChange(stream, manySignals[i]!, 120_000), {
                concurrency: "unbounded"
              })
            ], { concurrency: "unbounded" })
          )
          // every wait has looked at its stream (one script each) and joined a blocked read
          while ((yield* scripts(redis)) < ran + 2_000) yield* Effect.yieldNow
          yield* untilBlocked(redis, 4)
          let most = yield* connections(redis)
          for (let i = 0; i < 20; i++) {
            const now = yield* connections(redis)
            if (now.store > most.store) most = now
          }
          expect(most.open).toBe(4)
          expect(most.store - before.store).toBeLessThanOrEqual(4)
          yield* append(store, one, "x")
          yield* Effect.forEach(many, (stream) => append(store, stream, "x"), { concurrency: 50, discard: true })
          const [ofOne, ofMany] = yield* Fiber.join(waiting)
          expect(ofOne.filter((changed) => changed).length).toBe(1_000)
          expect(ofMany.filter((changed) => changed).length).toBe(1_000)
          expect((yield* connections(redis)).open).toBeLessThanOrEqual(4)
        })),
    120_000
  )

  it.effect(
    "a reader that waits after every append reuses one blocking connection; an interrupted wait leaves it to the others",
    () =>
      onServer({}, (redis) =>
        Effect.gen(function*() {
          const store = yield* DurableStore
          const stream = randomUUID()
          yield* created(store, stream)
          const before = yield* accepted(redis)
          for (let round = 0; round < 30; round++) {
            const state = Option.getOrThrow(yield* store.load(stream))
            const waiting = yield* Effect.forkChild(store.awaitChange(stream, state.signal, 30_000))
            // the wait is blocked on the server before the append (no clock: the server says so)
            yield* untilBlocked(redis, 1)
            yield* append(store, stream, `${round}`)
            expect(yield* Fiber.join(waiting)).toBe(true)
          }
          // one blocking connection for the thirty waits, and the command connection
          // that restarts a blocked read when a new stream joins it: nothing opened per wait
          expect((yield* accepted(redis)) - before).toBeLessThanOrEqual(1)
          expect((yield* connections(redis)).open).toBe(1)

          const state = Option.getOrThrow(yield* store.load(stream))
          const interrupted = yield* Effect.forkChild(store.awaitChange(stream, state.signal, 30_000))
          const kept = yield* Effect.forkChild(store.awaitChange(stream, state.signal, 30_000))
          yield* untilBlocked(redis, 1)
          yield* Fiber.interrupt(interrupted)
          yield* append(store, stream, "z")
          expect(yield* Fiber.join(kept)).toBe(true)
          expect((yield* connections(redis)).open).toBe(1)
        })),
    120_000
  )
})

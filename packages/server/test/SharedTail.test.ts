/**
 * The shared tails on the in-memory store: every reader of a stream joins its one
 * tail, sees every entry once and in order whenever it joined, a reader that falls
 * behind catches up from the store, a tail closes `idleMs` after its last reader on the
 * Clock, and a failed tail fails its readers and is replaced for the next one.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams, RedisStreamsMemory, type StreamEntry } from "@sluice/redis"
import { sleeps, withSleeps } from "@sluice/testing/clock"
import { TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { randomUUID } from "node:crypto"
import * as SharedTail from "../src/SharedTail.js"
import { pass, watchedTails } from "./support/tails.js"

const prefix = "codex"

const options = (overrides: Partial<SharedTail.SharedTailOptions> = {}): SharedTail.SharedTailOptions => ({
  ...SharedTail.defaults,
  resume: Schedule.recurs(0),
  ...overrides
})

// Appends entries `from`..`to` (ids `0-<n>`) to a turn's Stream A; entry `total` is
// the turn's last (`response_done`).
const append = (key: string, from: number, to: number, total: number) =>
  RedisStreams.RedisStreams.use((redis) =>
    Effect.forEach(Array.from({ length: to - from + 1 }, (_, i) => from + i), (n) =>
      redis.xadd(key, {
        id: `0-${n}`,
        fields: [["payloadType", n === total ? "response_done" : "item_delta"], ["payload", `{"n":${n}}`]]
      }), { discard: true })
  )

// How many readers left their tail for falling behind, in the process.
const fellBehind = Effect.map(Metric.snapshot, (snapshots) => {
  const found = snapshots.find((snapshot) => snapshot.id === "sluice_shared_tail_fell_behind_total")
  return found?.type === "Counter" ? Number(found.state.count) : 0
})

const ids = (entries: ReadonlyArray<StreamEntry.StreamEntry>) => entries.map((entry) => entry.id)

// Lets the other fibers run until `done` holds (or for a bounded while).
const spinUntil = (done: () => boolean) =>
  Effect.gen(function*() {
    for (let spins = 0; !done() && spins < 10_000; spins++) yield* Effect.yieldNow
  })

const settle = spinUntil(() => false)

describe("SharedTail", () => {
  it.effect("readers of one stream share one tail; each sees every entry once, in order, wherever it joined", () => {
    const watched = watchedTails()
    return Effect.gen(function*() {
      const tails = yield* SharedTail.make(options())
      const turnId = randomUUID()
      const key = TurnKeys.streamKey(prefix, turnId, "upserts")
      yield* append(key, 1, 5, 30)
      const readers = yield* Effect.forEach(
        ["0-0", "0-2", "0-5"],
        (after) => Effect.forkChild(Stream.runCollect(tails.follow(key, after)))
      )
      yield* spinUntil(() => watched.log.open === 1)
      yield* append(key, 6, 20, 30)
      const late = yield* Effect.forkChild(Stream.runCollect(tails.follow(key, "0-10")))
      yield* append(key, 21, 30, 30)
      const seen = yield* Fiber.joinAll([...readers, late])
      const all = Array.from({ length: 30 }, (_, i) => `0-${i + 1}`)
      expect(seen.map(ids)).toStrictEqual([all, all.slice(2), all.slice(5), all.slice(10)])
      expect(watched.log.starts).toStrictEqual(["0-5"])
      expect(yield* tails.openTails).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(watched.layer.pipe(Layer.provideMerge(RedisStreamsMemory.layer))))
  })

  it.effect("a reader that falls more than readerBuffer entries behind catches up from the store, missing nothing", () =>
    Effect.gen(function*() {
      const tails = yield* SharedTail.make(options({ readerBuffer: 4 }))
      const turnId = randomUUID()
      const key = TurnKeys.streamKey(prefix, turnId, "upserts")
      yield* append(key, 1, 1, 40)
      const pull = yield* Stream.toPull(tails.follow(key, "0-0"))
      const first = yield* pull
      expect(ids(first)).toStrictEqual(["0-1"])
      // 39 entries arrive while the reader takes none: far more than its buffer.
      yield* append(key, 2, 40, 40)
      yield* settle
      const rest: Array<string> = []
      while (rest.length < 39) rest.push(...ids(yield* pull))
      expect(rest).toStrictEqual(Array.from({ length: 39 }, (_, i) => `0-${i + 2}`))
    }).pipe(Effect.scoped, Effect.provide(RedisStreamsMemory.layer)))

  it.effect(
    "a reader holding more than readerBufferBytes leaves the tail, what it held dropped, and catches up missing nothing",
    () =>
      Effect.gen(function*() {
        // about 45 bytes an entry: 200 bytes are 4 of them, whatever readerBuffer allows
        const tails = yield* SharedTail.make(options({ readerBuffer: 1_000, readerBufferBytes: 200 }))
        const turnId = randomUUID()
        const key = TurnKeys.streamKey(prefix, turnId, "upserts")
        yield* append(key, 1, 1, 40)
        const before = yield* fellBehind
        const pull = yield* Stream.toPull(tails.follow(key, "0-0"))
        expect(ids(yield* pull)).toStrictEqual(["0-1"])
        // 39 entries arrive while the reader takes none, one batch at a time
        yield* append(key, 2, 40, 40)
        yield* settle
        expect(yield* fellBehind).toBe(before + 1)
        const rest: Array<string> = []
        while (rest.length < 39) rest.push(...ids(yield* pull))
        expect(rest).toStrictEqual(Array.from({ length: 39 }, (_, i) => `0-${i + 2}`))
      }).pipe(Effect.scoped, Effect.provide(RedisStreamsMemory.layer)),
    10_000
  )

  it.effect("a finished turn is read from the store alone: no tail is opened", () => {
    const watched = watchedTails()
    return Effect.gen(function*() {
      const tails = yield* SharedTail.make(options())
      const turnId = randomUUID()
      const key = TurnKeys.streamKey(prefix, turnId, "upserts")
      yield* append(key, 1, 12, 12)
      expect(ids(Array.from(yield* Stream.runCollect(tails.follow(key, "0-3"))))).toHaveLength(9)
      expect(watched.log.starts).toStrictEqual([])
    }).pipe(Effect.scoped, Effect.provide(watched.layer.pipe(Layer.provideMerge(RedisStreamsMemory.layer))))
  })

  it.effect("a tail closes idleMs after its last reader left, on the Clock", () => {
    const watched = watchedTails()
    return Effect.gen(function*() {
      const tails = yield* SharedTail.make(options({ idleMs: 2_000 }))
      const turnId = randomUUID()
      const key = TurnKeys.streamKey(prefix, turnId, "upserts")
      yield* append(key, 1, 2, 10)
      const reader = yield* Effect.forkChild(Stream.runDrain(tails.follow(key, "0-0")))
      yield* spinUntil(() => watched.log.open === 1)
      yield* Fiber.interrupt(reader)
      yield* settle
      expect(watched.log.open).toBe(1)
      expect(yield* sleeps).toContain(2_000)
      yield* TestClock.adjust(2_000)
      yield* watched.released(1)
      expect(watched.log.open).toBe(0)
      expect(yield* tails.openTails).toBe(0)
    }).pipe(
      withSleeps,
      Effect.scoped,
      Effect.provide(watched.layer.pipe(Layer.provideMerge(RedisStreamsMemory.layer)))
    )
  })

  it.effect("a tail that fails fails its readers; the next reader opens a new one", () => {
    const watched = watchedTails((call) => (call === 0 ? { fail: true, after: 2, reason: "Unavailable" } : pass))
    return Effect.gen(function*() {
      const tails = yield* SharedTail.make(options())
      const turnId = randomUUID()
      const key = TurnKeys.streamKey(prefix, turnId, "upserts")
      yield* append(key, 1, 1, 10)
      const reader = yield* Effect.forkChild(Effect.result(Stream.runCollect(tails.follow(key, "0-0"))))
      yield* spinUntil(() => watched.log.open === 1)
      yield* append(key, 2, 5, 10)
      const failed = yield* Fiber.join(reader)
      expect(failed._tag).toBe("Failure")
      yield* spinUntil(() => watched.log.released === 1)
      const again = yield* Effect.forkChild(Stream.runCollect(tails.follow(key, "0-0")))
      yield* spinUntil(() => watched.log.open === 1)
      yield* append(key, 6, 10, 10)
      expect(ids(Array.from(yield* Fiber.join(again)))).toHaveLength(10)
      expect(watched.log.starts).toStrictEqual(["0-1", "0-5"])
    }).pipe(Effect.scoped, Effect.provide(watched.layer.pipe(Layer.provideMerge(RedisStreamsMemory.layer))))
  })
})

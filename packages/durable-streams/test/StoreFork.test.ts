/**
 * Forks in both `DurableStore` layers (the live one on the global setup's
 * redis-server): reading through the chain, ids that continue after the fork point,
 * the refusals of a fork's creation, a source deleted or expired while forks read it
 * (kept, gone, until the last fork goes), and links to forks that are gone pruned (at
 * once here: the live layer is built without its grace period).
 */
import { describe, expect, it } from "@effect/vitest"
import type { RedisError } from "@sluice/redis/RedisError"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"
import { Redis } from "ioredis"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"
import type { ForkCommit } from "../src/DurableStore.js"
import { DurableStore, key } from "../src/DurableStore.js"
import * as DurableStoreLive from "../src/DurableStoreLive.js"
import * as DurableStoreMemory from "../src/DurableStoreMemory.js"

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const persist = { _tag: "Persist" } as const

const create = (name: string, ...texts: Array<string>) =>
  DurableStore.use((store) =>
    store.commit(name, {
      expect: 0,
      set: { ct: "text/plain" },
      append: texts.map((t) => encoder.encode(t)),
      expiry: persist
    })
  )

const append = (name: string, text: string) =>
  Effect.gen(function*() {
    const store = yield* DurableStore
    const state = Option.getOrThrow(yield* store.load(name))
    return yield* store.commit(name, {
      expect: state.version,
      set: {},
      append: [encoder.encode(text)],
      expiry: persist
    })
  })

const fork = (name: string, source: string, at: string, ...texts: Array<string>) =>
  DurableStore.use((store) =>
    store.fork(
      name,
      {
        source,
        at,
        set: { ct: "text/plain" },
        append: texts.map((t) => encoder.encode(t)),
        expiry: persist
      } satisfies ForkCommit
    )
  )

const readAll = (name: string, after = "0-0") =>
  Effect.map(
    DurableStore.use((store) => store.read(name, after, 100)),
    (entries) => entries.map((entry) => `${entry.id}:${decoder.decode(entry.data)}`)
  )

const load = (name: string) => DurableStore.use((store) => store.load(name))
const remove = (name: string) => DurableStore.use((store) => store.remove(name))

const forkSuite = (layerName: string, layer: Layer.Layer<DurableStore, RedisError>) =>
  describe(`${layerName} (forks)`, () => {
    it.effect("a fork reads its source up to the fork point, then its own entries, with ids after the point", () =>
      Effect.gen(function*() {
        const [source, forked] = [randomUUID(), randomUUID()]
        yield* create(source, "a", "b", "c")
        expect(yield* fork(forked, source, "0-2", "X")).toEqual({ _tag: "Forked", ids: ["0-3"] })
        yield* append(source, "d")
        expect(yield* append(forked, "Y")).toEqual(Option.some(["0-4"]))
        expect(yield* readAll(forked)).toEqual(["0-1:a", "0-2:b", "0-3:X", "0-4:Y"])
        expect(yield* readAll(forked, "0-1")).toEqual(["0-2:b", "0-3:X", "0-4:Y"])
        expect(yield* readAll(forked, "0-2")).toEqual(["0-3:X", "0-4:Y"])
        expect(yield* readAll(source)).toEqual(["0-1:a", "0-2:b", "0-3:c", "0-4:d"])
        // Pages stop at the count, inherited or not.
        const store = yield* DurableStore
        expect((yield* store.read(forked, "0-0", 1)).map((entry) => entry.id)).toEqual(["0-1"])
        expect((yield* store.read(forked, "0-1", 2)).map((entry) => entry.id)).toEqual(["0-2", "0-3"])
        const state = Option.getOrThrow(yield* load(forked))
        expect(state.forkOf).toEqual(Option.some({ source, at: "0-2" }))
        expect(state.tail).toBe("0-4")
        expect(state.meta).toEqual({ ct: "text/plain" })
        expect(Option.getOrThrow(yield* load(source)).forks).toBe(1)
      }).pipe(Effect.provide(layer)))

    it.effect("a fork at 0-0 or of an empty source starts empty, its tail the fork point", () =>
      Effect.gen(function*() {
        const [source, empty, zero] = [randomUUID(), randomUUID(), randomUUID()]
        yield* create(source)
        expect(yield* fork(empty, source, "0-0")).toEqual({ _tag: "Forked", ids: [] })
        expect(Option.getOrThrow(yield* load(empty)).tail).toBe("0-0")
        yield* append(source, "a")
        expect(yield* fork(zero, source, "0-0", "z")).toEqual({ _tag: "Forked", ids: ["0-1"] })
        expect(yield* readAll(zero)).toEqual(["0-1:z"])
      }).pipe(Effect.provide(layer)))

    it.effect("refuses a fork of a missing source, past the source's tail, or onto a taken name, leaking no link", () =>
      Effect.gen(function*() {
        const [source, taken, other] = [randomUUID(), randomUUID(), randomUUID()]
        expect(yield* fork(other, randomUUID(), "0-0")).toEqual({ _tag: "SourceMissing" })
        yield* create(source, "a")
        expect(yield* fork(other, source, "0-2")).toEqual({ _tag: "BeyondTail", tail: "0-1" })
        expect(yield* fork(other, source, "1-0")).toEqual({ _tag: "BeyondTail", tail: "0-1" })
        yield* create(taken, "t")
        expect(yield* fork(taken, source, "0-1")).toEqual({ _tag: "Exists" })
        expect(yield* load(other)).toEqual(Option.none())
        expect(Option.getOrThrow(yield* load(source)).forks).toBe(0)
        // With no fork linked, deleting the source removes it.
        expect(yield* remove(source)).toBe("Removed")
        expect(yield* load(source)).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("two creations of the same fork at once: one forks, the other finds it, one link is left", () =>
      Effect.gen(function*() {
        const [source, forked] = [randomUUID(), randomUUID()]
        yield* create(source, "a")
        const outcomes = yield* Effect.all([fork(forked, source, "0-1", "x"), fork(forked, source, "0-1", "y")], {
          concurrency: 2
        })
        expect(outcomes.map((outcome) => outcome._tag).sort()).toEqual(["Exists", "Forked"])
        expect(Option.getOrThrow(yield* load(source)).forks).toBe(1)
        expect(yield* remove(forked)).toBe("Removed")
        expect(Option.getOrThrow(yield* load(source)).forks).toBe(0)
      }).pipe(Effect.provide(layer)))

    it.effect("a deleted source with living forks is kept, gone, until its last fork goes", () =>
      Effect.gen(function*() {
        const store = yield* DurableStore
        const [source, first, second, late] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
        yield* create(source, "kept")
        yield* fork(first, source, "0-1")
        yield* fork(second, source, "0-1", "2")
        expect(yield* remove(source)).toBe("SoftDeleted")
        const gone = Option.getOrThrow(yield* load(source))
        expect(gone.gone).toBe(true)
        expect(gone.forks).toBe(2)
        expect(yield* remove(source)).toBe("Gone")
        expect(yield* fork(late, source, "0-1")).toEqual({ _tag: "SourceGone" })
        // Its name is not free: a creation finds the kept stream.
        expect(yield* create(source, "new")).toEqual(Option.none())
        expect(yield* readAll(second)).toEqual(["0-1:kept", "0-2:2"])
        expect(yield* remove(first)).toBe("Removed")
        expect(Option.getOrThrow(yield* load(source)).forks).toBe(1)
        expect(yield* store.remove(second)).toBe("Removed")
        expect(yield* load(source)).toEqual(Option.none())
        expect(yield* create(source, "new")).toEqual(Option.some(["0-1"]))
      }).pipe(Effect.provide(layer)))

    it.effect("removal goes up a chain of deleted sources; deleting the middle keeps the data below", () =>
      Effect.gen(function*() {
        const [l0, l1, l2] = [randomUUID(), randomUUID(), randomUUID()]
        yield* create(l0, "A")
        yield* fork(l1, l0, "0-1", "B")
        yield* fork(l2, l1, "0-2", "C")
        expect(yield* readAll(l2)).toEqual(["0-1:A", "0-2:B", "0-3:C"])
        expect(yield* remove(l1)).toBe("SoftDeleted")
        expect(yield* readAll(l2)).toEqual(["0-1:A", "0-2:B", "0-3:C"])
        expect(yield* readAll(l0)).toEqual(["0-1:A"])
        expect(yield* remove(l0)).toBe("SoftDeleted")
        expect(yield* remove(l2)).toBe("Removed")
        expect(yield* load(l1)).toEqual(Option.none())
        expect(yield* load(l0)).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("a link to a fork that no longer exists is pruned: deleting the source then removes it", () =>
      Effect.gen(function*() {
        const store = yield* DurableStore
        const [source, expired] = [randomUUID(), randomUUID()]
        yield* create(source, "a")
        yield* store.fork(expired, { source, at: "0-1", set: {}, append: [], expiry: { _tag: "At", epochMs: 0 } })
        expect(yield* load(expired)).toEqual(Option.none())
        expect(yield* remove(source)).toBe("Removed")
        expect(yield* load(source)).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))

    it.effect("a source past its expiry time with a living fork is gone but still read by the fork", () =>
      Effect.gen(function*() {
        const store = yield* DurableStore
        const [source, forked] = [randomUUID(), randomUUID()]
        yield* create(source, "old")
        yield* fork(forked, source, "0-1")
        yield* store.touch(source, { _tag: "At", epochMs: 0 })
        expect(Option.getOrThrow(yield* load(source)).gone).toBe(true)
        expect(yield* readAll(forked)).toEqual(["0-1:old"])
        expect(yield* remove(forked)).toBe("Removed")
        expect(yield* load(source)).toEqual(Option.none())
      }).pipe(Effect.provide(layer)))
  })

forkSuite("DurableStoreMemory", DurableStoreMemory.layer)
forkSuite(
  "DurableStoreLive on redis-server",
  DurableStoreLive.layer({ url: inject("redisUrl"), prefix: `durable-fork-test-${process.pid}`, pruneAfterMs: 0 })
)

describe("DurableStoreMemory forks on Effect's Clock", () => {
  it.effect("a source whose TTL runs out while a fork reads it is gone, and removed with the fork's expiry", () =>
    Effect.gen(function*() {
      const store = yield* DurableStore
      yield* store.commit("s", {
        expect: 0,
        set: {},
        append: [encoder.encode("a")],
        expiry: { _tag: "After", ms: 1_000 }
      })
      yield* store.fork("f", { source: "s", at: "0-1", set: {}, append: [], expiry: { _tag: "After", ms: 5_000 } })
      yield* TestClock.adjust(2_000)
      expect(Option.getOrThrow(yield* store.load("s")).gone).toBe(true)
      expect((yield* store.read("f", "0-0", 10)).map((entry) => decoder.decode(entry.data))).toEqual(["a"])
      yield* TestClock.adjust(3_000)
      expect(yield* store.load("f")).toEqual(Option.none())
      expect(yield* store.load("s")).toEqual(Option.none())
    }).pipe(Effect.provide(DurableStoreMemory.layer)))
})

describe("DurableStoreLive forks and the expiry of their sources' keys", () => {
  const prefix = `durable-fork-expiry-${process.pid}`
  const ttlOf = (name: string) =>
    Effect.acquireUseRelease(
      Effect.sync(() => new Redis(inject("redisUrl"))),
      (redis) =>
        Effect.promise(() =>
          Promise.all(["meta", "data", "forks"].map((part) => redis.pttl(key(prefix, name, part as "meta"))))
        ),
      (redis) => Effect.sync(() => redis.disconnect())
    )

  it.effect("a source's keys never expire before a fork's: extended or made to persist, back to its own once the fork goes", () =>
    Effect.gen(function*() {
      const store = yield* DurableStore
      const [source, lasting, forever] = [randomUUID(), randomUUID(), randomUUID()]
      yield* store.commit(source, {
        expect: 0,
        set: {},
        append: [encoder.encode("a")],
        expiry: { _tag: "After", ms: 20_000 }
      })
      yield* store.fork(lasting, { source, at: "0-1", set: {}, append: [], expiry: { _tag: "After", ms: 600_000 } })
      for (const left of yield* ttlOf(source)) expect(left).toBeGreaterThan(300_000)
      yield* store.fork(forever, { source, at: "0-1", set: {}, append: [], expiry: persist })
      expect(yield* ttlOf(source)).toEqual([-1, -1, -1])
      // The source's own deadline still holds: it is live until then.
      expect(Option.getOrThrow(yield* store.load(source)).gone).toBe(false)
      expect(yield* store.remove(forever)).toBe("Removed")
      expect(yield* store.remove(lasting)).toBe("Removed")
      // Its forks hash is empty, so gone: the meta and data keys expire on its own deadline.
      for (const left of (yield* ttlOf(source)).slice(0, 2)) {
        expect(left).toBeGreaterThan(0)
        expect(left).toBeLessThanOrEqual(20_000)
      }
    }).pipe(Effect.provide(DurableStoreLive.layer({ url: inject("redisUrl"), prefix }))))
})

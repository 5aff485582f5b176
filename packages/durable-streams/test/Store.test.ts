import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"
import { inject } from "vitest"
import { DurableStore } from "../src/DurableStore.js"
import * as DurableStoreLive from "../src/DurableStoreLive.js"
import * as DurableStoreMemory from "../src/DurableStoreMemory.js"
import { durableSuite } from "./support/durableSuite.js"

durableSuite("DurableStoreMemory", DurableStoreMemory.layer)
durableSuite(
  "DurableStoreLive on redis-server",
  DurableStoreLive.layer({ url: inject("redisUrl"), prefix: `durable-test-${process.pid}` })
)

describe("DurableStoreMemory on Effect's Clock", () => {
  it.effect("a stream expires when the clock passes its TTL; a wait times out", () =>
    Effect.gen(function*() {
      const store = yield* DurableStore
      yield* store.commit("s", { expect: 0, set: {}, append: [], expiry: { _tag: "After", ms: 1_000 } })
      const state = Option.getOrThrow(yield* store.load("s"))
      const waiting = yield* Effect.forkChild(store.awaitChange("s", state.signal, 500))
      yield* TestClock.adjust(500)
      expect(yield* Fiber.join(waiting)).toBe(false)
      yield* store.touch("s", { _tag: "After", ms: 1_000 })
      yield* TestClock.adjust(900)
      expect(Option.isSome(yield* store.load("s"))).toBe(true)
      yield* TestClock.adjust(100)
      expect(yield* store.load("s")).toEqual(Option.none())
    }).pipe(Effect.provide(DurableStoreMemory.layer)))

  it.effect("a wait ends at the stream's deadline, not before, for a TTL and an expiry time", () =>
    Effect.gen(function*() {
      const store = yield* DurableStore
      const expiries = [{ _tag: "After", ms: 1_000 }, { _tag: "At", epochMs: 1_000 }] as const
      for (const [i, expiry] of expiries.entries()) {
        const name = `expiring-${i}`
        yield* store.commit(name, { expect: 0, set: {}, append: [], expiry })
        const state = Option.getOrThrow(yield* store.load(name))
        const waiting = yield* Effect.forkChild(store.awaitChange(name, state.signal, 20_000), {
          startImmediately: true
        })
        yield* TestClock.adjust(999)
        expect(waiting.pollUnsafe()).toBeUndefined()
        yield* TestClock.adjust(1)
        expect(yield* Fiber.join(waiting)).toBe(true)
        expect(yield* store.load(name)).toEqual(Option.none())
        yield* TestClock.setTime(0)
      }
    }).pipe(Effect.provide(DurableStoreMemory.layer)))
})

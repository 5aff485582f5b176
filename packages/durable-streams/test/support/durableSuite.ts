/**
 * What every `DurableStore` layer must do, run against each of them.
 */
import { describe, expect, it } from "@effect/vitest"
import type { RedisError } from "@sluice/redis/RedisError"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"
import { randomUUID } from "node:crypto"
import { DurableStore } from "../../src/DurableStore.js"

const bytes = (text: string) => new TextEncoder().encode(text)
const persist = { _tag: "Persist" } as const

export const durableSuite = (name: string, layer: Layer.Layer<DurableStore, RedisError>) =>
  describe(`${name} (DurableStore)`, () => {
    it.effect("creates once, appends in order with ids 0-1, 0-2, ..., keeps bytes exactly", () =>
      Effect.gen(function*() {
        const store = yield* DurableStore
        const stream = randomUUID()
        expect(yield* store.load(stream)).toEqual(Option.none())
        const every = Uint8Array.from({ length: 256 }, (_, i) => i)
        const created = yield* store.commit(stream, {
          expect: 0,
          set: { ct: "application/octet-stream" },
          append: [every],
          expiry: persist
        })
        expect(created).toEqual(Option.some(["0-1"]))
        expect(yield* store.commit(stream, { expect: 0, set: {}, append: [], expiry: persist })).toEqual(Option.none())
        const state = Option.getOrThrow(yield* store.load(stream))
        expect(state.meta).toEqual({ ct: "application/octet-stream" })
        expect(state.tail).toBe("0-1")
        const appended = yield* store.commit(stream, {
          expect: state.version,
          set: { closed: "1" },
          append: [bytes("a"), bytes("b")],
          expiry: persist
        })
        expect(appended).toEqual(Option.some(["0-2", "0-3"]))
        // A writer that read the older version is refused.
        expect(yield* store.commit(stream, { expect: state.version, set: {}, append: [bytes("c")], expiry: persist }))
          .toEqual(Option.none())
        const all = yield* store.read(stream, "0-0", 10)
        expect(all.map((entry) => entry.id)).toEqual(["0-1", "0-2", "0-3"])
        expect(Array.from(all[0]!.data)).toEqual(Array.from(every))
        expect((yield* store.read(stream, "0-2", 10)).map((entry) => entry.id)).toEqual(["0-3"])
        expect(Option.getOrThrow(yield* store.load(stream)).meta.closed).toBe("1")
      }).pipe(Effect.provide(layer)))

    it.effect("a wait wakes on the next commit and on a delete", () =>
      Effect.gen(function*() {
        const store = yield* DurableStore
        const stream = randomUUID()
        yield* store.commit(stream, { expect: 0, set: { ct: "text/plain" }, append: [], expiry: persist })
        const state = Option.getOrThrow(yield* store.load(stream))
        const waiting = yield* Effect.forkChild(store.awaitChange(stream, state.signal, 30_000))
        yield* Effect.yieldNow
        yield* store.commit(stream, { expect: state.version, set: {}, append: [bytes("x")], expiry: persist })
        expect(yield* Fiber.join(waiting)).toBe(true)
        const next = Option.getOrThrow(yield* store.load(stream))
        const deleted = yield* Effect.forkChild(store.awaitChange(stream, next.signal, 30_000))
        yield* Effect.yieldNow
        expect(yield* store.remove(stream)).toBe("Removed")
        expect(yield* Fiber.join(deleted)).toBe(true)
        expect(yield* store.remove(stream)).toBe("Missing")
        expect(yield* store.load(stream)).toEqual(Option.none())
      }).pipe(Effect.provide(layer)), { timeout: 60_000 })

    it.effect(
      "a wait ends when the stream expires, as at a delete, and the stream is then gone",
      () =>
        Effect.gen(function*() {
          const store = yield* DurableStore
          const stream = randomUUID()
          const ttl = { _tag: "After", ms: 300 } as const
          yield* store.commit(stream, { expect: 0, set: { ct: "text/plain" }, append: [], expiry: ttl })
          const state = Option.getOrThrow(yield* store.load(stream))
          const waiting = yield* Effect.forkChild(store.awaitChange(stream, state.signal, 600_000), {
            startImmediately: true
          })
          // the in-memory store's deadline is on the TestClock; Redis keeps its own time
          yield* TestClock.adjust(300)
          expect(yield* Fiber.join(waiting)).toBe(true)
          expect(yield* store.load(stream)).toEqual(Option.none())
          // a wait from a state that is over has nothing to wait for
          expect(yield* store.awaitChange(stream, state.signal, 600_000)).toBe(true)
        }).pipe(Effect.provide(layer)),
      { timeout: 30_000 }
    )
  })

/**
 * One clock for a process's timers: tasks run at their times (ties in the order they
 * were scheduled), a cancelled timer never runs, a timer due before the wheel's next
 * wake wakes it, a failing task leaves the wheel running, and a thousand timers cost
 * no fiber of their own. Driven by `TestClock`.
 */
import { describe, expect, it } from "@effect/vitest"
import { trackFibers } from "@sluice/testing/fibers"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/testing/TestClock"
import * as TimerWheel from "../src/TimerWheel.js"

const record = (log: Ref.Ref<ReadonlyArray<string>>, name: string) => Ref.update(log, (all) => [...all, name])

describe("TimerWheel", () => {
  it.effect("runs each task at its time, ties in the order scheduled, and never a cancelled one", () =>
    Effect.gen(function*() {
      const wheel = yield* TimerWheel.make
      const log = yield* Ref.make<ReadonlyArray<string>>([])
      yield* wheel.schedule(300, record(log, "c"))
      yield* wheel.schedule(100, record(log, "a"))
      yield* wheel.schedule(100, record(log, "b"))
      const cancelled = yield* wheel.schedule(200, record(log, "never"))
      yield* cancelled.cancel
      expect(yield* wheel.size).toBe(3)
      yield* TestClock.adjust("99 millis")
      expect(yield* Ref.get(log)).toEqual([])
      yield* TestClock.adjust("1 millis")
      expect(yield* Ref.get(log)).toEqual(["a", "b"])
      yield* TestClock.adjust("200 millis")
      expect(yield* Ref.get(log)).toEqual(["a", "b", "c"])
      expect(yield* wheel.size).toBe(0)
    }).pipe(Effect.scoped))

  it.effect("wakes for a timer due before the one it sleeps for, and runs a past one at once", () =>
    Effect.gen(function*() {
      const wheel = yield* TimerWheel.make
      const log = yield* Ref.make<ReadonlyArray<string>>([])
      yield* wheel.schedule(10_000, record(log, "late"))
      yield* TestClock.adjust("1 millis")
      yield* wheel.schedule(50, record(log, "early"))
      yield* TestClock.adjust("49 millis")
      expect(yield* Ref.get(log)).toEqual(["early"])
      yield* wheel.schedule(0, record(log, "past"))
      yield* TestClock.adjust("0 millis")
      expect(yield* Ref.get(log)).toEqual(["early", "past"])
    }).pipe(Effect.scoped))

  it.effect("goes on after a task that fails", () =>
    Effect.gen(function*() {
      const wheel = yield* TimerWheel.make
      const log = yield* Ref.make<ReadonlyArray<string>>([])
      yield* wheel.schedule(10, Effect.die(new Error("boom")))
      yield* wheel.schedule(20, record(log, "after"))
      yield* TestClock.adjust("20 millis")
      expect(yield* Ref.get(log)).toEqual(["after"])
    }).pipe(Effect.scoped))

  it.effect("holds a thousand timers with no fiber of their own, and runs every one", () =>
    Effect.gen(function*() {
      const fibers = yield* trackFibers
      const ran = yield* Ref.make(0)
      yield* Effect.gen(function*() {
        const wheel = yield* TimerWheel.make
        const base = yield* fibers.active
        for (let i = 0; i < 1_000; i++) yield* wheel.schedule(1 + (i % 97), Ref.update(ran, (n) => n + 1))
        expect(yield* fibers.active).toBe(base)
        yield* TestClock.adjust("100 millis")
        expect(yield* Ref.get(ran)).toBe(1_000)
      }).pipe(fibers.track, Effect.scoped)
    }))
})

/**
 * The request fibers' scheduler (`internal/boundedScheduler.ts`): 2,000 readers woken at
 * once (each going on in a turn of the scheduler, `waitFor`) run a group of `tasksPerTurn` a turn of the event loop, never all in one turn
 * (Effect's default scheduler ran them all in the turn after the wake); the turns are
 * counted on a stand-in `setImmediate` run by hand, no time involved.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Scheduler from "effect/Scheduler"
import * as BoundedScheduler from "../src/internal/boundedScheduler.js"
import { waitFor } from "../src/internal/wakeGroups.js"

// A scheduler whose turns wait in `turns` until `runTurn` runs the first.
const byHand = (perTurn: number) => {
  const turns: Array<() => void> = []
  const scheduler = BoundedScheduler.make(perTurn, (run) => void turns.push(run))
  return {
    scheduler,
    pending: () => turns.length,
    runTurn: () => turns.shift()?.()
  }
}

describe("BoundedScheduler", () => {
  it("2,000 woken fibers run 64 a turn, in the order they were woken", () => {
    const { pending, runTurn, scheduler } = byHand(BoundedScheduler.tasksPerTurn)
    const gate = Deferred.makeUnsafe<void>()
    const ran: Array<number> = []
    const fibers = Array.from({ length: 2_000 }, (_, i) =>
      Effect.runFork(
        waitFor(gate).pipe(
          Effect.andThen(Effect.sync(() => void ran.push(i))),
          Effect.provideService(Scheduler.Scheduler, scheduler)
        ),
        { scheduler }
      ))
    // the fibers start and wait for the gate
    while (pending() > 0) runTurn()
    expect(ran).toStrictEqual([])
    Deferred.doneUnsafe(gate, Effect.void)
    const perTurn: Array<number> = []
    while (pending() > 0) {
      const before = ran.length
      runTurn()
      perTurn.push(ran.length - before)
    }
    expect(ran).toStrictEqual(Array.from({ length: 2_000 }, (_, i) => i))
    expect(Math.max(...perTurn)).toBe(BoundedScheduler.tasksPerTurn)
    expect(perTurn.length).toBeGreaterThanOrEqual(Math.ceil(2_000 / BoundedScheduler.tasksPerTurn))
    expect(fibers.every((fiber) => fiber.pollUnsafe() !== undefined)).toBe(true)
  }, 10_000)

  it("a task queued at a lower priority number runs first; flush runs everything at once", () => {
    const { pending, scheduler } = byHand(2)
    const dispatcher = scheduler.makeDispatcher()
    const ran: Array<string> = []
    dispatcher.scheduleTask(() => ran.push("a"), 1)
    dispatcher.scheduleTask(() => ran.push("b"), 1)
    dispatcher.scheduleTask(() => ran.push("c"), 0)
    dispatcher.scheduleTask(() => ran.push("d"), 1)
    expect(pending()).toBe(1)
    dispatcher.flush()
    expect(ran).toStrictEqual(["c", "a", "b", "d"])
  }, 10_000)

  it.effect("the fibers of a program run on it to the end", () =>
    Effect.gen(function*() {
      const fibers = yield* Effect.forEach(
        Array.from({ length: 500 }, (_, i) => i),
        (i) => Effect.forkChild(Effect.as(Effect.yieldNow, i))
      )
      const results = yield* Fiber.joinAll(fibers)
      expect(results).toStrictEqual(Array.from({ length: 500 }, (_, i) => i))
    }).pipe(Effect.provideService(Scheduler.Scheduler, BoundedScheduler.make())), 10_000)
})

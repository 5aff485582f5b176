/**
 * Waiting on the TestClock in tests that run real I/O beside it.
 */
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"

/** Waits until at least `n` fibers sleep on the TestClock. */
export const untilSleeping = (n: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 10_000; i++) {
      if ((yield* TestClock.sleeps()).length >= n) return
      yield* Effect.yieldNow()
    }
    return yield* Effect.dieMessage(`fewer than ${n} sleeps on the TestClock`)
  })

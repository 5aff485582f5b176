/**
 * Waiting on the TestClock in tests that run real I/O beside it. Effect 4's TestClock
 * does not list its sleeps, so a test that waits for them runs under `countingSleeps`:
 * the TestClock in context, with its sleeps counted.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"

/** The sleeps in progress on the TestClock of a test run with `countingSleeps`. */
const Sleeping = Context.Reference<{ count: number } | undefined>("sluice/test/Sleeping", {
  defaultValue: () => undefined
})

/**
 * Runs `effect` (a test) on the TestClock in context, with the sleeps on it counted for
 * `untilSleeping`; the TestClock's own operations (`adjust`, `setTime`) pass through.
 */
export const countingSleeps = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  TestClock.testClockWith((clock) => {
    const sleeping = { count: 0 }
    const counted: TestClock.TestClock = {
      currentTimeMillisUnsafe: () => clock.currentTimeMillisUnsafe(),
      currentTimeMillis: clock.currentTimeMillis,
      currentTimeNanosUnsafe: () => clock.currentTimeNanosUnsafe(),
      currentTimeNanos: clock.currentTimeNanos,
      monotonicTimeNanosUnsafe: () => clock.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: clock.monotonicTimeNanos,
      sleep: (duration: Duration.Duration) =>
        Effect.acquireUseRelease(
          Effect.sync(() => sleeping.count++),
          () => clock.sleep(duration),
          () => Effect.sync(() => sleeping.count--)
        ),
      adjust: (duration) => clock.adjust(duration),
      setTime: (timestamp) => clock.setTime(timestamp),
      withLive: (live) => clock.withLive(live)
    }
    return effect.pipe(Effect.provideService(Clock.Clock, counted), Effect.provideService(Sleeping, sleeping))
  })

/** Waits until at least `n` fibers sleep on the TestClock (in a test run with `countingSleeps`). */
export const untilSleeping = (n: number) =>
  Effect.gen(function*() {
    const sleeping = yield* Sleeping
    if (sleeping === undefined) return yield* Effect.die(new Error("untilSleeping needs countingSleeps"))
    for (let i = 0; i < 10_000; i++) {
      if (sleeping.count >= n) return
      yield* Effect.yieldNow
    }
    return yield* Effect.die(new Error(`fewer than ${n} sleeps on the TestClock`))
  })

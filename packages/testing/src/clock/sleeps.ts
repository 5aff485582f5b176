/**
 * The sleeps pending on a test's TestClock, for tests that wait for them. Effect 4's
 * TestClock does not list its sleeps, so such a test runs under `withSleeps`: the
 * TestClock in context, wrapped so that each sleep on it is recorded while it lasts.
 * `TestClock.adjust` and `setTime` pass through; forked fibers keep the wrapped clock.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"

interface Sleep {
  readonly at: number
}

// the sleeps pending on each clock `withSleeps` made
const pendingSleeps = new WeakMap<Clock.Clock, Set<Sleep>>()

/**
 * Runs `effect` (a test) on the TestClock in context, with the sleeps on it recorded.
 *
 * @since 0.3.0
 */
export const withSleeps = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  TestClock.testClockWith((testClock) => {
    const pending = new Set<Sleep>()
    const clock: TestClock.TestClock = {
      currentTimeMillisUnsafe: () => testClock.currentTimeMillisUnsafe(),
      currentTimeMillis: testClock.currentTimeMillis,
      currentTimeNanosUnsafe: () => testClock.currentTimeNanosUnsafe(),
      currentTimeNanos: testClock.currentTimeNanos,
      monotonicTimeNanosUnsafe: () => testClock.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: testClock.monotonicTimeNanos,
      sleep: (duration) =>
        Effect.suspend(() => {
          const entry = { at: testClock.currentTimeMillisUnsafe() + Duration.toMillis(duration) }
          pending.add(entry)
          return Effect.ensuring(testClock.sleep(duration), Effect.sync(() => pending.delete(entry)))
        }),
      adjust: (duration) => testClock.adjust(duration),
      setTime: (timestamp) => testClock.setTime(timestamp),
      withLive: (live) => testClock.withLive(live)
    }
    pendingSleeps.set(clock, pending)
    return Effect.provideService(effect, Clock.Clock, clock)
  })

const pendingOf = Clock.clockWith((clock) => {
  const pending = pendingSleeps.get(clock)
  return pending === undefined
    ? Effect.die(new Error("the TestClock's sleeps are read inside withSleeps only"))
    : Effect.succeed(pending)
})

/**
 * The wake-up times of the sleeps pending on the clock of `withSleeps`, earliest first.
 *
 * @since 0.3.0
 */
export const sleeps: Effect.Effect<ReadonlyArray<number>> = Effect.map(
  pendingOf,
  (pending) => [...pending].map((entry) => entry.at).sort((a, b) => a - b)
)

/**
 * Waits until at least `n` fibers sleep on the clock of `withSleeps`.
 *
 * @since 0.3.0
 */
export const untilSleeping = (n: number): Effect.Effect<void> =>
  Effect.flatMap(pendingOf, (pending) =>
    Effect.gen(function*() {
      for (let i = 0; i < 10_000; i++) {
        if (pending.size >= n) return
        yield* Effect.yieldNow
      }
      return yield* Effect.die(new Error(`fewer than ${n} sleeps on the TestClock`))
    }))

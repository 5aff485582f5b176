/**
 * A clock for tests of what a busy event loop does: its time is what the test sets,
 * and its timers fire only when the test fires them (never, if it does not), as in a
 * process too busy with I/O to run its timers on time. `TestClock` cannot show that:
 * it runs every timer at its due time.
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

/**
 * A manual clock: `clock` to provide, `setTime` to move its time, `fire` to wake the
 * timers sleeping now (then `settle`), `settle` to let woken fibers run (a few turns
 * of the fibers, no time).
 *
 * @since 0.3.0
 */
export const manualClock = () => {
  let now = 0
  let due: Array<() => void> = []
  const nanos = () => BigInt(now) * 1_000_000n
  const clock: Clock.Clock = {
    currentTimeMillisUnsafe: () => now,
    currentTimeMillis: Effect.sync(() => now),
    currentTimeNanosUnsafe: nanos,
    currentTimeNanos: Effect.sync(nanos),
    monotonicTimeNanosUnsafe: nanos,
    monotonicTimeNanos: Effect.sync(nanos),
    sleep: () => Effect.callback<void>((resume) => void due.push(() => resume(Effect.void)))
  }
  const settle = Effect.gen(function*() {
    for (let i = 0; i < 50; i++) yield* Effect.yieldNow
  })
  return {
    clock,
    setTime: (millis: number) => Effect.sync(() => (now = millis)),
    fire: Effect.andThen(
      Effect.sync(() => {
        const woken = due
        due = []
        woken.forEach((wake) => wake())
      }),
      settle
    ),
    settle
  }
}

/**
 * A turn of the event loop, now and then, for long property tests.
 *
 * A test file of Effect property tests can keep a Vitest worker's event loop busy for
 * a minute on a loaded machine, and Vitest's worker then misses its own 60 s RPC
 * deadline ("Timeout calling onTaskUpdate") although every test passes. A property run
 * that starts with this lets the worker answer in between. It is a plain
 * `Effect.yieldNow`: Effect's default scheduler resumes a yielded fiber with
 * `setImmediate`, behind the event loop's timers and I/O. No sleep, no Clock, nothing
 * for TestClock to drive.
 */
import * as Effect from "effect/Effect"

/** How many calls pass between two turns of the event loop. */
const every = 16

let calls = 0

/**
 * Every `every`-th call lets timers and I/O run once; the others go straight on.
 *
 * @since 0.3.0
 */
export const yieldToEventLoop: Effect.Effect<void> = Effect.suspend(() =>
  ++calls % every !== 0 ? Effect.void : Effect.yieldNow
)

/**
 * A turn of the event loop, now and then, for long property tests.
 *
 * Effect runs a fiber's work as microtasks and hands the event loop back only now and
 * then; a test file of Effect property tests can keep a Vitest worker's event loop
 * busy for a minute on a loaded machine, and Vitest's worker then misses its own
 * 60 s RPC deadline ("Timeout calling onTaskUpdate") although every test passes. A
 * property run that starts with this lets the worker answer in between. It takes no
 * time of its own (`setImmediate`, not a sleep) and does not touch Effect's Clock.
 */
import * as Effect from "effect/Effect"

/** How many calls pass between two turns of the event loop. */
const every = 16

let calls = 0

/** Every `every`-th call lets timers and I/O run once; the others go straight on. */
export const yieldToEventLoop: Effect.Effect<void> = Effect.suspend(() =>
  ++calls % every !== 0
    ? Effect.void
    : Effect.async<void>((resume) => {
      const handle = setImmediate(() => resume(Effect.void))
      return Effect.sync(() => clearImmediate(handle))
    })
)

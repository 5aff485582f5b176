/**
 * How a running turn is stopped: a reason given once (cancel, a lost lease, the
 * caller's `stop`, an interrupt), and the hooks it runs at once in the fiber that
 * stops it, so that no fiber per turn waits for it.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** @internal */
export interface StopSignal<S> {
  /** Completed with the first reason. */
  readonly reason: Deferred.Deferred<S>
  /** Stops with `reason` unless stopped already; runs the hooks. */
  readonly stop: (reason: S) => Effect.Effect<void>
  /** Runs `hook` when the signal stops (at once if it has) while the scope is open. Never blocks. */
  readonly onStop: (hook: Effect.Effect<void>) => Effect.Effect<void, never, Scope.Scope>
}

/** @internal */
export const make = <S>(): Effect.Effect<StopSignal<S>> =>
  Effect.map(Deferred.make<S>(), (reason) => {
    // set and read synchronously, so that a hook is either run by `stop` or at once
    let stopped = false
    const hooks = new Set<Effect.Effect<void>>()
    return {
      reason,
      stop: (given) =>
        Effect.suspend(() => {
          if (stopped) return Effect.void
          stopped = true
          const run = Array.from(hooks)
          hooks.clear()
          return Effect.andThen(
            Deferred.succeed(reason, given),
            Effect.forEach(run, (hook) => hook, { discard: true })
          )
        }),
      onStop: (hook) =>
        Effect.suspend(() => {
          if (stopped) return hook
          hooks.add(hook)
          return Effect.addFinalizer(() => Effect.sync(() => hooks.delete(hook)))
        })
    }
  })

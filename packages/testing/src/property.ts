/**
 * Property tests over Effects with fast-check arbitraries, for every package's tests:
 * `it.effect.prop` of `@effect/vitest` 4 takes only effect Schemas or Arbitraries, so
 * the tests run `FastCheck.assert(FastCheck.asyncProperty(...))` through this, each run
 * in the services of the test (its TestClock, its Scope).
 */
import * as Effect from "effect/Effect"
import * as FastCheck from "fast-check"

/**
 * Checks that `body` succeeds for the values of `arbitrary` (fast-check shrinks a
 * counterexample and the test fails with it), with the given number of runs.
 *
 * @since 0.3.0
 */
export const checkEffect = <A, E, R>(
  arbitrary: FastCheck.Arbitrary<A>,
  body: (value: A) => Effect.Effect<void, E, R>,
  parameters: FastCheck.Parameters<[A]>
): Effect.Effect<void, never, R> =>
  Effect.flatMap(Effect.context<R>(), (context) =>
    Effect.promise(() =>
      FastCheck.assert(
        FastCheck.asyncProperty(arbitrary, (value) => Effect.runPromiseWith(context)(body(value))),
        parameters
      )
    ))

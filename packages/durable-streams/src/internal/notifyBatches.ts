/**
 * Batches of streams to tell the subscriptions about: a write that is told joins the
 * next batch and waits for it; one fiber runs a batch at a time, with every stream
 * written while the batch before it ran (each once), so concurrent writes share one
 * pass over the subscriptions (docs/http.md#subscription-limits).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

/**
 * Runs `run` over batches of the names told, in the scope; the telling of a name ends
 * once the batch that holds it has run (or the batches have stopped with the scope).
 *
 * @internal
 */
export const make = (
  run: (names: ReadonlyArray<string>) => Effect.Effect<void>
): Effect.Effect<(name: string) => Effect.Effect<void>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const told = yield* Queue.unbounded<readonly [string, Deferred.Deferred<void>]>()
    const batches = yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
      const batch = yield* Queue.takeAll(told)
      yield* run([...new Set(batch.map(([name]) => name))]).pipe(
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError("a batch of writes failed", cause)
        )
      )
      for (const [, done] of batch) Deferred.doneUnsafe(done, Exit.void)
    })))
    return (name) =>
      Effect.gen(function*() {
        const done = yield* Deferred.make<void>()
        yield* Queue.offer(told, [name, done])
        yield* Effect.raceFirst(Deferred.await(done), Effect.asVoid(Fiber.await(batches)))
      })
  })

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
 * Runs `run` over batches of the streams told (each once, with whether it was deleted
 * as last told), in the scope; the telling of a stream ends once the batch that holds
 * it has run (or the batches have stopped with the scope).
 *
 * @internal
 */
export const make = (
  run: (streams: ReadonlyMap<string, boolean>) => Effect.Effect<void>
): Effect.Effect<(name: string, deleted: boolean) => Effect.Effect<void>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const told = yield* Queue.unbounded<readonly [string, boolean, Deferred.Deferred<void>]>()
    const batches = yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
      const batch = yield* Queue.takeAll(told)
      yield* run(new Map(batch.map(([name, deleted]) => [name, deleted]))).pipe(
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError("a batch of writes failed", cause)
        )
      )
      for (const [, , done] of batch) Deferred.doneUnsafe(done, Exit.void)
    })))
    return (name, deleted) =>
      Effect.gen(function*() {
        const done = yield* Deferred.make<void>()
        yield* Queue.offer(told, [name, deleted, done])
        yield* Effect.raceFirst(Deferred.await(done), Effect.asVoid(Fiber.await(batches)))
      })
  })

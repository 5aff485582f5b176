/**
 * Waking many readers at once, a group at a time (docs/http.md#readers-share-one-tail).
 * Completing a `Deferred` resumes each fiber that waits on it there and then, one after
 * the other: 2,000 readers woken by one batch of their turn's tail, or by one catch-up
 * page they all waited for, would each do their work (frame, write) in one turn of the
 * event loop, and hold it for as long as all of them take. Here the waker wakes
 * `wakeGroup` readers, then lets the scheduler and the event loop run (the readers it
 * woke do their work there, the probes are answered), then the next group.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"

/**
 * How many waiting readers are woken in one turn of the scheduler.
 *
 * @internal
 */
export const wakeGroup = 64

/**
 * Wakes the waiters, `wakeGroup` at a time, yielding between groups.
 *
 * @internal
 */
export const wakeAll = (waiters: ReadonlyArray<Deferred.Deferred<void>>): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (let i = 0; i < waiters.length; i++) {
      if (i > 0 && i % wakeGroup === 0) yield* Effect.yieldNow
      Deferred.doneUnsafe(waiters[i]!, Effect.void)
    }
  })

/**
 * A wait of a reader: resumed by `wakeAll`, it goes on in a turn of the scheduler of its
 * own (never inside the waker's loop).
 *
 * @internal
 */
export const waitFor = (waiter: Deferred.Deferred<void>): Effect.Effect<void> =>
  Effect.andThen(Deferred.await(waiter), Effect.yieldNow)

/**
 * One result that many readers wait for (a catch-up page): `await` gives it once it is
 * there; `complete` sets it and wakes the readers waiting, a group at a time.
 *
 * @internal
 */
export class Pending<A, E> {
  private result: Exit.Exit<A, E> | undefined = undefined
  private waiters: Array<Deferred.Deferred<void>> = []

  readonly await: Effect.Effect<A, E> = Effect.suspend(() => {
    if (this.result !== undefined) return this.result
    const waiter = Deferred.makeUnsafe<void>()
    this.waiters.push(waiter)
    return Effect.andThen(waitFor(waiter), this.await)
  })

  complete(exit: Exit.Exit<A, E>): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.result !== undefined) return Effect.void
      this.result = exit
      const waiters = this.waiters
      this.waiters = []
      return wakeAll(waiters)
    })
  }
}

import type * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"

/** How many elements the reader may run ahead of the consumer. */
const capacity = 64

/**
 * The stream until `stop` completes, then its end. One fiber reads the input into a
 * small queue and one waits for `stop`: when it completes, the reader is interrupted
 * at once (a read waiting on the network too), what it read ahead is dropped, and the
 * output ends. Chunks pass whole, and nothing is forked or raced per chunk.
 *
 * @internal
 */
export const untilStopped = <A, E, R, S>(
  self: Stream.Stream<A, E, R>,
  stop: Deferred.Deferred<S>
): Stream.Stream<A, E, R> =>
  Stream.unwrap(
    Effect.gen(function*() {
      const queue = yield* Queue.make<A, E | Cause.Done>({ capacity })
      // the input's end or failure closes the queue; an interrupted reader leaves it
      // to the stopper (not `Queue.into`, which would fail the queue with the interrupt)
      const reader = yield* Stream.runForEachArray(self, (chunk) => Queue.offerAll(queue, chunk)).pipe(
        Effect.exit,
        Effect.flatMap((exit) => Exit.isSuccess(exit) ? Queue.end(queue) : Queue.failCause(queue, exit.cause)),
        Effect.forkScoped
      )
      yield* Deferred.await(stop).pipe(
        Effect.andThen(Fiber.interrupt(reader)),
        Effect.andThen(Queue.clear(queue)),
        Effect.andThen(Queue.end(queue)),
        Effect.forkScoped
      )
      return Stream.fromQueue(queue)
    })
  )

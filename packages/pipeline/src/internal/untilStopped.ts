import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import type { StopSignal } from "./stopSignal.js"

/** How many elements the reader may run ahead of the consumer. */
const capacity = 64

/**
 * The stream until `stop` stops, then its end. One fiber reads the input into a small
 * queue; when the signal stops, its hook (run by whoever stops it, no fiber waits)
 * interrupts the reader at once (a read waiting on the network too), drops what it
 * read ahead, and ends the output. Chunks pass whole, and nothing is forked or raced
 * per chunk.
 *
 * @internal
 */
export const untilStopped = <A, E, R, S>(
  self: Stream.Stream<A, E, R>,
  stop: StopSignal<S>
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
      // the reader is told to stop without waiting for it: once the queue has ended,
      // whatever it still offers is dropped
      yield* stop.onStop(
        Effect.sync(() => reader.interruptUnsafe()).pipe(
          Effect.andThen(Effect.ignore(Queue.clear(queue))),
          Effect.andThen(Queue.end(queue)),
          Effect.asVoid
        )
      )
      return Stream.fromQueue(queue)
    })
  )

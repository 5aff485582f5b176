import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Stream from "effect/Stream"

/** How many elements the reader may run ahead of the consumer. */
const capacity = 64

/**
 * The stream until `stop` completes, then its end. One fiber reads the input into a
 * small mailbox and one waits for `stop`: when it completes, the reader is interrupted
 * at once (a read waiting on the network too), what it read ahead is dropped, and the
 * output ends. Chunks pass whole, and nothing is forked or raced per chunk.
 *
 * @internal
 */
export const untilStopped = <A, E, R, S>(
  self: Stream.Stream<A, E, R>,
  stop: Deferred.Deferred<S>
): Stream.Stream<A, E, R> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const mailbox = yield* Mailbox.make<A, E>({ capacity })
      const reader = yield* Stream.runForEachChunk(self, (chunk) => mailbox.offerAll(chunk)).pipe(
        Effect.exit,
        Effect.flatMap((exit) => mailbox.done(exit)),
        Effect.forkScoped
      )
      yield* Deferred.await(stop).pipe(
        Effect.zipRight(Fiber.interrupt(reader)),
        Effect.zipRight(mailbox.clear),
        Effect.zipRight(mailbox.end),
        Effect.forkScoped
      )
      return Mailbox.toStream(mailbox)
    })
  )

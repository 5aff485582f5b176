import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

/**
 * The stream until `stop` completes, then its end. Each pull of a chunk races `stop`
 * (a pull waiting on the network is interrupted at once); unlike
 * `Stream.interruptWhen`, which hands on one element at a time here, chunks pass whole.
 *
 * @internal
 */
export const untilStopped = <A, E, R, S>(self: Stream.Stream<A, E, R>, stop: Deferred.Deferred<S>): Stream.Stream<A, E, R> =>
  Stream.unwrapScoped(
    Effect.map(Stream.toPull(self), (pull) =>
      Stream.repeatEffectChunkOption(Effect.raceFirst(pull, Effect.zipRight(Deferred.await(stop), Effect.fail(Option.none()))))
    )
  )

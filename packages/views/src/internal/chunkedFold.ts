import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"

/**
 * A step of a fold that may refuse its input: the outputs and the next state, or an
 * error.
 *
 * @internal
 */
export type FoldStep<S, A, B, E> = (state: S, input: A, now: number) => Result.Result<readonly [ReadonlyArray<B>, S], E>

/**
 * Folds a stream chunk by chunk through a `Ref`-held state, reading the time from
 * Effect's `Clock` once per chunk. Everything the inputs before a refused one gave is
 * emitted, then the stream fails with the refusal.
 *
 * @internal
 */
export const chunkedFold =
  <S, A, B, E2>(initial: S, step: FoldStep<S, A, B, E2>) =>
  <E, R>(self: Stream.Stream<A, E, R>): Stream.Stream<B, E | E2, R> =>
    Stream.unwrap(
      Effect.map(Ref.make(initial), (ref) =>
        self.pipe(
          Stream.chunks,
          Stream.mapEffect((inputs) =>
            Effect.flatMap(Clock.currentTimeMillis, (now) =>
              Ref.modify(ref, (state): readonly [readonly [ReadonlyArray<B>, E2 | undefined], S] => {
                const out: Array<B> = []
                let current = state
                for (const input of inputs) {
                  const next = step(current, input, now)
                  if (Result.isFailure(next)) return [[out, next.failure], current]
                  for (const b of next.success[0]) {
                    out.push(b)
                  }
                  current = next.success[1]
                }
                return [[out, undefined], current]
              }))
          ),
          Stream.flatMap(([outputs, error]) =>
            error === undefined
              ? Stream.fromArray(outputs)
              : Stream.concat(Stream.fromArray(outputs), Stream.fail(error))
          )
        ))
    )

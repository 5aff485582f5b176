import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"

/**
 * A step of a fold that may refuse its input: the outputs and the next state, or an
 * error.
 *
 * @internal
 */
export type FoldStep<S, A, B, E> = (state: S, input: A, now: number) => Either.Either<readonly [ReadonlyArray<B>, S], E>

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
            Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) =>
              Ref.modify(ref, (state): readonly [readonly [Chunk.Chunk<B>, E2 | undefined], S] => {
                const out: Array<B> = []
                let current = state
                for (const input of inputs) {
                  const next = step(current, input, now)
                  if (Either.isLeft(next)) return [[Chunk.unsafeFromArray(out), next.left], current]
                  for (const b of next.right[0]) {
                    out.push(b)
                  }
                  current = next.right[1]
                }
                return [[Chunk.unsafeFromArray(out), undefined], current]
              }))
          ),
          Stream.flatMap(([outputs, error]) =>
            error === undefined
              ? Stream.fromChunk(outputs)
              : Stream.concat(Stream.fromChunk(outputs), Stream.fail(error))
          )
        ))
    )

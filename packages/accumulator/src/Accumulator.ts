/**
 * The accumulator stage: a `Stream` transformer that folds StreamEvents into a `Turn`
 * carried from chunk to chunk, emitting each event with the turn so far, and effects that run a
 * whole stream to its final turn.
 *
 * @since 0.1.0
 */
import type { StreamEvent } from "@sluice/core"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import type { AccumulatorError } from "./AccumulatorError.js"
import * as Turn from "./Turn.js"

/**
 * An event with the turn as it stands after it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Step {
  readonly event: StreamEvent.StreamEvent
  readonly turn: Turn.Turn
}

/**
 * Folds a chunk of events into the turn; stops at the first refused event, returning
 * the steps before it and the error.
 */
const foldChunk = (
  turn: Turn.Turn,
  events: Chunk.Chunk<StreamEvent.StreamEvent>
): readonly [Array<Step>, Turn.Turn, AccumulatorError | undefined] => {
  const steps: Array<Step> = []
  let current = turn
  for (const event of events) {
    const next = Turn.step(current, event)
    if (Either.isLeft(next)) return [steps, current, next.left]
    current = next.right
    steps.push({ event, turn: current })
  }
  return [steps, current, undefined]
}

/**
 * Folds events into a turn carried from chunk to chunk, emitting every event with the partial turn
 * after it. Each partial turn shares the content strings of the previous one (no copy
 * per delta). A refused event fails the stream with `AccumulatorError` after the steps
 * before it were emitted.
 *
 * @since 0.1.0
 * @category stages
 */
export const accumulate = <E, R>(
  self: Stream.Stream<StreamEvent.StreamEvent, E, R>
): Stream.Stream<Step, E | AccumulatorError, R> => Stream.pipeThroughChannelOrFail(self, folding<E>(Turn.empty))

// One pure fold per chunk, the turn carried from read to read: no Ref, no inner stream.
const folding = <E>(
  turn: Turn.Turn
): Channel.Channel<
  Chunk.Chunk<Step>,
  Chunk.Chunk<StreamEvent.StreamEvent>,
  AccumulatorError | E,
  E,
  unknown,
  unknown
> =>
  Channel.readWith({
    onInput: (events: Chunk.Chunk<StreamEvent.StreamEvent>) => {
      const [steps, next, error] = foldChunk(turn, events)
      const rest = error === undefined ? folding<E>(next) : Channel.fail(error)
      return steps.length === 0 ? rest : Channel.zipRight(Channel.write(Chunk.unsafeFromArray(steps)), rest)
    },
    onFailure: (error: E) => Channel.fail(error),
    onDone: () => Channel.void
  })

/**
 * Runs a stream of events to its final turn.
 *
 * @since 0.1.0
 * @category running
 */
export const runTurn = <E, R>(
  self: Stream.Stream<StreamEvent.StreamEvent, E, R>
): Effect.Effect<Turn.Turn, E | AccumulatorError, R> =>
  Effect.flatMap(Ref.make(Turn.empty), (ref) =>
    self.pipe(
      Stream.runForEachChunk((events) =>
        Effect.flatMap(
          Ref.modify(ref, (turn) => {
            const [, next, error] = foldChunk(turn, events)
            return [error, next] as const
          }),
          (error) => (error === undefined ? Effect.void : Effect.fail(error))
        )
      ),
      Effect.zipRight(Ref.get(ref))
    ))

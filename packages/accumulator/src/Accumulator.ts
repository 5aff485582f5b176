/**
 * The accumulator stage: a `Stream` transformer that folds StreamEvents into a `Turn`
 * carried from chunk to chunk, emitting each event with the turn so far, and effects that run a
 * whole stream to its final turn.
 *
 * @since 0.1.0
 */
import type { StreamEvent } from "@sluice/core"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import type * as Pull from "effect/Pull"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
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
 * What folding a chunk of events came to: the turn after the events it took, how many
 * it took (all of them, or those before the refused one), and the refusal, if any.
 *
 * @since 0.3.0
 * @category models
 */
export interface Folded {
  readonly turn: Turn.Turn
  readonly taken: number
  readonly refused: AccumulatorError | undefined
}

/**
 * Folds a chunk of events into the turn, one `Turn.step` each, stopping at the first
 * refused event; `onStep` sees each event taken with the turn after it. The pure step
 * of every stage that folds (`accumulate`, `runTurn`, the pipeline's fused stages).
 *
 * @since 0.3.0
 * @category folding
 */
export const foldEvents = (
  turn: Turn.Turn,
  events: ReadonlyArray<StreamEvent.StreamEvent>,
  onStep?: (event: StreamEvent.StreamEvent, turn: Turn.Turn) => void
): Folded => {
  let current = turn
  for (let i = 0; i < events.length; i++) {
    const next = Turn.step(current, events[i]!)
    if (Result.isFailure(next)) return { turn: current, taken: i, refused: next.failure }
    current = next.success
    onStep?.(events[i]!, current)
  }
  return { turn: current, taken: events.length, refused: undefined }
}

// A chunk's steps, each event with the turn after it.
const foldChunk = (
  turn: Turn.Turn,
  events: ReadonlyArray<StreamEvent.StreamEvent>
): readonly [Array<Step>, Turn.Turn, AccumulatorError | undefined] => {
  const steps: Array<Step> = []
  const folded = foldEvents(turn, events, (event, after) => {
    steps.push({ event, turn: after })
  })
  return [steps, folded.turn, folded.refused]
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
): Stream.Stream<Step, E | AccumulatorError, R> =>
  Stream.transformPull(self, (upstream) => Effect.sync(() => folding(upstream)))

// One pure fold per chunk, the turn carried from pull to pull: no Ref, no inner stream.
// A refused event ends the chunk's steps; the next pull fails with the refusal.
const folding = <E>(
  upstream: Pull.Pull<Arr.NonEmptyReadonlyArray<StreamEvent.StreamEvent>, E>
): Pull.Pull<Arr.NonEmptyReadonlyArray<Step>, E | AccumulatorError> => {
  let turn = Turn.empty
  let refused: AccumulatorError | undefined
  const pull: Pull.Pull<Arr.NonEmptyReadonlyArray<Step>, E | AccumulatorError> = Effect.suspend(() =>
    refused !== undefined
      ? Effect.fail(refused)
      : Effect.flatMap(upstream, (events) => {
        const [steps, next, error] = foldChunk(turn, events)
        turn = next
        refused = error
        return Arr.isReadonlyArrayNonEmpty(steps) ? Effect.succeed(steps) : pull
      })
  )
  return pull
}

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
      Stream.runForEachArray((events) =>
        Effect.flatMap(
          Ref.modify(ref, (turn) => {
            const folded = foldEvents(turn, events)
            return [folded.refused, folded.turn] as const
          }),
          (error) => (error === undefined ? Effect.void : Effect.fail(error))
        )
      ),
      Effect.andThen(Ref.get(ref))
    ))

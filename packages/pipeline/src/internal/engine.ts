/**
 * A turn's stages past the fold as one chain: the folded events -> Stream A -> what
 * the pipeline does with each confirmed chunk -> the upsert stage -> Stream B -> what
 * it does with each confirmed message. Each stage is a `Step` that pushes what it
 * passes on to the next one, built from the last step back to the first, so the
 * stages stay fused: every chunk goes through them as calls in the fiber that pushed
 * it (the turn's own, or an upsert fallback timer's, under the upsert stage's lock),
 * with no fiber, queue or stream of its own.
 *
 * A chain ends from its first step, told how its input ended; each step finishes its
 * own part and ends the next one, so Stream A's end (or failure) is the upsert stage's
 * input's, which closes the turn in Stream B before Stream B ends. A write refused
 * because another writer ended the turn (`PublishError` `Ended`) stops the chain where
 * it was met: nothing more of the turn is written, not even Stream B's ending
 * (docs/redis.md#leases-and-endings).
 *
 * @internal
 */
import type { AccumulatorError } from "@sluice/accumulator"
import type { StreamBMessage, StreamEvent } from "@sluice/core"
import { PublishError, type TurnPublisher } from "@sluice/turns"
import { StreamBMessages, type UnexpectedEvent, type UpsertOptions, UpsertStage } from "@sluice/upserts"
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

/**
 * One stage's input: chunks pushed in order, then its end, told how its input ended
 * (a failure of the input passes on once the stage has finished its own part).
 *
 * @internal
 */
export interface Step<A, E, R = never> {
  readonly push: (chunk: Arr.NonEmptyReadonlyArray<A>) => Effect.Effect<void, E, R>
  readonly end: (input: Exit.Exit<void, E>) => Effect.Effect<void, E, R>
}

/**
 * What a turn's chain can fail with besides its source's failures: an event the fold
 * or the upsert stage refused, a write that failed.
 *
 * @internal
 */
export type Failure = AccumulatorError.AccumulatorError | PublishError.PublishError | UnexpectedEvent

/**
 * Whether a write failed because another writer had ended the turn (`PublishError`'s
 * `Ended`).
 *
 * @internal
 */
export const endedElsewhere = (exit: Exit.Exit<unknown, unknown>): boolean =>
  Exit.isFailure(exit) &&
  Option.exists(
    Cause.findErrorOption(exit.cause),
    (error) => error instanceof PublishError.PublishError && error.reason === "Ended"
  )

/**
 * Runs the input through the chain from its first step, then ends the chain with how
 * the input ended.
 *
 * @internal
 */
export const run = <E, R, R2>(
  input: Stream.Stream<StreamEvent.StreamEvent, E, R>,
  first: Step<StreamEvent.StreamEvent, E, R2>
): Effect.Effect<void, E, R | R2> => Effect.flatMap(Effect.exit(Stream.runForEachArray(input, first.push)), first.end)

/**
 * The last step: what Redis confirmed is told to `onPassed`; the chain's end is its
 * input's.
 *
 * @internal
 */
export const sink = <A, E>(onPassed: (passed: Arr.NonEmptyReadonlyArray<A>) => Effect.Effect<void>): Step<A, E> => ({
  push: onPassed,
  end: (input) => input
})

/**
 * A step that looks at each chunk as it goes by: `before` it goes on, and `after` the
 * rest of the chain has taken it (`undefined`: nothing to do after it).
 *
 * @internal
 */
export const tap = <A, E, R, R2>(
  before: (chunk: Arr.NonEmptyReadonlyArray<A>) => Effect.Effect<void>,
  after: (chunk: Arr.NonEmptyReadonlyArray<A>) => Effect.Effect<void, never, R2> | undefined,
  next: Step<A, E, R>
): Step<A, E, R | R2> => ({
  push: (chunk) => {
    const passed = Effect.andThen(before(chunk), next.push(chunk))
    const then = after(chunk)
    return then === undefined ? passed : Effect.andThen(passed, then)
  },
  end: next.end
})

// A writer's end: once its input ended, its stream is finished, then the next step
// ends with how it went, unless another writer had ended the turn.
const finishing = <A, E, R>(
  finish: Effect.Effect<void, PublishError.PublishError>,
  next: Step<A, E | PublishError.PublishError, R>
) =>
(input: Exit.Exit<void, E | PublishError.PublishError>): Effect.Effect<void, E | PublishError.PublishError, R> =>
  Exit.isSuccess(input)
    ? Effect.flatMap(Effect.exit(finish), (written) => endedElsewhere(written) ? written : next.end(written))
    : endedElsewhere(input)
    ? input
    : next.end(input)

/**
 * Stream A: each chunk written (in pieces of at most `maxInFlight`), each piece Redis
 * confirmed pushed on, in order.
 *
 * @internal
 */
export const eventsWriter = <E, R>(
  writers: TurnPublisher.TurnWriters,
  next: Step<StreamEvent.StreamEvent, E | PublishError.PublishError, R>
): Step<StreamEvent.StreamEvent, E | PublishError.PublishError, R> => ({
  push: (chunk) => writers.events(chunk, next.push),
  end: finishing(writers.finishEvents, next)
})

/**
 * Stream B: each chunk of payloads wrapped (one clock reading) and written, each piece
 * Redis confirmed pushed on, in order.
 *
 * @internal
 */
export const upsertsWriter = <E>(
  writers: TurnPublisher.TurnWriters,
  next: Step<StreamBMessage.StreamBMessage, E | PublishError.PublishError>
): Step<StreamBMessage.UIPayload, E | PublishError.PublishError> => ({
  push: (payloads) =>
    Effect.flatMap(
      Clock.currentTimeMillis,
      (now) => writers.upserts(StreamBMessages.wrapAll(payloads, now), next.push)
    ),
  end: finishing(writers.finishUpserts, next)
})

/**
 * The upsert stage, its payloads pushed on (from a fallback timer's fiber too, under
 * the stage's lock). Its end closes the turn in Stream B (an open turn ends
 * `aborted`), then passes its input's failure on, then ends the next step.
 *
 * @internal
 */
export const upserts = <E>(
  options: UpsertOptions.UpsertOptionsInput,
  next: Step<StreamBMessage.UIPayload, E | UnexpectedEvent>
) =>
  Effect.map(
    UpsertStage.make(
      options,
      (payloads) => Arr.isReadonlyArrayNonEmpty(payloads) ? next.push(payloads) : Effect.void
    ),
    (stage): Step<StreamEvent.StreamEvent, E | UnexpectedEvent> => ({
      push: stage.process,
      end: (input) => Effect.andThen(Effect.andThen(stage.end, input), next.end(Exit.void))
    })
  )

/**
 * A turn's input folded in one stage, a plain step per chunk: the turn's trace context
 * given to events without one, the fold (`Accumulator.foldEvents`) into the turn held
 * by the caller, the events passed on, and once the input ends or fails, the events
 * that close the turn. One pull per chunk where a trace-context map, `Stream.onExit`,
 * `Accumulator.accumulate`, a per-chunk `Ref.set`, `Stream.catchCause` and
 * `Stream.concat` would each add a channel.
 *
 * @internal
 */
import { Accumulator, type AccumulatorError, Turn } from "@sluice/accumulator"
import type { StreamEvent } from "@sluice/core"
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"

/**
 * The turn as folded so far, read by the turn's ending.
 *
 * @internal
 */
export interface Folding {
  turn: Turn.Turn
}

/** @internal */
export const makeFolding = (): Folding => ({ turn: Turn.empty })

/**
 * What the stage calls around the input's end.
 *
 * @internal
 */
export interface FoldHooks {
  /** Sees the input's end (a success) or failure, once; an interrupted input is left to the caller's scope. */
  readonly onInputEnd: (exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>
  /**
   * The events that close the turn once the input ended (`undefined`) or failed (its
   * cause, a refused event's too); they are folded into the turn by the caller.
   */
  readonly closing: (failure: Cause.Cause<unknown> | undefined) => Effect.Effect<ReadonlyArray<StreamEvent.StreamEvent>>
  /**
   * Once the turn has started, leave out a `response_start` of the input (a turn whose
   * opening the pipeline wrote before its source: the source's own start is not a
   * second one).
   */
  readonly dropStarts?: boolean | undefined
}

/**
 * The input's events folded into `folding.turn`, chunk by chunk, then the closing
 * events. A failure of the input, or an event the fold refuses (after the events
 * before it), passes on after the closing events.
 *
 * @internal
 */
export const fold = <E, R>(
  input: Stream.Stream<StreamEvent.StreamEvent, E, R>,
  traceContext: StreamEvent.TraceContext | undefined,
  folding: Folding,
  hooks: FoldHooks
): Stream.Stream<StreamEvent.StreamEvent, E | AccumulatorError.AccumulatorError, R> =>
  Stream.transformPull(input, (upstream) =>
    Effect.sync(() => {
      // set once the input is over: its end (`null`) or the failure to pass on
      let over: Cause.Cause<E | AccumulatorError.AccumulatorError> | null | undefined
      // a refusal met mid-chunk waits for the next pull, after the events before it
      let pending: Cause.Cause<AccumulatorError.AccumulatorError> | undefined
      const close = (failure: Cause.Cause<E | AccumulatorError.AccumulatorError> | undefined) =>
        Effect.flatMap(hooks.closing(failure), (events) => {
          over = failure ?? null
          return Arr.isReadonlyArrayNonEmpty(events) ? Effect.succeed(events) : pull
        })
      const read = Pull.matchEffect(upstream, {
        onSuccess: (given) => {
          const chunk = hooks.dropStarts === true && folding.turn.status !== "pending" ? withoutStarts(given) : given
          if (chunk.length === 0) return pull
          const events = traced(chunk, traceContext)
          const folded = Accumulator.foldEvents(folding.turn, events)
          folding.turn = folded.turn
          const taken = folded.taken === events.length ? events : events.slice(0, folded.taken)
          if (folded.refused !== undefined) {
            const refused = Cause.fail(folded.refused)
            if (!Arr.isReadonlyArrayNonEmpty(taken)) return close(refused)
            pending = refused
          }
          return Arr.isReadonlyArrayNonEmpty(taken) ? Effect.succeed(taken) : pull
        },
        onFailure: (cause) => Effect.andThen(hooks.onInputEnd(Exit.failCause(cause)), close(cause)),
        onDone: (leftover) => Effect.andThen(hooks.onInputEnd(Exit.succeed(leftover)), close(undefined))
      })
      const pull: Pull.Pull<Arr.NonEmptyReadonlyArray<StreamEvent.StreamEvent>, E | AccumulatorError.AccumulatorError> =
        Effect.suspend(() => {
          if (over === null) return Cause.done()
          if (over !== undefined) return Effect.failCause(over)
          if (pending !== undefined) {
            const refused = pending
            pending = undefined
            return close(refused)
          }
          return read
        })
      return pull
    }))

// A chunk without its `response_start` events; the chunk itself when it has none.
const withoutStarts = (chunk: ReadonlyArray<StreamEvent.StreamEvent>): ReadonlyArray<StreamEvent.StreamEvent> =>
  chunk.some((event) => event.payload.type === "response_start")
    ? chunk.filter((event) => event.payload.type !== "response_start")
    : chunk

// Events made elsewhere (`TurnSource.events`) may not carry the turn's trace context.
const traced = (
  chunk: ReadonlyArray<StreamEvent.StreamEvent>,
  traceContext: StreamEvent.TraceContext | undefined
): ReadonlyArray<StreamEvent.StreamEvent> => {
  if (traceContext?.traceparent === undefined) return chunk
  let out: Array<StreamEvent.StreamEvent> | undefined
  for (let i = 0; i < chunk.length; i++) {
    const event = chunk[i]!
    if (event.trace_context.traceparent !== undefined) {
      out?.push(event)
      continue
    }
    out ??= chunk.slice(0, i)
    out.push({ ...event, trace_context: traceContext })
  }
  return out ?? chunk
}

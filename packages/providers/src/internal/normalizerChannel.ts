import type { Sse, StreamEvent } from "@sluice/core"
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"
import type { WireDecodeError } from "../WireDecodeError.js"

type Out = Array<StreamEvent.StreamEvent>

/**
 * A provider's per-stream state machine: fed one SSE event at a time, it pushes the
 * StreamEvents that event produces, or returns a decode error.
 *
 * @internal
 */
export interface Handler {
  readonly onEvent: (event: Sse.SseEvent, out: Out) => WireDecodeError | undefined
  /** The input ended; close the turn if the provider did not. */
  readonly onEnd: (out: Out) => void
}

const isNonEmpty = (out: Out): out is Out & Arr.NonEmptyArray<StreamEvent.StreamEvent> => out.length > 0

/**
 * Whether a decode failure only says that the body was cut: the input ended inside
 * this event (no blank line after it) and its data is not JSON, as a `data:` line cut
 * short is not. Such a turn ends truncated (`stream_truncated`), keeping what arrived.
 */
const isCut = (event: Sse.SseEvent, failure: WireDecodeError): boolean =>
  event.unterminated === true && failure.reason === "InvalidJson"

/**
 * Turns a handler factory into a Stream transformer. An event cut short by the end of
 * the input ends the turn as truncated instead of failing. The factory gets the current
 * time from Effect's Clock, read once per input chunk, so TestClock drives event
 * timestamps. One input chunk of
 * SSE events yields one output chunk of StreamEvents.
 *
 * @internal
 */
export const normalizeWith =
  (makeHandler: (now: () => number) => Handler) =>
  <E, R>(self: Stream.Stream<Sse.SseEvent, E, R>): Stream.Stream<StreamEvent.StreamEvent, E | WireDecodeError, R> =>
    Stream.transformPull(self, (pull) =>
      Effect.clockWith((clock) =>
        Effect.sync(() => {
          // one clock read per input chunk: the events one chunk yields share its time
          let now = clock.currentTimeMillisUnsafe()
          const handler = makeHandler(() => now)
          let ended = false // a cut event, or the end of the input, ended the turn
          let failure: WireDecodeError | undefined // fails the stream once the events before it are out
          let done = false // the input is over
          const onInput = (events: Arr.NonEmptyReadonlyArray<Sse.SseEvent>): Out => {
            now = clock.currentTimeMillisUnsafe()
            const out: Out = []
            // an indexed loop: iterating the chunk allocates a result per event
            for (let i = 0; i < events.length; i++) {
              const event = events[i]!
              const eventFailure = handler.onEvent(event, out)
              if (eventFailure === undefined) continue
              if (!isCut(event, eventFailure)) {
                failure = eventFailure
                return out
              }
              // the body ended inside this event's data: the turn is truncated, not invalid
              handler.onEnd(out)
              ended = true
              break
            }
            return out
          }
          const onDone = (): Out => {
            const out: Out = []
            if (ended) return out
            ended = true
            now = clock.currentTimeMillisUnsafe()
            handler.onEnd(out)
            return out
          }
          const next: Pull.Pull<Arr.NonEmptyReadonlyArray<StreamEvent.StreamEvent>, E | WireDecodeError, void> = Effect
            .suspend(() => {
              if (failure !== undefined) return Effect.fail(failure)
              if (done) return Cause.done()
              return Pull.matchEffect(pull, {
                onSuccess: (events) => {
                  const out = onInput(events)
                  return isNonEmpty(out) ? Effect.succeed(out) : next
                },
                onFailure: Effect.failCause,
                onDone: () => {
                  done = true
                  const out = onDone()
                  return isNonEmpty(out) ? Effect.succeed(out) : Cause.done()
                }
              })
            })
          return next
        })
      ))

/**
 * Runs a handler over events already in memory (the non-streaming decoders build SSE-
 * like events from a response body and reuse the streaming handler where they can).
 *
 * @internal
 */
export const runHandler = (handler: Handler, events: Iterable<Sse.SseEvent>): Out | WireDecodeError => {
  const out: Out = []
  for (const event of events) {
    const failure = handler.onEvent(event, out)
    if (failure !== undefined) return failure
  }
  handler.onEnd(out)
  return out
}

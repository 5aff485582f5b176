import type { Sse, StreamEvent } from "@sluice/core"
import * as Cause from "effect/Cause"
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
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

const emit = (out: Out): Channel.Channel<Chunk.Chunk<StreamEvent.StreamEvent>> =>
  out.length === 0 ? Channel.void : Channel.write(Chunk.unsafeFromArray(out))

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
    Stream.unwrap(
      Effect.map(Effect.clock, (clock) => {
        // one clock read per input chunk: the events one chunk yields share its time
        let now = clock.unsafeCurrentTimeMillis()
        const handler = makeHandler(() => now)
        let ended = false // a cut event ended the turn
        const loop: Channel.Channel<
          Chunk.Chunk<StreamEvent.StreamEvent>,
          Chunk.Chunk<Sse.SseEvent>,
          E | WireDecodeError,
          E,
          unknown,
          unknown
        > = Channel.readWithCause({
          onInput: (input: Chunk.Chunk<Sse.SseEvent>) => {
            now = clock.unsafeCurrentTimeMillis()
            const out: Out = []
            // an indexed loop: iterating the chunk allocates a result per event
            const events = Chunk.toReadonlyArray(input)
            for (let i = 0; i < events.length; i++) {
              const event = events[i]!
              const failure = handler.onEvent(event, out)
              if (failure === undefined) continue
              if (!isCut(event, failure)) return Channel.zipRight(emit(out), Channel.fail(failure))
              // the body ended inside this event's data: the turn is truncated, not invalid
              handler.onEnd(out)
              ended = true
              break
            }
            return Channel.zipRight(emit(out), loop)
          },
          onFailure: (cause: Cause.Cause<E>) => Channel.failCause(cause),
          onDone: () => {
            if (ended) return Channel.void
            now = clock.unsafeCurrentTimeMillis()
            const out: Out = []
            handler.onEnd(out)
            return emit(out)
          }
        })
        return Stream.pipeThroughChannel(self, loop)
      })
    )

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

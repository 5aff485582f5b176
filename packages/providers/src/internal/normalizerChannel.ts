import { Sse, type StreamEvent } from "@sluice/core"
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
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
 * A normalizer as a pure step: SSE events in, StreamEvents out. An event cut short by
 * the end of the input ends the turn as truncated instead of failing. The handler
 * gets the time read from the Clock once per `input` (the events one input yields
 * share it), so TestClock drives event timestamps.
 *
 * @internal
 */
export class EventDecoder {
  private now: number
  private readonly handler: Handler
  // a cut event, or the end of the input, ended the turn
  private ended = false
  /** Set when an event is not the provider's wire format; the events before it are out. */
  failure: WireDecodeError | undefined = undefined

  constructor(makeHandler: (now: () => number) => Handler, private readonly clock: Clock.Clock) {
    this.now = clock.currentTimeMillisUnsafe()
    this.handler = makeHandler(() => this.now)
  }

  /** Decodes `events`, pushing what they yield into `out`. */
  input(events: ReadonlyArray<Sse.SseEvent>, out: Out): void {
    this.now = this.clock.currentTimeMillisUnsafe()
    // an indexed loop: iterating the chunk allocates a result per event
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!
      const failure = this.handler.onEvent(event, out)
      if (failure === undefined) continue
      if (!isCut(event, failure)) {
        this.failure = failure
        return
      }
      // the body ended inside this event's data: the turn is truncated, not invalid
      this.handler.onEnd(out)
      this.ended = true
      return
    }
  }

  /** The input ended: closes the turn if the provider did not. */
  end(out: Out): void {
    if (this.ended) return
    this.ended = true
    this.now = this.clock.currentTimeMillisUnsafe()
    this.handler.onEnd(out)
  }
}

/**
 * Turns a handler factory into a Stream transformer (`EventDecoder` over each input
 * chunk). One input chunk of SSE events yields one output chunk of StreamEvents.
 *
 * @internal
 */
export const normalizeWith =
  (makeHandler: (now: () => number) => Handler) =>
  <E, R>(self: Stream.Stream<Sse.SseEvent, E, R>): Stream.Stream<StreamEvent.StreamEvent, E | WireDecodeError, R> =>
    Stream.transformPull(self, (pull) =>
      Effect.clockWith((clock) =>
        Effect.sync(() => {
          const decoder = new EventDecoder(makeHandler, clock)
          let done = false // the input is over
          const next: Pull.Pull<Arr.NonEmptyReadonlyArray<StreamEvent.StreamEvent>, E | WireDecodeError, void> = Effect
            .suspend(() => {
              if (decoder.failure !== undefined) return Effect.fail(decoder.failure)
              if (done) return Cause.done()
              return Pull.matchEffect(pull, {
                onSuccess: (events) => {
                  const out: Out = []
                  decoder.input(events, out)
                  return isNonEmpty(out) ? Effect.succeed(out) : next
                },
                onFailure: Effect.failCause,
                onDone: () => {
                  done = true
                  const out: Out = []
                  decoder.end(out)
                  return isNonEmpty(out) ? Effect.succeed(out) : Cause.done()
                }
              })
            })
          return next
        })
      ))

/**
 * A provider's SSE body, framed and normalized in one step: the same events and the
 * same failures as `Sse.decode(sse)` then `normalizeWith(makeHandler)`, for any split
 * of the body into reads, with one pull per read instead of one per stage. A framing
 * failure comes after the events framed before it are normalized (unless those fail
 * first, as they would in the two stages).
 *
 * @internal
 */
export const decodeSseWith = (makeHandler: (now: () => number) => Handler, sse?: Sse.DecodeOptions) =>
<E, R>(
  self: Stream.Stream<Uint8Array, E, R>
): Stream.Stream<StreamEvent.StreamEvent, E | Sse.SseError | WireDecodeError, R> =>
  Stream.transformPull(self, (pull) =>
    Effect.clockWith((clock) =>
      Effect.sync(() => {
        const framer = Sse.makeFramer(sse)
        const decoder = new EventDecoder(makeHandler, clock)
        let framing: Sse.SseError | undefined // fails the stream once the events before it are out
        let done = false // the input is over
        const next: Pull.Pull<
          Arr.NonEmptyReadonlyArray<StreamEvent.StreamEvent>,
          E | Sse.SseError | WireDecodeError,
          void
        > = Effect.suspend(() => {
          if (decoder.failure !== undefined) return Effect.fail(decoder.failure)
          if (framing !== undefined) return Effect.fail(framing)
          if (done) return Cause.done()
          return Pull.matchEffect(pull, {
            onSuccess: (reads) => {
              const events: Array<Sse.SseEvent> = []
              for (let i = 0; i < reads.length && framing === undefined; i++) framing = framer.push(reads[i]!, events)
              const out: Out = []
              if (events.length > 0) decoder.input(events, out)
              return isNonEmpty(out) ? Effect.succeed(out) : next
            },
            onFailure: Effect.failCause,
            onDone: () => {
              done = true
              const events: Array<Sse.SseEvent> = []
              framing = framer.end(events)
              const out: Out = []
              if (events.length > 0) decoder.input(events, out)
              if (framing === undefined && decoder.failure === undefined) decoder.end(out)
              return isNonEmpty(out) ? Effect.succeed(out) : next
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

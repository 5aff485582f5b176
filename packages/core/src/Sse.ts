/**
 * Server-sent events framing: a `Stream` transformer from the bytes of an HTTP body to
 * the events it carries, for any split of those bytes into reads.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Pull from "effect/Pull"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as InternalFramer from "./internal/sseFramer.js"

/**
 * One dispatched event. `event` defaults to `"message"`; `id` is the last event id seen
 * so far in the stream; `retry` is set on the event that follows a `retry:` field;
 * `line` is the 1-based line of the event's first field, for error messages.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SseEvent = Schema.Struct({
  event: Schema.String,
  data: Schema.String,
  id: Schema.optionalKey(Schema.String),
  retry: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  line: Schema.Int.check(Schema.isGreaterThan(0)),
  /**
   * Set on an event the input ended inside: its terminating blank line never came (a
   * body cut short), so its data may be cut too.
   */
  unterminated: Schema.optionalKey(Schema.Literal(true))
}).annotate({ identifier: "SseEvent" })

/**
 * @since 0.1.0
 * @category models
 */
export type SseEvent = typeof SseEvent.Type

/**
 * Framing failed: an event grew past the configured size (`EventTooLarge`, at `line`),
 * or the bytes are not UTF-8 (`InvalidUtf8`: `byteOffset` is the 0-based offset in the
 * body of the first byte that starts no valid UTF-8 sequence, `line` the 1-based line
 * it is on, whichever reads the body came in). The events before that byte are framed
 * first.
 *
 * @since 0.1.0
 * @category errors
 */
export class SseError extends Schema.TaggedError<SseError>()("SseError", {
  reason: Schema.Literals(["EventTooLarge", "InvalidUtf8"]),
  message: Schema.String,
  line: Schema.optionalKey(Schema.Int),
  byteOffset: Schema.optionalKey(Schema.Int)
}) {}

/**
 * Framing options.
 *
 * @since 0.1.0
 * @category models
 */
export interface DecodeOptions {
  /**
   * The largest event, in UTF-16 code units of its field lines, before framing fails
   * with `EventTooLarge`. Memory held for one event never exceeds it by more than one
   * read. Default 8 MiB.
   */
  readonly maxEventSize?: number | undefined
}

/**
 * The default largest event: 8 Mi code units.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxEventSize = 8 * 1024 * 1024

const toError = (failure: InternalFramer.FramerFailure, maxEventSize: number): SseError =>
  failure._tag === "EventTooLarge"
    ? new SseError({
      reason: "EventTooLarge",
      message: `SSE event starting before line ${failure.line} is larger than ${maxEventSize} characters`,
      line: failure.line
    })
    : new SseError({
      reason: "InvalidUtf8",
      message: `SSE body is not valid UTF-8 at byte ${failure.byteOffset} (line ${failure.line})`,
      line: failure.line,
      byteOffset: failure.byteOffset
    })

/**
 * SSE framing as a pure transition, fed one read at a time: what `decode` runs, for a
 * stage that frames inside its own step (a provider's body decoded to events in one
 * step). After a failure it frames nothing more.
 *
 * @since 0.3.0
 * @category models
 */
export interface Framer {
  /**
   * Frames one read: pushes the events it completes into `out`, and returns the
   * failure (the events before it are pushed first).
   */
  readonly push: (bytes: Uint8Array, out: Array<SseEvent>) => SseError | undefined
  /**
   * Ends the input: a final event without its blank line is still pushed, marked
   * `unterminated`.
   */
  readonly end: (out: Array<SseEvent>) => SseError | undefined
}

/**
 * A framer for one body.
 *
 * @since 0.3.0
 * @category constructors
 */
export const makeFramer = (options?: DecodeOptions): Framer => {
  const maxEventSize = options?.maxEventSize ?? defaultMaxEventSize
  const framer = InternalFramer.makeFramer({ maxEventSize })
  let failed = false
  const checked = (failure: InternalFramer.FramerFailure | undefined): SseError | undefined => {
    if (failure === undefined) return undefined
    failed = true
    return toError(failure, maxEventSize)
  }
  return {
    push: (bytes, out) => (failed ? undefined : checked(framer.push(bytes, out))),
    end: (out) => (failed ? undefined : checked(framer.end(out)))
  }
}

/**
 * Frames a byte stream into SSE events. Each input chunk yields the chunk of events it
 * completes. At the end of input, a final event without its terminating blank line is
 * still dispatched, marked `unterminated`, so a server that closes early loses
 * nothing; whoever decodes its data knows the data may be cut short.
 *
 * @since 0.1.0
 * @category framing
 */
export const decode =
  (options?: DecodeOptions) =>
  <E, R>(self: Stream.Stream<Uint8Array, E, R>): Stream.Stream<SseEvent, E | SseError, R> =>
    Stream.transformPull(self, (pull) =>
      Effect.sync(() => {
        const framer = makeFramer(options)
        // a failure waits until the events framed before it are out
        let failure: SseError | undefined
        let ended = false
        const emit = (
          out: Array<SseEvent>
        ): Pull.Pull<Arr.NonEmptyReadonlyArray<SseEvent>, E | SseError, void> =>
          Arr.isArrayNonEmpty(out) ? Effect.succeed(out) : next
        const next: Pull.Pull<Arr.NonEmptyReadonlyArray<SseEvent>, E | SseError, void> = Effect.suspend(() => {
          if (failure !== undefined) return Effect.fail(failure)
          if (ended) return Cause.done()
          return Pull.matchEffect(pull, {
            onSuccess: (input: Arr.NonEmptyReadonlyArray<Uint8Array>) => {
              const out: Array<SseEvent> = []
              for (const bytes of input) {
                failure = framer.push(bytes, out)
                if (failure !== undefined) break
              }
              return emit(out)
            },
            onFailure: (cause: Cause.Cause<E>) => Effect.failCause(cause),
            onDone: () => {
              ended = true
              const out: Array<SseEvent> = []
              failure = framer.end(out)
              return emit(out)
            }
          })
        })
        return next
      }))

/**
 * Frames a whole body held in memory. A convenience for recorded transcripts.
 *
 * @since 0.1.0
 * @category framing
 */
export const decodeText = (text: string, options?: DecodeOptions): Effect.Effect<ReadonlyArray<SseEvent>, SseError> =>
  Stream.make(new TextEncoder().encode(text)).pipe(
    decode(options),
    Stream.runCollect
  )

/**
 * How `encodeEvent` writes an event's `data:` lines.
 *
 * - `dataSpace` (true): a space after `data:`, as most servers write it (`data: x`);
 *   false writes `data:x`, as the Durable Streams server does.
 *
 * @since 0.3.0
 * @category encoding
 */
export interface EncodeOptions {
  readonly dataSpace?: boolean | undefined
}

/**
 * Encodes one event back into SSE text (`id`, `event`, `retry`, then one `data:` line
 * per line of data, then a blank line). `decode` of the result gives the event back.
 * The data is split at CR, LF or CRLF, each line in a `data:` line of its own, so that
 * data cannot end the event or forge another. The one SSE writer of Sluice: the turn
 * feeds and the Durable Streams server write with it.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeEvent = (
  event: {
    readonly event?: string | undefined
    readonly data: string
    readonly id?: string | undefined
    readonly retry?: number | undefined
  },
  options?: EncodeOptions
): string => {
  const data = options?.dataSpace === false ? "data:" : "data: "
  let text = ""
  if (event.id !== undefined) text += `id: ${event.id}\n`
  if (event.event !== undefined && event.event !== "message") text += `event: ${event.event}\n`
  if (event.retry !== undefined) text += `retry: ${event.retry}\n`
  for (const line of event.data.split(/\r\n|\r|\n/)) text += `${data}${line}\n`
  return text + "\n"
}

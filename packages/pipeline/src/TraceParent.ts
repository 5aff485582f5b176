/**
 * W3C trace context (`traceparent`, `tracestate`) as schemas: a caller's trace handed
 * to a turn, so that the turn's spans join it and every event of the turn carries it.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Tracer from "effect/Tracer"

const traceparentPattern = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/**
 * A W3C `traceparent` header value, version `00`:
 * `00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>`, lower case, with
 * neither id all zeros.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TraceParent = Schema.String.check(
  Schema.makeFilter((text) => {
    const match = traceparentPattern.exec(text)
    if (match === null) return "a traceparent is 00-<32 hex trace id>-<16 hex span id>-<2 hex flags>, lower case"
    if (match[1] !== "00") return `traceparent version ${match[1]} is not supported (00)`
    if (/^0+$/.test(match[2]!)) return "the traceparent's trace id is all zeros"
    if (/^0+$/.test(match[3]!)) return "the traceparent's span id is all zeros"
    return true
  })
).pipe(Schema.brand("TraceParent")).annotate({ identifier: "TraceParent" })

/**
 * @since 0.1.0
 * @category models
 */
export type TraceParent = typeof TraceParent.Type

/**
 * A W3C `tracestate` header value: at most 512 characters of `key=value` members
 * separated by commas, passed on as given.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TraceState = Schema.String.check(
  Schema.isMaxLength(512),
  Schema.isPattern(/^[\x20-\x7E]*$/, { message: "a tracestate is printable ASCII" })
).annotate({ identifier: "TraceState" })

/**
 * A turn's trace context: the caller's `traceparent` and `tracestate`, each checked.
 * The same shape as an event's `trace_context`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TraceContext = Schema.Struct({
  traceparent: Schema.optionalKey(TraceParent),
  tracestate: Schema.optionalKey(TraceState)
}).annotate({ identifier: "TraceContext" })

/**
 * The `traceparent` given was not one: `detail` says what is wrong with it.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidTraceParent extends Schema.TaggedError<InvalidTraceParent>()("InvalidTraceParent", {
  detail: Schema.String
}) {
  /** @since 0.1.0 */
  override get message(): string {
    return `invalid traceparent: ${this.detail}`
  }
}

const decode = Schema.decodeUnknownEffect(TraceParent)

/**
 * Checks a `traceparent` value (as a CLI flag or header gives it), failing with
 * `InvalidTraceParent` that says what is wrong.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parse = (text: string): Effect.Effect<TraceParent, InvalidTraceParent> =>
  Effect.mapError(
    decode(text),
    (error) => new InvalidTraceParent({ detail: error.message })
  )

/**
 * The span a `traceparent` names, as the parent of Effect spans (`Effect.withSpan(name,
 * { parent })`): its trace id, span id and sampled flag.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toExternalSpan = (traceparent: TraceParent): Tracer.ExternalSpan => {
  const [, traceId, spanId, flags] = traceparent.split("-")
  return Tracer.externalSpan({
    traceId: traceId!,
    spanId: spanId!,
    sampled: (Number.parseInt(flags!, 16) & 1) === 1
  })
}

/**
 * The `traceparent` of a span (sampled).
 *
 * @since 0.1.0
 * @category conversions
 */
export const fromSpan = (span: Tracer.AnySpan): string =>
  `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`

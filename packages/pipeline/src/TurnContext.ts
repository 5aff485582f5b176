/**
 * What a turn is, given once: its ids, the key prefix its streams live under, and the
 * trace context its events carry. Every stage of the pipeline reads them from here.
 *
 * @since 0.1.0
 */
import { Ids, type StreamEvent } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as TraceParent from "./TraceParent.js"

// A UUID in its 8-4-4-4-12 hex form, of any version (as Effect 3's `Schema.UUID`;
// Effect 4's `isUUID` also checks the version and variant digits).
const Uuid = Schema.String.check(Schema.isGUID({ expected: "a UUID" }))

/**
 * A turn's context. `runId` is the provider response's id in the events
 * (`response_id`); `prefix`, when given, overrides the pipeline's. `traceContext` is a
 * caller's W3C trace context (a checked `traceparent`, and `tracestate`): every event
 * of the turn carries it, and the turn's spans are its children.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TurnContext = Schema.Struct({
  turnId: Uuid,
  threadId: Uuid,
  runId: Uuid,
  prefix: Schema.optionalKey(Schema.Trimmed.check(Schema.isNonEmpty(), Schema.isPattern(/^[^\s{}]+$/))),
  traceContext: Schema.optionalKey(TraceParent.TraceContext)
}).annotate({ identifier: "TurnContext" })

/**
 * @since 0.1.0
 * @category models
 */
export type TurnContext = typeof TurnContext.Type

/**
 * A context as a caller gives it: every id optional (fresh by default). A
 * `traceparent` (and `tracestate`) given alone is the same as in `traceContext`.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnContextInput {
  readonly turnId?: string | undefined
  readonly threadId?: string | undefined
  readonly runId?: string | undefined
  readonly prefix?: string | undefined
  readonly traceContext?: StreamEvent.TraceContext | undefined
  readonly traceparent?: string | undefined
  readonly tracestate?: string | undefined
}

/**
 * The context was not valid: `detail` names each bad field.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidTurnContext extends Schema.TaggedError<InvalidTurnContext>()("InvalidTurnContext", {
  detail: Schema.String
}) {
  /** @since 0.1.0 */
  override get message(): string {
    return `invalid turn context: ${this.detail}`
  }
}

const decode = Schema.decodeUnknownEffect(TurnContext, { errors: "all", onExcessProperty: "error" })

/**
 * A turn context with fresh UUIDs for the ids not given, drawn each time the effect
 * runs; fails with `InvalidTurnContext` naming each bad field (a malformed
 * `traceparent` included).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (input: TurnContextInput = {}): Effect.Effect<TurnContext, InvalidTurnContext> =>
  // the ids are drawn when the effect runs, so each run (a retry, a repeat) has its own
  Effect.suspend(() => {
    const traceContext = input.traceparent === undefined && input.tracestate === undefined
      ? input.traceContext
      : {
        ...input.traceContext,
        ...(input.traceparent === undefined ? {} : { traceparent: input.traceparent }),
        ...(input.tracestate === undefined ? {} : { tracestate: input.tracestate })
      }
    return Effect.mapError(
      decode({
        turnId: input.turnId ?? Ids.generateEventId(),
        threadId: input.threadId ?? Ids.generateEventId(),
        runId: input.runId ?? Ids.generateEventId(),
        ...(input.prefix === undefined ? {} : { prefix: input.prefix }),
        ...(traceContext === undefined ? {} : { traceContext })
      }),
      (error) => new InvalidTurnContext({ detail: error.message })
    )
  })

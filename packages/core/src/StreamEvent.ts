/**
 * The hub vocabulary (docs/events.md): every provider stream becomes a sequence of these
 * events, and every later stage reads them. snake_case on the wire, as the seed has it.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { FinishReason } from "./FinishReason.js"
import * as Ids from "./Ids.js"
import { JsonObject, JsonValue } from "./Json.js"
import { ItemType, MessageOrigin, OutputItem, ReasoningKind } from "./OutputItem.js"
import type { ProviderError } from "./ProviderError.js"
import { ProviderErrorType } from "./ProviderError.js"
import * as SchemaDecode from "./SchemaDecode.js"
import * as SchemaGuard from "./SchemaGuard.js"
import { UsageOnTheWire } from "./Usage.js"

// a UUID in its 8-4-4-4-12 hex form, any version: the shape only (`isGUID`, where `isUUID` would also check the version)
const Uuid = Schema.String.check(Schema.isGUID())

const Timestamp = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * W3C trace context of the span that produced an event, when one was active.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TraceContext = Schema.Struct({
  traceparent: Schema.optionalKey(Schema.String),
  tracestate: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "TraceContext" })

/**
 * @since 0.1.0
 * @category models
 */
export type TraceContext = typeof TraceContext.Type

/**
 * Error details on the wire. Provider errors add their classification. `raw` (since
 * 0.2.0) is the provider's own error object when the error arrived inside the stream
 * (an Anthropic `event: error`'s `error`, an OpenAI `error` event), as JSON; it is for
 * logs (`ProcessedChunk` gives it back as `originalError`), never for deciding anything.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ErrorObject = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  stack: Schema.optionalKey(Schema.String),
  type: Schema.optionalKey(ProviderErrorType),
  retryable: Schema.optionalKey(Schema.Boolean),
  status: Schema.optionalKey(Schema.Int),
  retry_after_ms: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  raw: Schema.optionalKey(JsonValue)
}).annotate({ identifier: "ErrorObject" })

/**
 * @since 0.1.0
 * @category models
 */
export type ErrorObject = typeof ErrorObject.Type

/**
 * The wire form of a `ProviderError`. Its raw cause is left out unless the caller
 * passes the provider's error object as `raw` (since 0.2.0: an error that arrived inside
 * the stream, as JSON).
 *
 * @since 0.1.0
 * @category constructors
 */
export const errorObjectFromProviderError = (error: ProviderError, raw?: JsonValue): ErrorObject => {
  const base: { -readonly [K in keyof ErrorObject]: ErrorObject[K] } = {
    code: error.code,
    message: error.message,
    type: error.type,
    retryable: error.retryable
  }
  if (error.status !== undefined) base.status = error.status
  if (error.retryAfterMs !== undefined) base.retry_after_ms = error.retryAfterMs
  if (raw !== undefined) base.raw = raw
  return base
}

/**
 * A turn begins.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResponseStart = Schema.Struct({
  type: Schema.Literal("response_start"),
  response_id: Uuid,
  turn_id: Uuid,
  thread_id: Uuid,
  agent_id: Schema.optionalKey(Uuid),
  model_id: Schema.String,
  provider_id: Schema.String,
  created_at: Timestamp
}).annotate({ identifier: "ResponseStart" })

/**
 * An output item begins. A message may say its `origin` already (docs/upserts.md#held-items holds a user
 * message back until its `item_done` when its id names a user or its origin says so).
 * A reasoning item may say its `reasoning_kind` (since 0.2.0): the kind of its
 * `initial_content` and of every delta that states none.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ItemStart = Schema.Struct({
  type: Schema.Literal("item_start"),
  item_id: Schema.String,
  item_type: ItemType,
  initial_content: Schema.optionalKey(Schema.String),
  name: Schema.optionalKey(Schema.String),
  arguments: Schema.optionalKey(Schema.String),
  code: Schema.optionalKey(Schema.String),
  origin: Schema.optionalKey(MessageOrigin),
  reasoning_kind: Schema.optionalKey(ReasoningKind)
}).annotate({ identifier: "ItemStart" })

/**
 * A piece of an item's content (text, reasoning text, or argument JSON text). A
 * reasoning delta may say its `reasoning_kind` (since 0.2.0; else its item's): a
 * provider item that holds both a summary and raw thinking (a Responses reasoning item
 * with `summary` and `reasoning_text` parts) stays one item, its deltas telling the
 * two apart.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ItemDelta = Schema.Struct({
  type: Schema.Literal("item_delta"),
  item_id: Schema.String,
  delta_content: Schema.String,
  reasoning_kind: Schema.optionalKey(ReasoningKind)
}).annotate({ identifier: "ItemDelta" })

/**
 * An item is complete; `final_item` carries all of it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ItemDone = Schema.Struct({
  type: Schema.Literal("item_done"),
  item_id: Schema.String,
  final_item: OutputItem
}).annotate({ identifier: "ItemDone" })

/**
 * An item failed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ItemError = Schema.Struct({
  type: Schema.Literal("item_error"),
  item_id: Schema.String,
  error: ErrorObject
}).annotate({ identifier: "ItemError" })

/**
 * An item was abandoned; whatever it held is to be dropped.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ItemCancelled = Schema.Struct({
  type: Schema.Literal("item_cancelled"),
  item_id: Schema.String,
  reason: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ItemCancelled" })

/**
 * How a turn ended: `complete`, `error`, `aborted` (its producer stopped it: the input
 * ended early, the process was signalled) or `cancelled` (someone asked it to stop,
 * a status the UI shows as the user's own doing).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResponseStatus = Schema.Literals(["complete", "error", "aborted", "cancelled"]).annotate({
  identifier: "ResponseStatus"
})

/**
 * @since 0.1.0
 * @category models
 */
export type ResponseStatus = typeof ResponseStatus.Type

/**
 * A turn is over.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResponseDone = Schema.Struct({
  type: Schema.Literal("response_done"),
  response_id: Uuid,
  status: ResponseStatus,
  // Sluice's usage, or the first design's `{prompt, completion, total}` decoded into one
  usage: Schema.optionalKey(UsageOnTheWire),
  finish_reason: Schema.NullOr(FinishReason),
  /**
   * What the provider said of the whole response that the next request needs (Anthropic's
   * code-execution `container`, `{id, expires_at}`); since 0.3.0.
   */
  provider_metadata: Schema.optionalKey(JsonObject)
}).annotate({ identifier: "ResponseDone" })

/**
 * A turn-level error.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResponseError = Schema.Struct({
  type: Schema.Literal("response_error"),
  response_id: Uuid,
  error: ErrorObject
}).annotate({ identifier: "ResponseError" })

/**
 * Any payload.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Payload = Schema.Union([
  ResponseStart,
  ItemStart,
  ItemDelta,
  ItemDone,
  ItemError,
  ItemCancelled,
  ResponseDone,
  ResponseError
]).annotate({ identifier: "Payload" })

/**
 * @since 0.1.0
 * @category models
 */
export type Payload = typeof Payload.Type

/**
 * @since 0.1.0
 * @category models
 */
export type PayloadType = Payload["type"]

/**
 * The payload of the given type.
 *
 * @since 0.1.0
 * @category models
 */
export type PayloadOf<T extends PayloadType> = Extract<Payload, { readonly type: T }>

const PayloadType = Schema.Literals([
  "response_start",
  "item_start",
  "item_delta",
  "item_done",
  "item_error",
  "item_cancelled",
  "response_done",
  "response_error"
])

const Envelope = Schema.Struct({
  event_id: Uuid,
  timestamp: Timestamp,
  trace_context: TraceContext,
  run_id: Uuid,
  type: PayloadType,
  payload: Payload
})

const typeMatches = (event: typeof Envelope.Type): boolean => event.type === event.payload.type

/**
 * The event envelope. Its `type` always equals `payload.type`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StreamEvent = Envelope.check(
  Schema.makeFilter(
    (event) => typeMatches(event) || `type ${event.type} does not match payload type ${event.payload.type}`,
    { identifier: "StreamEvent" }
  )
)

/**
 * @since 0.1.0
 * @category models
 */
export type StreamEvent = typeof StreamEvent.Type

const envelopeAsIs = SchemaGuard.decodesToItself(Envelope)

/**
 * The decoder's fast path for events (`SchemaGuard.decodesToItself` of `StreamEvent`,
 * which must leave a filter over a struct to the decoder): `true` only when decoding
 * `u` succeeds and gives `u` back, except for properties the schema does not name.
 * The filter reads only named properties, so it answers alike on `u` itself.
 *
 * @since 0.1.0
 * @category guards
 */
export const decodesToItself = (u: unknown): u is StreamEvent => envelopeAsIs(u) && typeMatches(u)

/**
 * Decodes an unknown value (for example parsed JSON) into a `StreamEvent`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeUnknown = SchemaDecode.decodeUnknown(StreamEvent)

/**
 * What every event of one turn shares.
 *
 * @since 0.1.0
 * @category models
 */
export interface EventContext {
  readonly runId: string
  readonly traceContext?: TraceContext | undefined
}

const emptyTraceContext: TraceContext = {}

/**
 * Wraps a payload in an envelope with the given id and timestamp. Pure; use `make`
 * inside Effect code.
 *
 * @since 0.1.0
 * @category constructors
 */
export const envelope = (context: EventContext, payload: Payload, eventId: string, timestamp: number): StreamEvent => ({
  event_id: eventId,
  timestamp,
  trace_context: context.traceContext ?? emptyTraceContext,
  run_id: context.runId,
  type: payload.type,
  payload
})

/**
 * Wraps a payload in an envelope with a fresh event id and the current time of
 * Effect's `Clock`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (context: EventContext, payload: Payload): Effect.Effect<StreamEvent> =>
  Effect.map(Clock.currentTimeMillis, (now) => envelope(context, payload, Ids.generateEventId(), now))

/**
 * Whether an event has the given payload type, narrowing its payload.
 *
 * @since 0.1.0
 * @category guards
 */
export const is =
  <T extends PayloadType>(type: T) =>
  (event: StreamEvent): event is StreamEvent & { readonly type: T; readonly payload: PayloadOf<T> } =>
    event.payload.type === type

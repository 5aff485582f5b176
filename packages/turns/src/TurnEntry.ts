/**
 * The entries of a turn's streams (docs/redis.md#entries): five fields, in this order,
 *
 * ```
 * eventId <uuid> timestamp <ms> turnId <uuid> payloadType <type> payload <json>
 * ```
 *
 * In Stream B they are the StreamBMessage's fields (`payloadType` is `item_upsert` or
 * `turn_event`, `payload` the UIUpsert or UITurnEvent JSON). In Stream A `eventId` and
 * `timestamp` are the StreamEvent's, `payloadType` is its `type` and `payload` the
 * whole event as JSON.
 *
 * @since 0.3.0
 */
import { LastEntry, SchemaDecode, StreamBMessage, StreamEvent } from "@sluice/core"
import type { Fields, StreamEntry } from "@sluice/redis/StreamEntry"
import { field } from "@sluice/redis/StreamEntry"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { checkedItemDelta, itemDeltaJson } from "./internal/eventJson.js"

/**
 * The five fields of an entry, decoded: `timestamp` becomes a number.
 *
 * @since 0.3.0
 * @category schemas
 */
export const TurnEntryFields = Schema.Struct({
  eventId: Schema.String,
  // A number written as text (a blank one is no number), a non-negative integer.
  timestamp: Schema.String.check(Schema.isPattern(/\S/)).pipe(
    Schema.decodeTo(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)), SchemaTransformation.numberFromString)
  ),
  turnId: Schema.String,
  payloadType: Schema.String,
  payload: Schema.String
}).annotate({ identifier: "TurnEntryFields" })

/**
 * An entry as a JSON value, the one shape every surface that prints or serves whole
 * entries uses (`sluice replay --jsonl`, the turn's streams under `/v1/stream/turns/`):
 * the five fields with `timestamp` a number and `payload` the JSON text exactly as
 * stored. A Stream B entry's value is its `StreamBMessage`; a Stream A entry's
 * `payloadType` is its event's `type` and its `payload` the event's JSON.
 *
 * @since 0.3.0
 * @category schemas
 */
export const TurnEntryJson = Schema.Struct({
  eventId: Schema.String,
  timestamp: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  turnId: Schema.String,
  payloadType: Schema.String,
  payload: Schema.String
}).annotate({ identifier: "TurnEntryJson" })

/**
 * @since 0.3.0
 * @category models
 */
export type TurnEntryJson = typeof TurnEntryJson.Type

/**
 * An entry of a turn stream: its Redis id and its fields.
 *
 * @since 0.3.0
 * @category models
 */
export interface TurnEntry extends Schema.Schema.Type<typeof TurnEntryFields> {
  readonly id: string
}

const names = ["eventId", "timestamp", "turnId", "payloadType", "payload"] as const

/**
 * The Stream B fields of a StreamBMessage.
 *
 * @since 0.3.0
 * @category encoding
 */
export const fromStreamBMessage = (message: StreamBMessage.StreamBMessage): Fields => [
  ["eventId", message.eventId],
  ["timestamp", String(message.timestamp)],
  ["turnId", message.turnId],
  ["payloadType", message.payloadType],
  ["payload", message.payload]
]

const encodeEvent = Schema.encodeResult(Schema.fromJsonString(StreamEvent.StreamEvent))

/**
 * The Stream A fields of a StreamEvent of the given turn. Fails when the event does
 * not satisfy its schema.
 *
 * @since 0.3.0
 * @category encoding
 */
export const fromStreamEvent = (
  turnId: string,
  event: StreamEvent.StreamEvent
): Result.Result<Fields, Schema.SchemaError> => {
  // Deltas, nearly every event of a turn, skip the schema's generic encoder.
  const delta = itemDeltaJson(event)
  return delta !== undefined
    ? Result.succeed(eventFields(turnId, event, delta))
    : Result.map(encodeEvent(event), (payload) => eventFields(turnId, event, payload))
}

/**
 * The Stream A fields of an `item_delta` StreamEvent, checked now and made each time
 * the returned function is called (the fields `fromStreamEvent` gives); `undefined`
 * for any other event, or one that may not satisfy the schema (`fromStreamEvent` then
 * says). For a writer whose entries wait for Redis's replies: the function holds the
 * event's parts, not their JSON.
 *
 * @since 0.3.0
 * @internal
 */
export const deltaFieldsLater = (turnId: string, event: StreamEvent.StreamEvent): (() => Fields) | undefined => {
  const json = checkedItemDelta(event)
  return json === undefined ? undefined : () => eventFields(turnId, event, json())
}

const eventFields = (turnId: string, event: StreamEvent.StreamEvent, payload: string): Fields => [
  ["eventId", event.event_id],
  ["timestamp", String(event.timestamp)],
  ["turnId", turnId],
  ["payloadType", event.type],
  ["payload", payload]
]

const decodeFields = SchemaDecode.decodeUnknown(TurnEntryFields)

/**
 * Reads the five fields of an entry. Fails, naming the field, when one is missing or
 * malformed.
 *
 * @since 0.3.0
 * @category decoding
 */
export const decode = (entry: StreamEntry): Effect.Effect<TurnEntry, Schema.SchemaError> => {
  const record: Record<string, string> = {}
  for (const name of names) {
    const value = field(entry, name)
    if (Option.isSome(value)) record[name] = value.value
  }
  return Effect.map(decodeFields(record), (fields) => ({ id: entry.id, ...fields }))
}

/**
 * An entry's JSON value (`TurnEntryJson`). For an entry the pipeline wrote; a field
 * that is missing reads as empty text (a timestamp as 0).
 *
 * @since 0.3.0
 * @category encoding
 */
export const toJson = (entry: StreamEntry): TurnEntryJson => {
  const value = (name: string) => Option.getOrElse(field(entry, name), () => "")
  const timestamp = Number(value("timestamp"))
  return {
    eventId: value("eventId"),
    timestamp: Number.isSafeInteger(timestamp) && timestamp >= 0 ? timestamp : 0,
    turnId: value("turnId"),
    payloadType: value("payloadType"),
    payload: value("payload")
  }
}

const decodeMessage = SchemaDecode.decodeUnknown(StreamBMessage.StreamBMessage)

/**
 * The StreamBMessage a Stream B entry holds.
 *
 * @since 0.3.0
 * @category decoding
 */
export const toStreamBMessage = (
  entry: StreamEntry
): Effect.Effect<StreamBMessage.StreamBMessage, Schema.SchemaError> =>
  Effect.flatMap(decode(entry), (fields) =>
    decodeMessage({
      eventId: fields.eventId,
      timestamp: fields.timestamp,
      turnId: fields.turnId,
      payloadType: fields.payloadType,
      payload: fields.payload
    }))

const decodeEvent = Schema.decodeEffect(Schema.fromJsonString(StreamEvent.StreamEvent))

/**
 * The StreamEvent a Stream A entry holds.
 *
 * @since 0.3.0
 * @category decoding
 */
export const toStreamEvent = (entry: StreamEntry): Effect.Effect<StreamEvent.StreamEvent, Schema.SchemaError> =>
  Effect.flatMap(decode(entry), (fields) => decodeEvent(fields.payload))

/**
 * Whether an entry ends its turn: its last entry, `response_done` in Stream A or the
 * `turn_completed` turn event in Stream B (core's `LastEntry`). A failed turn's
 * `response_error` / `turn_error` comes just before it and does not end the turn. A
 * follower stops after it (the `until` of a tail).
 *
 * @since 0.3.0
 * @category predicates
 */
export const isFinal = (entry: StreamEntry): boolean =>
  LastEntry.isLastEntry(
    Option.getOrUndefined(field(entry, "payloadType")),
    Option.getOrUndefined(field(entry, "payload"))
  )

/**
 * The envelope of an upsert or turn event in Redis Stream B (docs/upserts.md): the payload
 * travels as JSON text.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { UITurnEvent } from "./UITurnEvent.js"
import { UIUpsert } from "./UIUpsert.js"

// a UUID in its 8-4-4-4-12 hex form, any version: the shape only (`isGUID`, where `isUUID` would also check the version)
const Uuid = Schema.String.check(Schema.isGUID())

/**
 * `item_upsert | turn_event`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StreamBPayloadType = Schema.Literals(["item_upsert", "turn_event"]).annotate({
  identifier: "StreamBPayloadType"
})

/**
 * @since 0.1.0
 * @category models
 */
export type StreamBPayloadType = typeof StreamBPayloadType.Type

/**
 * What the upsert stage emits: an upsert or a turn event.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UIPayload = Schema.Union([UIUpsert, UITurnEvent]).annotate({ identifier: "UIPayload" })

/**
 * @since 0.1.0
 * @category models
 */
export type UIPayload = typeof UIPayload.Type

/**
 * The Stream B entry.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StreamBMessage = Schema.Struct({
  eventId: Uuid,
  timestamp: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  turnId: Uuid,
  payloadType: StreamBPayloadType,
  payload: Schema.String
}).annotate({ identifier: "StreamBMessage" })

/**
 * @since 0.1.0
 * @category models
 */
export type StreamBMessage = typeof StreamBMessage.Type

/**
 * The payload type of a UI payload.
 *
 * @since 0.1.0
 * @category accessors
 */
export const payloadTypeOf = (payload: UIPayload): StreamBPayloadType =>
  payload.type === "item_upsert" ? "item_upsert" : "turn_event"

/**
 * Wraps a UI payload in its Stream B envelope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const wrap = (payload: UIPayload, eventId: string, timestamp: number): StreamBMessage => ({
  eventId,
  timestamp,
  turnId: payload.turnId,
  payloadType: payloadTypeOf(payload),
  payload: JSON.stringify(payload)
})

/**
 * Decodes the JSON payload of a Stream B entry, checking it against its payload type.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodePayload = Schema.decodeEffect(Schema.fromJsonString(UIPayload))

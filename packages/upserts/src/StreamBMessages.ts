/**
 * Wrapping UI payloads in their Redis Stream B envelope (docs/upserts.md): a fresh `eventId`,
 * the `timestamp` of Effect's `Clock`, the payload's `turnId`, its `payloadType`
 * (`item_upsert` or `turn_event`) and the payload as JSON text.
 *
 * @since 0.1.0
 */
import { Ids, StreamBMessage } from "@sluice/core"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

const wrapOne = (payload: StreamBMessage.UIPayload, now: number): StreamBMessage.StreamBMessage =>
  StreamBMessage.wrap(payload, Ids.generateEventId(), now)

/**
 * Wraps one payload, stamped with the current time of Effect's `Clock`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromPayload = (payload: StreamBMessage.UIPayload): Effect.Effect<StreamBMessage.StreamBMessage> =>
  Effect.map(Clock.currentTimeMillis, (now) => wrapOne(payload, now))

/**
 * Wraps payloads stamped with one time (milliseconds since the epoch).
 *
 * @since 0.3.0
 * @category constructors
 */
export const wrapAll = (
  payloads: ReadonlyArray<StreamBMessage.UIPayload>,
  now: number
): Array<StreamBMessage.StreamBMessage> => payloads.map((payload) => wrapOne(payload, now))

/**
 * Wraps every payload of a stream (one clock reading per chunk).
 *
 * @example
 * ```ts
 * import type { StreamEvent } from "@sluice/core"
 * import { StreamBMessages, UpsertStream } from "@sluice/upserts"
 * import type * as Stream from "effect/Stream"
 *
 * declare const events: Stream.Stream<StreamEvent.StreamEvent>
 * const messages = events.pipe(UpsertStream.upserts(), StreamBMessages.wrap)
 * ```
 *
 * @since 0.1.0
 * @category transformers
 */
export const wrap = <E, R>(
  self: Stream.Stream<StreamBMessage.UIPayload, E, R>
): Stream.Stream<StreamBMessage.StreamBMessage, E, R> =>
  Stream.mapArrayEffect(
    self,
    (chunk) => Effect.map(Clock.currentTimeMillis, (now) => Arr.map(chunk, (payload) => wrapOne(payload, now)))
  )

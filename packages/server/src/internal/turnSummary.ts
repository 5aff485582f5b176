/**
 * What the list of turns says of each turn, read cheaply: the first few entries and
 * the last entry of its Stream B and the first few entries of its Stream A (three
 * bounded reads), never a whole stream.
 *
 * @internal
 */
import { StreamBMessage, type StreamEvent } from "@sluice/core"
import { type RedisError, RedisStreams, type StreamEntry } from "@sluice/redis"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { TurnStatus } from "../TurnSnapshot.js"

const NonNegative = Schema.Number.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * A turn as the list shows it. `providerId` and `modelId` come from its `turn_started`;
 * `status` is `streaming` until a turn event ends it; `endedAt` is the time of that
 * last entry and `durationMs` the time from the first entry to it (both times written
 * by the producer). `firstOutputMs` is the time from the first entry to the first
 * event of the model's output on Stream A (an item start, delta or done of a message
 * not from the user, reasoning, a tool call), when that is among its first
 * `eventHeadEntries` entries: Stream B keeps only each item's latest upsert, whose
 * time is the item's last change, not its first. A turn whose stream is gone
 * (expired, trimmed) has only its id and start.
 *
 * @internal
 */
export const TurnSummary = Schema.Struct({
  turnId: Schema.String,
  startedAt: Schema.Number,
  providerId: Schema.optionalKey(Schema.String),
  modelId: Schema.optionalKey(Schema.String),
  status: Schema.optionalKey(TurnStatus),
  firstOutputMs: Schema.optionalKey(NonNegative),
  endedAt: Schema.optionalKey(Schema.Number),
  durationMs: Schema.optionalKey(NonNegative)
}).annotate({ identifier: "TurnSummary" })

/**
 * @internal
 */
export type TurnSummary = typeof TurnSummary.Type

/**
 * `GET /v1/turns`: recent turns, newest first.
 *
 * @internal
 */
export const TurnList = Schema.Struct({ turns: Schema.Array(TurnSummary) }).annotate({ identifier: "TurnList" })

/**
 * How many entries from the start of a turn's stream the list reads to find its first
 * output.
 *
 * @internal
 */
export const headEntries = 16

/**
 * How many entries from the start of a turn's Stream A the list reads to find its
 * first output (the user's input items come first).
 *
 * @internal
 */
export const eventHeadEntries = 64

type Decoded = { readonly payload: StreamBMessage.UIPayload; readonly timestamp: number }

// The time of the first event of the model's output among Stream A's head: items the
// user gave (a user message) and compactions are input, not output.
const firstOutputAt = (events: ReadonlyArray<StreamEvent.StreamEvent>): number | undefined => {
  const input = new Set<string>()
  for (const event of events) {
    const payload = event.payload
    switch (payload.type) {
      case "item_start":
        if (payload.item_type === "compaction" || (payload.item_type === "message" && payload.origin === "user")) {
          input.add(payload.item_id)
        } else return event.timestamp
        break
      case "item_delta":
      case "item_done":
        if (!input.has(payload.item_id)) return event.timestamp
        break
      default:
        break
    }
  }
  return undefined
}

// Without Stream A (it expired, or was never written), the first upsert creating an
// output item: Stream B keeps it only while the item has not changed since, so its
// time is the item's first; an item changed later says nothing of when it began.
const firstCreatedAt = (head: ReadonlyArray<StreamEntry.StreamEntry>) =>
  Effect.map(
    Effect.forEach(head, (entry) => payloadOf(Option.some(entry))),
    (decoded) =>
      decoded.flatMap((entry) => {
        if (Option.isNone(entry)) return []
        const { payload, timestamp } = entry.value
        return payload.type === "item_upsert" && payload.changeType === "created" &&
            payload.itemType !== "compaction" &&
            !(payload.itemType === "message" && payload.origin === "user")
          ? [timestamp]
          : []
      })[0]
  )

// An entry that does not decode says nothing: the list shows what it can.
const payloadOf = (entry: Option.Option<StreamEntry.StreamEntry>): Effect.Effect<Option.Option<Decoded>> =>
  Option.isNone(entry)
    ? Effect.succeedNone
    : TurnEntry.toStreamBMessage(entry.value).pipe(
      Effect.flatMap((message) =>
        Effect.map(
          StreamBMessage.decodePayload(message.payload),
          (payload) => ({ payload, timestamp: message.timestamp })
        )
      ),
      Effect.option
    )

/**
 * The summary of one turn of the list.
 *
 * @internal
 */
export const summarize = (
  prefix: string,
  turnId: string,
  startedAt: number
): Effect.Effect<TurnSummary, RedisError.RedisError, RedisStreams.RedisStreams> =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const key = TurnKeys.upsertsKey(prefix, turnId)
    const [head, last, eventHead] = yield* Effect.all([
      redis.xrange(key, "-", "+", headEntries),
      redis.xlast(key),
      redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+", eventHeadEntries)
    ])
    const start = yield* payloadOf(Option.fromNullishOr(head[0]))
    if (Option.isNone(start)) return { turnId, startedAt }
    // an event that does not decode says nothing, as an upsert
    const events = yield* Effect.forEach(eventHead, (entry) => Effect.option(TurnEntry.toStreamEvent(entry)))
    const outputAt = firstOutputAt(events.flatMap((event) => (Option.isSome(event) ? [event.value] : []))) ??
      (events.length > 0 ? undefined : yield* firstCreatedAt(head))
    const end = yield* payloadOf(last)
    const started = start.value.payload.type === "turn_started" ? start.value.payload : undefined
    const ending =
      Option.isSome(end) && end.value.payload.type !== "item_upsert" && end.value.payload.type !== "turn_started"
        ? end.value
        : undefined
    const status: TurnStatus = ending === undefined
      ? "streaming"
      : ending.payload.type === "turn_completed"
      ? ending.payload.status
      : "error"
    return {
      turnId,
      startedAt,
      ...(started?.providerId === undefined ? {} : { providerId: started.providerId }),
      ...(started?.modelId === undefined ? {} : { modelId: started.modelId }),
      status,
      ...(outputAt === undefined ? {} : { firstOutputMs: Math.max(0, outputAt - start.value.timestamp) }),
      ...(ending === undefined
        ? {}
        : { endedAt: ending.timestamp, durationMs: Math.max(0, ending.timestamp - start.value.timestamp) })
    }
  })

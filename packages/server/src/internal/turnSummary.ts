/**
 * What the list of turns says of each turn, read cheaply: the first few entries and
 * the last entry of its Stream B (two bounded reads), never the whole stream.
 *
 * @internal
 */
import { StreamBMessage } from "@sluice/core"
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
 * upsert of the model's output (a message not from the user, reasoning, a tool call),
 * when that is among the first `headEntries` entries. A turn whose stream is gone
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

type Decoded = { readonly payload: StreamBMessage.UIPayload; readonly timestamp: number }

// The model's output, as opposed to the input it was given.
const isOutput = ({ payload }: Decoded): boolean =>
  payload.type === "item_upsert" && payload.itemType !== "compaction" &&
  !(payload.itemType === "message" && payload.origin === "user")

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
    const [head, last] = yield* Effect.all([redis.xrange(key, "-", "+", headEntries), redis.xlast(key)])
    const start = yield* payloadOf(Option.fromNullishOr(head[0]))
    if (Option.isNone(start)) return { turnId, startedAt }
    const decoded = yield* Effect.forEach(head, (entry) => payloadOf(Option.some(entry)))
    const output = decoded.flatMap((entry) => (Option.isSome(entry) && isOutput(entry.value) ? [entry.value] : []))[0]
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
      ...(output === undefined ? {} : { firstOutputMs: Math.max(0, output.timestamp - start.value.timestamp) }),
      ...(ending === undefined
        ? {}
        : { endedAt: ending.timestamp, durationMs: Math.max(0, ending.timestamp - start.value.timestamp) })
    }
  })

/**
 * What the list of turns says of each turn, read cheaply: the first and the last entry
 * of its Stream B (two bounded reads), never the whole stream.
 *
 * @internal
 */
import { StreamBMessage } from "@sluice/core"
import { type RedisError, RedisStreams, type StreamEntry, TurnEntry, TurnKeys } from "@sluice/redis"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { TurnStatus } from "../TurnSnapshot.js"

/**
 * A turn as the list shows it. `providerId` and `modelId` come from its `turn_started`;
 * `status` is `streaming` until a turn event ends it; `endedAt` is the time of that
 * last entry and `durationMs` the time from the first entry to it (both times written
 * by the producer). A turn whose stream is gone (expired, trimmed) has only its id and
 * start.
 *
 * @internal
 */
export interface TurnSummary {
  readonly turnId: string
  readonly startedAt: number
  readonly providerId?: string
  readonly modelId?: string
  readonly status?: TurnStatus
  readonly endedAt?: number
  readonly durationMs?: number
}

// An entry that does not decode says nothing: the list shows what it can.
const payloadOf = (entry: Option.Option<StreamEntry.StreamEntry>) =>
  Option.isNone(entry)
    ? Effect.succeedNone
    : TurnEntry.toStreamBMessage(entry.value).pipe(
      Effect.flatMap((message) =>
        Effect.map(StreamBMessage.decodePayload(message.payload), (payload) => ({ payload, timestamp: message.timestamp }))
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
    const [first, last] = yield* Effect.all([redis.xrange(key, "-", "+", 1), redis.xlast(key)])
    const start = yield* payloadOf(Option.fromNullable(first[0]))
    if (Option.isNone(start)) return { turnId, startedAt }
    const end = yield* payloadOf(last)
    const started = start.value.payload.type === "turn_started" ? start.value.payload : undefined
    const ending = Option.isSome(end) && end.value.payload.type !== "item_upsert" && end.value.payload.type !== "turn_started"
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
      ...(ending === undefined
        ? {}
        : { endedAt: ending.timestamp, durationMs: Math.max(0, ending.timestamp - start.value.timestamp) })
    }
  })

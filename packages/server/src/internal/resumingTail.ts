/**
 * A live tail of a turn's stream that is opened again after the last entry it read
 * when it fails, as `resume` allows: no entry is passed on twice or skipped. The one
 * rule behind both a shared tail (`SharedTail`) and a reader's own (`TurnFeed.follow`).
 *
 * @internal
 */
import type { RedisError, RedisStreams, StreamEntry } from "@sluice/redis"
import { TurnEnding } from "@sluice/turns"
import * as Effect from "effect/Effect"
import type * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"

/** @internal */
export const resumingTail = (
  redis: RedisStreams.RedisStreamsService,
  key: string,
  from: string,
  options: { readonly blockMs: number; readonly resume: Schedule.Schedule<unknown, RedisError.RedisError> }
): Stream.Stream<StreamEntry.StreamEntry, RedisError.RedisError> =>
  Stream.suspend(() => {
    let after = from
    return Stream.suspend(() => redis.tail(key, { after, until: TurnEnding.isLast, blockMs: options.blockMs })).pipe(
      Stream.mapArray((entries) => {
        after = entries[entries.length - 1]!.id
        return entries
      }),
      Stream.tapError((error) => Effect.logWarning(`tail of ${key} failed after ${after}: ${error.message}`)),
      Stream.retry(options.resume)
    )
  })

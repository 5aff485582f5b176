/**
 * Ends the turns whose producer died, whether anyone reads them or not.
 *
 * A reader following a turn ends it `producer_lost` when the producer's lease lapses
 * (`TurnFeed.watchProducer`); a turn nobody reads would stay `streaming` in
 * `GET /v1/turns` until its retention ran out. So every server sweeps: every `everyMs`
 * on Effect's `Clock` it reads the newest `batch` turns of the prefix's index, skips
 * those it has already seen end, and ends every turn whose lease lapsed
 * (`TurnEnding.end`). Any number of servers may sweep the same prefix: the ending's
 * entry ids make exactly one writer win, and the others find the turn ended.
 *
 * @internal
 */
import { type RedisError, RedisStreams } from "@sluice/redis"
import { TurnEnding, TurnKeys, TurnLease, TurnMetrics } from "@sluice/turns"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"

/**
 * How often the server sweeps, and how many of the newest turns it looks at each time.
 *
 * @internal
 */
export interface SweepOptions {
  readonly prefix: string
  readonly everyMs: number
  readonly batch: number
}

/**
 * The sweeper's memory of the turns it saw end (their lease gone and a terminal entry
 * in place), so that a sweep reads each ended turn once; pruned to the turns of the
 * last sweep.
 *
 * @internal
 */
export interface Swept {
  ended: Set<string>
}

/**
 * One sweep: ends the lapsed turns among the newest `batch` of the index. Returns how
 * many turns this sweep ended.
 *
 * @internal
 */
export const sweepOnce = (
  options: SweepOptions,
  swept: Swept
): Effect.Effect<number, RedisError.RedisError, RedisStreams.RedisStreams> =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const members = yield* redis.zrangeByScore(TurnKeys.turnsKey(options.prefix), -Infinity, Infinity, {
      reverse: true,
      count: options.batch
    })
    const stillEnded = new Set<string>()
    let endedNow = 0
    for (const { member: turnId } of members) {
      if (swept.ended.has(turnId)) {
        stillEnded.add(turnId)
        continue
      }
      if ((yield* TurnLease.state(options.prefix, turnId)) !== "lapsed") continue
      const outcome = yield* TurnEnding.end(options.prefix, turnId, TurnEnding.producerLost)
      stillEnded.add(turnId)
      if (outcome !== "ended") continue
      endedNow++
      yield* Metric.update(TurnMetrics.leaseExpiries("reader"), 1)
      yield* Effect.logWarning(`turn ${turnId}: its producer's lease lapsed; ended it with producer_lost`)
    }
    swept.ended = stillEnded
    return endedNow
  })

/**
 * Sweeps every `everyMs`, for as long as it runs (a fiber of the server's scope); a
 * sweep that fails on a Redis error is logged and tried again at the next one.
 *
 * @internal
 */
export const sweep = (options: SweepOptions): Effect.Effect<never, never, RedisStreams.RedisStreams> => {
  const swept: Swept = { ended: new Set() }
  return sweepOnce(options, swept).pipe(
    Effect.catch((error) => Effect.logWarning(`sweeping for turns whose producer died: ${error.message}`)),
    Effect.delay(Duration.millis(options.everyMs)),
    Effect.forever
  )
}

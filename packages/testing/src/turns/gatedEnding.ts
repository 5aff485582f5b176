/**
 * A store whose write of Stream A's ending (the atomic step with its `response_error`)
 * waits for `gate` after telling `started`: the moment a test makes the writer's
 * caller go away.
 */
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * The `RedisStreams` in context, whose write of a turn's `response_error` ending waits on `gate` (after completing `started`).
 *
 * @since 0.3.0
 */
export const gatedEnding = (started: Deferred.Deferred<void>, gate: Deferred.Deferred<void>) =>
  Layer.effect(
    RedisStreams,
    Effect.map(RedisStreams, (inner) => ({
      ...inner,
      xaddAfter: (key, after, entries) =>
        entries.some((entry) =>
            entry.fields.some(([name, value]) => name === "payloadType" && value === "response_error")
          )
          ? Effect.andThen(
            Effect.andThen(Deferred.succeed(started, undefined), Deferred.await(gate)),
            inner.xaddAfter(key, after, entries)
          )
          : inner.xaddAfter(key, after, entries)
    }))
  )

/**
 * `xaddAll` through an ioredis `pipeline()`: for clients whose writes cannot go
 * through the batch connection (a Sentinel-managed master that may move, and the
 * cluster layer's `pipeline` write path). One command object per entry, so it costs
 * Node more CPU per entry than the batch connection.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { ChainableCommander } from "ioredis"
import type { RedisError } from "../RedisError.js"
import type { RedisStreamsService } from "../RedisStreams.js"
import { fieldsToFlat } from "../StreamEntry.js"
import { toRedisError, unexpectedReply } from "./replies.js"

/**
 * A client that makes pipelines (ioredis's `Redis` and `Cluster`).
 *
 * @internal
 */
export interface Pipelines {
  readonly pipeline: () => ChainableCommander
}

/**
 * `xaddAll` over `client`'s pipelines: one result per entry; the effect fails only
 * when the pipeline could not be sent.
 *
 * @internal
 */
export const pipelineXaddAll = (client: Pipelines): RedisStreamsService["xaddAll"] => (key, entries, options) => {
  if (entries.length === 0) return Effect.succeed([])
  return Effect.tryPromise({
    try: () => {
      const pipeline = client.pipeline()
      for (const entry of entries) {
        const flat = fieldsToFlat(entry.fields)
        if (options?.maxLen === undefined) pipeline.call("XADD", key, entry.id, ...flat)
        else pipeline.call("XADD", key, "MAXLEN", "~", options.maxLen, entry.id, ...flat)
      }
      return pipeline.exec()
    },
    catch: (cause) => toRedisError("XADD", key, cause)
  }).pipe(Effect.map((settled) =>
    entries.map((_, i): Result.Result<string, RedisError> => {
      const [error, reply] = settled?.[i] ?? [new Error("no reply"), undefined]
      if (error !== null) return Result.fail(toRedisError("XADD", key, error))
      return typeof reply === "string" ? Result.succeed(reply) : Result.fail(unexpectedReply("XADD", key, reply))
    })
  ))
}

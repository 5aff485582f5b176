/**
 * Helpers of the tests that publish a turn while something fails: a lazy source that
 * acts before handing out a message, the ids a turn's entries must have, and what
 * Stream B holds.
 */
import type { StreamBMessage } from "@sluice/core"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as TurnEntry from "../../src/TurnEntry.js"
import * as TurnKeys from "../../src/TurnKeys.js"

/** `0-1` ... `0-<n>`: the ids of a turn's first `n` entries. */
export const entryIds = (n: number): Array<string> => Array.from({ length: n }, (_, i) => `0-${i + 1}`)

/** A lazy source that runs `at(i)` before it hands out message `i`. */
export const lazySource = (
  messages: ReadonlyArray<StreamBMessage.StreamBMessage>,
  at: (i: number) => Effect.Effect<void>
) =>
  Stream.unfold(0, (i) =>
    i >= messages.length
      ? Effect.succeed(undefined)
      : Effect.as(at(i), [messages[i]!, i + 1] as const))

/** A turn's Stream B entries, decoded, with their ids. */
export const storedUpserts = (prefix: string, turnId: string) =>
  RedisStreams.use((redis) => redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")).pipe(
    Effect.flatMap(
      Effect.forEach((entry) => Effect.map(TurnEntry.toStreamBMessage(entry), (message) => ({ id: entry.id, message })))
    )
  )

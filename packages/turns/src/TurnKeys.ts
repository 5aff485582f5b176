/**
 * The Redis keys of a turn. Both streams of a turn carry the turn id in braces, a
 * Redis Cluster hash tag: they hash to one slot, so a cluster spreads turns across
 * shards and keeps each turn on one. The `plain` key style writes the first design's keys
 * instead, `<prefix>:turn:<turnId>:<stream>`, for readers written to the seed
 * (docs/redis.md#key-styles).
 *
 * @since 0.3.0
 */
import type { RedisError } from "@sluice/redis/RedisError"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/**
 * The default key prefix.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultPrefix = "codex"

/**
 * Which stream of a turn: `events` (Stream A, the StreamEvents) or `upserts` (Stream
 * B, the StreamBMessages).
 *
 * @since 0.3.0
 * @category models
 */
export type TurnStream = "events" | "upserts"

/**
 * How a turn's stream keys are spelled: `tagged` (the default),
 * `<prefix>:turn:{<turnId>}:<stream>`, a Cluster hash tag keeping a turn's keys in one
 * slot; or `plain`, the first design's `<prefix>:turn:<turnId>:<stream>`, whose two streams of
 * one turn hash to different slots on a Cluster.
 *
 * @since 0.3.0
 * @category models
 */
export type KeyStyle = "tagged" | "plain"

/**
 * The default key style, `tagged`.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultKeyStyle: KeyStyle = "tagged"

/**
 * `<prefix>:turn:{<turnId>}:<stream>`, or `<prefix>:turn:<turnId>:<stream>` in the
 * `plain` style.
 *
 * @since 0.3.0
 * @category keys
 */
export const streamKey = (prefix: string, turnId: string, stream: TurnStream, style: KeyStyle = "tagged"): string =>
  style === "plain" ? `${prefix}:turn:${turnId}:${stream}` : `${prefix}:turn:{${turnId}}:${stream}`

/**
 * Stream A: `<prefix>:turn:{<turnId>}:events` (`plain`: without the braces).
 *
 * @since 0.3.0
 * @category keys
 */
export const eventsKey = (prefix: string, turnId: string, style: KeyStyle = "tagged"): string =>
  streamKey(prefix, turnId, "events", style)

/**
 * Stream B: `<prefix>:turn:{<turnId>}:upserts` (`plain`: without the braces).
 *
 * @since 0.3.0
 * @category keys
 */
export const upsertsKey = (prefix: string, turnId: string, style: KeyStyle = "tagged"): string =>
  streamKey(prefix, turnId, "upserts", style)

const streamKeyPattern = /^(.+):turn:(\{([^{}]+)\}|([^{}:]+)):(events|upserts)$/

/**
 * The same stream of the same turn in the other key style: the tagged key of a plain
 * one and the plain key of a tagged one; `undefined` for a key that is not a turn's
 * stream key.
 *
 * @since 0.3.0
 * @category keys
 */
export const twinKey = (key: string): string | undefined => {
  const match = streamKeyPattern.exec(key)
  if (match === null) return undefined
  const [, prefix = "", , tagged, plain = "", name] = match
  const stream: TurnStream = name === "events" ? "events" : "upserts"
  return tagged === undefined
    ? streamKey(prefix, plain, stream, "tagged")
    : streamKey(prefix, tagged, stream, "plain")
}

/**
 * Checks a stream key a read found empty against its twin in the other key style: when
 * `key` holds nothing while its twin holds entries (a reader of the first design's plain keys
 * under a Sluice writing tagged ones, or the other way round), logs a warning naming
 * both keys and gives the twin. A read of a turn not yet started finds both empty and
 * gives `None`, with no warning.
 *
 * @since 0.3.0
 * @category checks
 */
export const twinHolding = Effect.fn("TurnKeys.twinHolding")(
  function*(key: string): Effect.fn.Return<Option.Option<string>, RedisError, RedisStreams> {
    const twin = twinKey(key)
    if (twin === undefined) return Option.none()
    const redis = yield* RedisStreams
    if ((yield* redis.xlen(key)) > 0) return Option.none()
    const entries = yield* redis.xlen(twin)
    if (entries === 0) return Option.none()
    yield* Effect.logWarning(
      `${key} holds nothing, but ${twin} holds ${entries} entries: the writer spells the turn's keys in the other key style (docs/redis.md#key-styles)`
    )
    return Option.some(twin)
  }
)

/**
 * The index of recent turns, `<prefix>:turns`: a sorted set of turn ids scored by the
 * time (ms) their first entry was written, trimmed to the retention.
 *
 * @since 0.3.0
 * @category keys
 */
export const turnsKey = (prefix: string): string => `${prefix}:turns`

/**
 * The producer's liveness lease of a turn, `<prefix>:turn:{<turnId>}:lease`: a key
 * with a short expiry that the producer renews while the turn runs.
 *
 * @since 0.3.0
 * @category keys
 */
export const leaseKey = (prefix: string, turnId: string): string => `${prefix}:turn:{${turnId}}:lease`

/**
 * The mark that a turn's producer holds a lease, `<prefix>:turn:{<turnId>}:leased`:
 * it lives as long as the turn's streams, so that a lease that lapsed can be told
 * from a turn that never had one.
 *
 * @since 0.3.0
 * @category keys
 */
export const leasedKey = (prefix: string, turnId: string): string => `${prefix}:turn:{${turnId}}:leased`

/**
 * The control stream of all turns under a prefix, `<prefix>:control`: requests to the
 * processes running turns (a cancel, for one), which every producer process tails.
 *
 * @since 0.3.0
 * @category keys
 */
export const controlKey = (prefix: string): string => `${prefix}:control`

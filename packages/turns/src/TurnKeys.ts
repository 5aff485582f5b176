/**
 * The Redis keys of a turn. Both streams of a turn carry the turn id in braces, a
 * Redis Cluster hash tag: they hash to one slot, so a cluster spreads turns across
 * shards and keeps each turn on one.
 *
 * @since 0.3.0
 */

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
 * `<prefix>:turn:{<turnId>}:<stream>`.
 *
 * @since 0.3.0
 * @category keys
 */
export const streamKey = (prefix: string, turnId: string, stream: TurnStream): string =>
  `${prefix}:turn:{${turnId}}:${stream}`

/**
 * Stream A: `<prefix>:turn:{<turnId>}:events`.
 *
 * @since 0.3.0
 * @category keys
 */
export const eventsKey = (prefix: string, turnId: string): string => streamKey(prefix, turnId, "events")

/**
 * Stream B: `<prefix>:turn:{<turnId>}:upserts`.
 *
 * @since 0.3.0
 * @category keys
 */
export const upsertsKey = (prefix: string, turnId: string): string => streamKey(prefix, turnId, "upserts")

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

/**
 * `@sluice/redis`: Redis itself: the Redis Streams service (live on ioredis, on a
 * Cluster, and in memory), its entries and ids, config and TLS. A turn's rules on
 * Redis (keys, entries, publisher, lease, endings) are `@sluice/turns`; the Durable
 * Streams stores are `@sluice/durable-streams`.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as EntryId from "./EntryId.js"

/**
 * @since 0.1.0
 */
export * as RedisError from "./RedisError.js"

/**
 * @since 0.1.0
 */
export * as RedisStreams from "./RedisStreams.js"

/**
 * @since 0.1.0
 */
export * as RedisStreamsLive from "./RedisStreamsLive.js"

/**
 * @since 0.1.0
 */
export * as RedisStreamsMemory from "./RedisStreamsMemory.js"

/**
 * @since 0.1.0
 */
export * as StreamEntry from "./StreamEntry.js"

/**
 * Reads bounded by bytes as well as entries: page counts sized from the largest entry
 * seen.
 *
 * @since 0.1.0
 */
export * as ReadBudget from "./ReadBudget.js"

/**
 * `RedisStreams` on a Redis Cluster.
 *
 * @since 0.1.0
 */
export * as RedisStreamsCluster from "./RedisStreamsCluster.js"

/**
 * Which Redis the environment names (cluster, Sentinel, one server) and its layer.
 *
 * @since 0.1.0
 */
export * as RedisConfig from "./RedisConfig.js"

/**
 * TLS settings of Redis connections.
 *
 * @since 0.1.0
 */
export * as RedisTls from "./RedisTls.js"

/**
 * Waits for Redis streams to move, shared by stream and multiplexed over a bounded
 * number of blocking connections.
 *
 * @since 0.3.0
 */
export * as StreamWaits from "./StreamWaits.js"

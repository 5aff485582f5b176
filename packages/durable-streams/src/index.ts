/**
 * `@sluice/durable-streams`: the Durable Streams protocol. Streams that clients
 * create, append to, fork, read live and delete, with their subscriptions (webhook
 * and pull-wake); the stores of both on Redis and in memory; and the protocol's
 * operations and HTTP routes, which the Sluice server mounts under `/v1/stream/`.
 *
 * @since 0.3.0
 */

/**
 * The protocol under `/v1/stream/`: its context and its `HttpRouter` routes.
 *
 * @since 0.3.0
 */
export * as DurableStreams from "./DurableStreams.js"

/**
 * The protocol's operations (create, fork, append and close, head, read, delete) as
 * Effect functions over a store, returning typed outcomes.
 *
 * @since 0.3.0
 */
export * as DurableOperations from "./DurableOperations.js"

/**
 * The one refusal of the protocol, and its renderings (plain text, JSON).
 *
 * @since 0.3.0
 */
export * as DurableRefusal from "./DurableRefusal.js"

/**
 * Where a stream's reads go: the store, or an application's own read-only streams.
 *
 * @since 0.3.0
 */
export * as DurableSource from "./DurableSource.js"

/**
 * The storage of durable streams (metadata hash, data stream, change signal).
 *
 * @since 0.3.0
 */
export * as DurableStore from "./DurableStore.js"

/**
 * `DurableStore` on Redis (ioredis, Lua scripts).
 *
 * @since 0.3.0
 */
export * as DurableStoreLive from "./DurableStoreLive.js"

/**
 * `DurableStore` in process memory.
 *
 * @since 0.3.0
 */
export * as DurableStoreMemory from "./DurableStoreMemory.js"

/**
 * The storage of Durable Streams subscriptions (webhook and pull-wake), on Redis and in memory.
 *
 * @since 0.3.0
 */
export * as DurableSubscriptions from "./DurableSubscriptions.js"

/**
 * Response compression of bodies read whole: `Accept-Encoding`, gzip, entity tags.
 *
 * @since 0.3.0
 */
export * as HttpCompression from "./HttpCompression.js"

/**
 * A request body read once, under a byte limit.
 *
 * @since 0.3.0
 */
export * as RequestBody from "./RequestBody.js"

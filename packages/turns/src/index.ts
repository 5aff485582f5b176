/**
 * `@sluice/turns`: a turn's rules on Redis, over `@sluice/redis`'s `RedisStreams`: its
 * entries and keys, the retrying publisher of Stream A and Stream B and its writer, the
 * producer's lease, cancellation, the one ending rule (`producer_lost`) and the turn
 * metrics (docs/redis.md).
 *
 * @since 0.3.0
 */

/**
 * @since 0.3.0
 */
export * as PublishError from "./PublishError.js"

/**
 * @since 0.3.0
 */
export * as TurnEntry from "./TurnEntry.js"

/**
 * @since 0.3.0
 */
export * as TurnKeys from "./TurnKeys.js"

/**
 * @since 0.3.0
 */
export * as TurnPublisher from "./TurnPublisher.js"

/**
 * The producer's liveness lease of a turn.
 *
 * @since 0.3.0
 */
export * as TurnLease from "./TurnLease.js"

/**
 * One fiber renewing every lease of the process.
 *
 * @since 0.3.0
 */
export * as LeaseKeeper from "./LeaseKeeper.js"

/**
 * Ending a turn its producer can no longer end (`producer_lost`).
 *
 * @since 0.3.0
 */
export * as TurnEnding from "./TurnEnding.js"

/**
 * Requests to the processes that run turns (cancel).
 *
 * @since 0.3.0
 */
export * as TurnControl from "./TurnControl.js"

/**
 * The metrics of turns: started, active, ended, entries per stream, publish latency,
 * retries, lease expiries.
 *
 * @since 0.3.0
 */
export * as TurnMetrics from "./TurnMetrics.js"

/**
 * Conversations as records on Redis: a thread's turns (a tree of branches), its
 * history as provider messages and as UI messages, one running turn at a time, its
 * events (docs/threads.md).
 *
 * @since 0.3.0
 */
export * as Threads from "./Threads.js"

/**
 * A thread's log: its events, their Schemas, what they add up to.
 *
 * @since 0.3.0
 */
export * as ThreadLog from "./ThreadLog.js"

/**
 * The errors of a thread's operations.
 *
 * @since 0.3.0
 */
export * as ThreadError from "./ThreadError.js"

/**
 * The Redis keys of a thread.
 *
 * @since 0.3.0
 */
export * as ThreadKeys from "./ThreadKeys.js"

/**
 * `@sluice/server`: the HTTP API over Redis Streams. Each stream of a turn as
 * server-sent events that resume by `Last-Event-ID` and follow the turn live, the
 * snapshot of a turn, and the index of recent turns, behind bearer tokens.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as ApiError from "./ApiError.js"

/**
 * @since 0.1.0
 */
export * as TurnFeed from "./TurnFeed.js"

/**
 * @since 0.1.0
 */
export * as TurnServer from "./TurnServer.js"

/**
 * @since 0.1.0
 */
export * as TurnServerOptions from "./TurnServerOptions.js"

/**
 * @since 0.1.0
 */
export * as TurnSnapshot from "./TurnSnapshot.js"

/**
 * `@sluice/server`: the HTTP API over Redis Streams. Each stream of a turn as
 * server-sent events that resume by `Last-Event-ID` and follow the turn live (ending a
 * turn whose producer died with `producer_lost`), the snapshot of a turn, the index of
 * recent turns, and cancelling a running turn, behind bearer tokens and signed page
 * tokens.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as ApiError from "./ApiError.js"

/**
 * One live tail per stream in the process, shared by all its readers.
 *
 * @since 0.3.0
 */
export * as SharedTail from "./SharedTail.js"

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

/**
 * The viewer's signed page tokens (`read` and `control` scopes).
 *
 * @since 0.1.0
 */
export * as ViewerToken from "./ViewerToken.js"

/**
 * A turn's StreamEvents as the AI SDK's UI message stream.
 *
 * @since 0.1.0
 */
export * as UiMessageStream from "./UiMessageStream.js"

/**
 * The process's metrics as Prometheus text, as `GET /metrics` serves them.
 *
 * @since 0.1.0
 */
export * as Prometheus from "./Prometheus.js"

/**
 * Whether the server logs a line per request (off unless asked for).
 *
 * @since 0.3.0
 */
export * as AccessLog from "./AccessLog.js"

/**
 * What starts a turn for `POST /v1/turns`.
 *
 * @since 0.3.0
 */
export * as TurnStarter from "./TurnStarter.js"

/**
 * What starts the turns of threads for `POST /v1/threads/:threadId/turns`.
 *
 * @since 0.3.0
 */
export * as ThreadStarter from "./ThreadStarter.js"

/**
 * Tokens for one thread (`read` and `write` scopes), for browsers.
 *
 * @since 0.3.0
 */
export * as ThreadToken from "./ThreadToken.js"

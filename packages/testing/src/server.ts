/**
 * Serving the turn API in a test and talking to it: `serve` on loopback over the
 * `RedisStreams` in context with turns published into it, a client over real HTTP and
 * SSE, a turn starter whose turns the test drives, and recorded and hand-made turns for
 * the viewer and the browser client.
 *
 * @since 0.3.0
 */
export * from "./server/chatTurns.js"
export * from "./server/client.js"
export * from "./server/harness.js"
export * from "./server/quietLogs.js"
export * from "./server/slowTurns.js"
export * from "./server/viewerTurns.js"

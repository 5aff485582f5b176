/**
 * Turns for tests: Stream B messages and Stream A events with known content, a
 * `RedisStreams` whose turn endings wait on a gate, and turns as scripts of items.
 *
 * @since 0.3.0
 */
export * from "./turns/bigTurn.js"
export * from "./turns/gatedEnding.js"
export * from "./turns/itemScripts.js"
export * from "./turns/transcripts.js"

/**
 * Turns for tests: Stream B messages and Stream A events with known content, and a
 * `RedisStreams` whose turn endings wait on a gate.
 *
 * @since 0.3.0
 */
export * from "./turns/gatedEnding.js"
export * from "./turns/transcripts.js"

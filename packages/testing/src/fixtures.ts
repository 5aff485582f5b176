/**
 * The fixtures several packages' tests share: Stream A event builders and a stage
 * driver, random turns for property tests, and the table of `Accept-Encoding` headers.
 *
 * @since 0.3.0
 */
export * from "./fixtures/acceptEncodings.js"
export * from "./fixtures/events.js"
export * from "./fixtures/transcripts.js"
export * from "./fixtures/turnArbitrary.js"

/**
 * `@sluice/cli`: the `sluice` command, as a library for embedding and testing.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as Cli from "./Cli.js"

/**
 * @since 0.1.0
 */
export * as CliFailure from "./CliFailure.js"

/**
 * @since 0.1.0
 */
export * as Output from "./Output.js"

/**
 * @since 0.1.0
 */
export * as Logging from "./Logging.js"

/**
 * A failure the command reports to its user: a message for standard error and the
 * process exit code (1: the input was read but is invalid; 2: bad usage; 3: the
 * infrastructure, Redis, was lost mid-turn).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category errors
 */
export class CliFailure extends Schema.TaggedError<CliFailure>()("CliFailure", {
  exitCode: Schema.Literal(1, 2, 3),
  message: Schema.String
}) {}

/**
 * The input was read but is invalid (exit code 1).
 *
 * @since 0.1.0
 * @category constructors
 */
export const invalidInput = (message: string): CliFailure => new CliFailure({ exitCode: 1, message })

/**
 * The command was used wrongly (exit code 2).
 *
 * @since 0.1.0
 * @category constructors
 */
export const badUsage = (message: string): CliFailure => new CliFailure({ exitCode: 2, message })

/**
 * Redis was lost mid-turn, past the publisher's retries (exit code 3).
 *
 * @since 0.2.0
 * @category constructors
 */
export const infrastructureLost = (message: string): CliFailure => new CliFailure({ exitCode: 3, message })

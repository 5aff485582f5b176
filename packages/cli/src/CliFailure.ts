/**
 * A failure the command reports to its user: a message for standard error and the
 * process exit code (1: the input was read but is invalid; 2: bad usage).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category errors
 */
export class CliFailure extends Schema.TaggedError<CliFailure>()("CliFailure", {
  exitCode: Schema.Literal(1, 2),
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

/**
 * A failure the command reports to its user: a message for standard error and the
 * process exit code (1: the turn or its input failed; 2: bad usage or configuration;
 * 3: the infrastructure, Redis, was lost mid-turn; 130: the user stopped the turn with
 * a cancel request, as Ctrl-C stops it).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category errors
 */
export class CliFailure extends Schema.TaggedError<CliFailure>()("CliFailure", {
  exitCode: Schema.Literals([1, 2, 3, 130]),
  message: Schema.String
}) {}

/**
 * The turn or its input failed: a turn that ended in error, input read but invalid
 * (exit code 1).
 *
 * @since 0.1.0
 * @category constructors
 */
export const invalidInput = (message: string): CliFailure => new CliFailure({ exitCode: 1, message })

/**
 * The command was used or configured wrongly (exit code 2).
 *
 * @since 0.1.0
 * @category constructors
 */
export const badUsage = (message: string): CliFailure => new CliFailure({ exitCode: 2, message })

/**
 * Redis was lost mid-turn, past the publisher's retries (exit code 3).
 *
 * @since 0.1.0
 * @category constructors
 */
export const infrastructureLost = (message: string): CliFailure => new CliFailure({ exitCode: 3, message })

/**
 * The turn was cancelled at the user's request (a cancel request through the server
 * or the control stream; the turn ended `cancelled`): exit code 130, as for SIGINT.
 * Neither a success (the turn did not run to its end) nor a failure of the input.
 *
 * @since 0.3.0
 * @category constructors
 */
export const cancelled = (message: string): CliFailure => new CliFailure({ exitCode: 130, message })

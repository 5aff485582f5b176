/**
 * The `sluice` command and how its failures become exit codes (DESIGN.md's contract
 * 3: 0 success; 1 the input was read but is invalid; 2 bad usage; never a stack trace
 * for bad input).
 *
 * @since 0.1.0
 */
import { Command, ValidationError } from "@effect/cli"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { CliFailure } from "./CliFailure.js"
import * as Demo from "./commands/Demo.js"
import * as Normalize from "./commands/Normalize.js"
import * as Replay from "./commands/Replay.js"
import * as Serve from "./commands/Serve.js"
import * as Run from "./commands/Run.js"
import * as Output from "./Output.js"

/**
 * The root command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("sluice").pipe(
  Command.withDescription("LLM provider streams into typed events, turns and UI upserts"),
  Command.withSubcommands([Normalize.command, Replay.command, Run.command, Serve.command, Demo.command])
)

/**
 * Runs the command line (`argv` as `process.argv` has it). Reports a `CliFailure` on
 * standard error; usage errors were already reported by the parser.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (argv: ReadonlyArray<string>) =>
  Command.run(command, { name: "sluice", version: "0.1.0" })(argv).pipe(
    Effect.tapError((error) => (error instanceof CliFailure ? Output.errorLine(`sluice: ${error.message}`) : Effect.void))
  )

/**
 * The process exit code for the command's outcome.
 *
 * @since 0.1.0
 * @category running
 */
export const exitCode = <A, E>(exit: Exit.Exit<A, E>): number => {
  if (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) return 0
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) {
    const error: unknown = failure.value
    if (error instanceof CliFailure) return error.exitCode
    if (ValidationError.isValidationError(error)) return ValidationError.isHelpRequested(error) ? 0 : 2
  }
  return 1
}

/**
 * The exit code of a process stopped by a signal: 128 + its number (SIGINT 130,
 * SIGTERM 143), as shells report it.
 *
 * @since 0.2.0
 * @category running
 */
export const signalExitCode = (signal: "SIGINT" | "SIGTERM"): number => 128 + (signal === "SIGINT" ? 2 : 15)

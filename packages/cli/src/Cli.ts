/**
 * The `sluice` command and how its failures become exit codes: 0 success; 1 the turn
 * or its input failed; 2 bad usage or configuration; 3 the infrastructure was lost
 * mid-turn; never a stack trace for bad input.
 *
 * @since 0.1.0
 */
import { Command, ValidationError } from "@effect/cli"
import type { Usage } from "@effect/cli/Usage"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { badUsage, CliFailure } from "./CliFailure.js"
import * as Demo from "./commands/Demo.js"
import * as Normalize from "./commands/Normalize.js"
import * as Replay from "./commands/Replay.js"
import * as Run from "./commands/Run.js"
import * as Serve from "./commands/Serve.js"
import * as Argv from "./internal/argv.js"
import * as Logging from "./Logging.js"
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

const subcommands: ReadonlyMap<string, Usage> = new Map([
  ["normalize", Command.getUsage(Normalize.command)],
  ["replay", Command.getUsage(Replay.command)],
  ["run", Command.getUsage(Run.command)],
  ["serve", Command.getUsage(Serve.command)],
  ["demo", Command.getUsage(Demo.command)]
])

const globalHelp = [
  "GLOBAL OPTIONS",
  "",
  "--log-format pretty | json",
  "",
  "  how log lines are written to standard error: pretty for people, json for log shippers (one object a line)",
  "  (default pretty; env SLUICE_LOG_FORMAT)"
].join("\n")

// The log format: `--log-format` anywhere on the line, else SLUICE_LOG_FORMAT, else pretty.
const logFormatOf = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const { rest, value } = Argv.takeOption(args, "--log-format")
    const given = value ??
      Option.getOrUndefined(
        yield* Config.option(Config.string("SLUICE_LOG_FORMAT")).pipe(Effect.orElseSucceed(Option.none))
      )
    const format = given === undefined || given === "" ? "pretty" : given
    return Schema.is(Logging.LogFormat)(format)
      ? { format, rest }
      : yield* Effect.fail(badUsage(`--log-format must be pretty or json, got ${format}`))
  })

// An option the command does not have, named as such (the parser would blame the next argument).
const checkOptions = (args: ReadonlyArray<string>): Effect.Effect<void, CliFailure> => {
  const usage = subcommands.get(args[0] ?? "")
  const first = args.findIndex((arg) => !arg.startsWith("-"))
  const unknown = usage === undefined
    ? Argv.unknownOption(first === -1 ? args : args.slice(0, first), Argv.optionsOf(Command.getUsage(command)))
    : Argv.unknownOption(args.slice(1), Argv.optionsOf(usage))
  const name = usage === undefined ? "sluice" : `sluice ${args[0]}`
  return unknown === undefined
    ? Effect.void
    : Effect.fail(badUsage(`unknown option ${unknown} for ${name} (see ${name} --help)`))
}

/**
 * The parser's console: what it prints for `--help` and `--version` goes to standard
 * output, made plain when that is not a styled terminal; its error reports are dropped,
 * since `run` reports every failure itself in one line.
 */
const parserConsole = (base: Console.Console, output: Output.Service): Console.Console => {
  const print = (args: ReadonlyArray<unknown>) =>
    output.stdout(Argv.tidyHelp(args.map(String).join(" "), "sluice", globalHelp, output.isTTY))
  return { ...base, log: (...args) => print(args), info: (...args) => print(args), error: () => Effect.void }
}

/**
 * The one line a failure is reported as: a `CliFailure`'s message, a usage error the
 * parser found, each as `sluice: ...`; none for a help request.
 *
 * @since 0.2.0
 * @category running
 */
export const failureLine = (error: unknown): string | undefined => {
  if (error instanceof CliFailure) return `sluice: ${error.message.split("\n")[0]}`
  if (ValidationError.isValidationError(error) && !ValidationError.isHelpRequested(error)) {
    return `sluice: ${Argv.oneLine(error.error)}`
  }
  return undefined
}

/**
 * Runs the command line (`argv` as `process.argv` has it). Standard output gets the
 * command's output only; every log line goes to standard error in the format of
 * `--log-format` (or `SLUICE_LOG_FORMAT`); every failure is one `sluice: ...` line
 * on standard error.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (argv: ReadonlyArray<string>) =>
  Effect.flatMap(Output.Output, (output) =>
    Effect.gen(function*() {
      const { format, rest } = yield* logFormatOf(argv.slice(2))
      const cli = Effect.gen(function*() {
        yield* checkOptions(rest)
        yield* Command.run(command, { name: "sluice", version: "0.1.0" })([...argv.slice(0, 2), ...rest])
      })
      return yield* Logging.withLogger(format, output)(cli)
    }).pipe(
      Effect.tapError((error) => {
        const line = failureLine(error)
        return line === undefined ? Effect.void : output.stderr(line + "\n")
      }),
      (effect) => Console.consoleWith((base) => Console.withConsole(effect, parserConsole(base, output)))
    ))

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

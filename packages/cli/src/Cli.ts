/**
 * The `sluice` command and how its failures become exit codes: 0 success; 1 the turn
 * or its input failed; 2 bad usage or configuration; 3 the infrastructure was lost
 * mid-turn; 130 a turn cancelled by a cancel request (and 128 + the signal's number for
 * SIGINT and SIGTERM); never a stack trace for bad input.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as CliError from "effect/cli/CliError"
import * as CliOutput from "effect/cli/CliOutput"
import * as Command from "effect/cli/Command"
import * as Config from "effect/Config"
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
import * as Token from "./commands/Token.js"
import * as Argv from "./internal/argv.js"
import * as EnvVariables from "./internal/envVariables.js"
import { version } from "./internal/version.js"
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
  Command.withSubcommands([
    Normalize.command,
    Replay.command,
    Run.command,
    Serve.command,
    Demo.command,
    Token.command
  ])
)

// The configuration of each command, by the command's name.
const commandOptions: ReadonlyMap<string, Command.Command.Config> = new Map<string, Command.Command.Config>([
  ["normalize", Normalize.options],
  ["replay", Replay.options],
  ["run", Run.options],
  ["serve", Serve.options],
  ["token", Token.options],
  ["demo", Demo.options]
])

// The `--name`s of each command, with whether each takes a value, by the command's name.
const subcommands: ReadonlyMap<string, ReadonlyMap<string, boolean>> = new Map(
  [...commandOptions].map(([name, config]) => [name, Argv.optionsOf(config)])
)

// What each command's usage errors say of its flags (their variables, choices, kinds), by the command's name.
const flagInfo: ReadonlyMap<string, ReadonlyMap<string, Argv.FlagInfo>> = new Map(
  [...commandOptions].map(([name, config]) => [name, Argv.flagInfo(config, EnvVariables.variableOf)])
)

// The options read before the parser reads the line, as every help lists them.
const globalOptions: ReadonlyArray<Argv.GlobalOption> = [{
  usage: "--log-format pretty | json",
  text:
    "how log lines are written to standard error: pretty for people, json for log shippers (one object a line) (default pretty; env SLUICE_LOG_FORMAT)"
}]

// The log format: `--log-format` anywhere on the line, else SLUICE_LOG_FORMAT, else pretty.
const logFormatOf = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const { rest, value } = Argv.takeOption(args, "--log-format")
    const given = value ??
      Option.getOrUndefined(
        yield* Config.option(Config.String("SLUICE_LOG_FORMAT")).pipe(Effect.orElseSucceed(Option.none))
      )
    const format = given === undefined || given === "" ? "pretty" : given
    return Schema.is(Logging.LogFormat)(format)
      ? { format, rest }
      : yield* Effect.fail(badUsage(`--log-format must be pretty or json, got ${format}`))
  })

// An option the command does not have, named as such (the parser would blame the next argument).
const checkOptions = (args: ReadonlyArray<string>): Effect.Effect<void, CliFailure> => {
  const options = subcommands.get(args[0] ?? "")
  const first = args.findIndex((arg) => !arg.startsWith("-"))
  const unknown = options === undefined
    ? Argv.unknownOption(first === -1 ? args : args.slice(0, first), Argv.rootOptions)
    : Argv.unknownOption(args.slice(1), options)
  const name = options === undefined ? "sluice" : `sluice ${args[0]}`
  return unknown === undefined
    ? Effect.void
    : Effect.fail(badUsage(`unknown option ${unknown} for ${name} (see ${name} --help)`))
}

// The parser names the first required flag it misses; the command names every one: each
// flag of the command that the line does not give, and that neither the environment nor
// a default supplies.
const missingFlags = (config: Command.Command.Config, args: ReadonlyArray<string>) =>
  Effect.filter(Argv.flagsOf(config), (flag) => {
    const name = Argv.flagName(flag)
    if (name === undefined || args.some((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`))) {
      return Effect.succeed(false)
    }
    return flag.parse({ flags: {}, arguments: [] }).pipe(
      Effect.match({ onFailure: (error) => error._tag === "MissingOption", onSuccess: () => false })
    )
  }).pipe(Effect.map((flags) => flags.flatMap((flag) => Argv.flagName(flag) ?? [])))

// A usage error that names a missing flag, made to name every missing flag.
const withEveryMissingFlag = (args: ReadonlyArray<string>) => <E>(error: E) => {
  const config = commandOptions.get(args[0] ?? "")
  if (
    config === undefined || !CliError.isCliError(error) || error._tag !== "ShowHelp" ||
    !error.errors.some((reported) => reported._tag === "MissingOption")
  ) return Effect.fail(error)
  return Effect.flatMap(missingFlags(config, args.slice(1)), (missing) =>
    Effect.fail(
      missing.length === 0 ? error : new CliError.ShowHelp({
        commandPath: error.commandPath,
        errors: [
          ...missing.map((option) => new CliError.MissingOption({ option })),
          ...error.errors.filter((reported) => reported._tag !== "MissingOption")
        ]
      })
    ))
}

/**
 * What the parser shows: the help (`--help`) and the version (`--version`) on
 * standard output, the help made plain when that is not a styled terminal and wrapped
 * to 100 columns (or a narrower terminal's width); its report of a usage error is not
 * shown, since `run` reports every failure itself in one line.
 */
const presenter = (output: Output.Service): CliOutput.Presenter => ({
  present: (event) => {
    switch (event._tag) {
      case "Help":
        return output.stdout(
          Argv.formatHelp(event.helpDoc, globalOptions, {
            styled: output.isTTY,
            width: Argv.helpWidth(output.columns),
            environment: EnvVariables.commandVariables.get(event.helpDoc.commandPath?.[1] ?? "")
          })
        )
      case "Version":
        return output.stdout(`${event.version}\n`)
      case "InvalidInvocation":
        return Effect.void
    }
  }
})

/**
 * The one line a failure is reported as: a `CliFailure`'s message, a usage error the
 * parser found, each as `sluice: ...`; none for a help request. A missing option is
 * named with the `SLUICE_*` variable that can give it, a bad value with its option and
 * what the option accepts.
 *
 * @since 0.1.0
 * @category running
 */
export const failureLine = (error: unknown): string | undefined => {
  if (error instanceof CliFailure) return `sluice: ${error.message.split("\n")[0]}`
  if (CliError.isCliError(error)) {
    const errors = error._tag === "ShowHelp" ? error.errors : [error]
    const flags = flagInfo.get(error._tag === "ShowHelp" ? error.commandPath[1] ?? "" : "")
    return errors.length === 0 ? undefined : `sluice: ${Argv.oneLine(errors, [...subcommands.keys()], flags)}`
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
  Output.Output.use((output) =>
    Effect.gen(function*() {
      const { format, rest } = yield* logFormatOf(argv.slice(2))
      const cli = Effect.gen(function*() {
        yield* checkOptions(rest)
        yield* Command.runWith(command, { version })(rest).pipe(Effect.catch(withEveryMissingFlag(rest)))
      })
      return yield* Logging.withLogger(format, output)(cli)
    }).pipe(
      Effect.tapError((error) => {
        const line = failureLine(error)
        return line === undefined ? Effect.void : output.stderr(line + "\n")
      }),
      Effect.provideService(CliOutput.Presenter, presenter(output))
    )
  )

/**
 * The process exit code for the command's outcome.
 *
 * @since 0.1.0
 * @category running
 */
export const exitCode = <A, E>(exit: Exit.Exit<A, E>): number => {
  if (Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)) return 0
  const failure = Cause.findErrorOption(exit.cause)
  if (Option.isSome(failure)) {
    const error: unknown = failure.value
    if (error instanceof CliFailure) return error.exitCode
    if (CliError.isCliError(error)) return error._tag === "ShowHelp" && error.errors.length === 0 ? 0 : 2
  }
  return 1
}

/**
 * The exit code of a process stopped by a signal: 128 + its number (SIGINT 130,
 * SIGTERM 143), as shells report it.
 *
 * @since 0.1.0
 * @category running
 */
export const signalExitCode = (signal: "SIGINT" | "SIGTERM"): number => 128 + (signal === "SIGINT" ? 2 : 15)

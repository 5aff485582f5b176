/**
 * What the command line says before the parser reads it: the global `--log-format`,
 * options a command does not have (named as such), the parser's usage errors as one
 * line in Sluice's words, and the help text as `sluice --help` shows it.
 *
 * @internal
 */
import type * as CliError from "effect/cli/CliError"
import type * as Command from "effect/cli/Command"
import type * as HelpDoc from "effect/cli/HelpDoc"
import * as Param from "effect/cli/Param"
import * as Option from "effect/Option"

/** The options every command takes from the parser itself, with whether each takes a value. */
const builtIns: ReadonlyMap<string, boolean> = new Map([
  ["--help", false],
  ["-h", false],
  ["--version", false],
  ["-v", false],
  ["--log-level", true]
])

/**
 * The parser's built-in options that belong to the root command only (`sluice --wizard`,
 * `sluice --completions bash`): a subcommand neither lists nor takes them.
 */
const rootOnly: ReadonlyMap<string, boolean> = new Map([
  ["--wizard", false],
  ["--completions", true]
])

/** The `--name`s the root command takes, with whether each takes a value. */
export const rootOptions: ReadonlyMap<string, boolean> = new Map([...builtIns, ...rootOnly])

/** A parameter of a command's configuration: a flag or argument, or a group of them. */
type ConfigEntry = Command.Command.Config[string]

const isParam = (entry: unknown): entry is Param.Param<Param.ParamKind, unknown> => Param.isParam(entry)

/** The single flags and arguments a parameter is made of (through its `map`s, `optional`s, ...). */
const singlesOf = (param: Param.Param<Param.ParamKind, unknown>): Array<Param.Single<Param.ParamKind, unknown>> => {
  if (Param.isSingle(param)) return [param]
  return "param" in param && isParam(param.param) ? singlesOf(param.param) : []
}

/** The `--name`s of a command's flags (given as its configuration), with whether each takes a value. */
export const optionsOf = (
  config: Command.Command.Config,
  into: Map<string, boolean> = new Map(builtIns)
): Map<string, boolean> => {
  const visit = (entry: ConfigEntry): void => {
    if (isParam(entry)) {
      for (const single of singlesOf(entry)) {
        if (single.kind !== "flag") continue
        const takesValue = single.primitiveType._tag !== "Boolean"
        into.set(`--${single.name}`, takesValue)
        for (const alias of single.aliases) into.set(alias.length === 1 ? `-${alias}` : `--${alias}`, takesValue)
      }
    } else if (Array.isArray(entry)) {
      for (const item of entry) visit(item)
    } else {
      for (const item of Object.values(entry)) visit(item)
    }
  }
  for (const entry of Object.values(config)) visit(entry)
  return into
}

/** The flags of a command's configuration, each as it parses (through its `optional`, default, fallback). */
export const flagsOf = (config: Command.Command.Config): Array<Param.Param<Param.ParamKind, unknown>> => {
  const found: Array<Param.Param<Param.ParamKind, unknown>> = []
  const visit = (entry: ConfigEntry): void => {
    if (isParam(entry)) {
      if (entry.kind === "flag") found.push(entry)
    } else if (Array.isArray(entry)) {
      for (const item of entry) visit(item)
    } else {
      for (const item of Object.values(entry)) visit(item)
    }
  }
  for (const entry of Object.values(config)) visit(entry)
  return found
}

/** The `--name` a flag is given as. */
export const flagName = (flag: Param.Param<Param.ParamKind, unknown>): string | undefined => singlesOf(flag)[0]?.name

/** What a usage error says of a flag: the variable it falls back to, its choices, its kind of value. */
export interface FlagInfo {
  readonly variable: string | undefined
  readonly choices: ReadonlyArray<string> | undefined
  readonly integer: boolean
}

const isString = (value: unknown): value is string => typeof value === "string"

/** The keys of a choice primitive (Effect keeps them on the primitive, without a public getter). */
const choiceKeysOf = (primitive: object): ReadonlyArray<string> | undefined =>
  "choiceKeys" in primitive && Array.isArray(primitive.choiceKeys) && primitive.choiceKeys.every(isString)
    ? primitive.choiceKeys
    : undefined

/**
 * What the usage errors say of each flag of a command's configuration, by its name;
 * `variableOf` names the variable a flag falls back to.
 */
export const flagInfo = (
  config: Command.Command.Config,
  variableOf: (flag: object) => string | undefined
): ReadonlyMap<string, FlagInfo> =>
  new Map(
    flagsOf(config).flatMap((flag) => {
      const single = singlesOf(flag)[0]
      if (single === undefined) return []
      const info: FlagInfo = {
        variable: variableOf(flag),
        choices: choiceKeysOf(single.primitiveType),
        integer: single.primitiveType._tag === "Int"
      }
      return [[single.name, info] as const]
    })
  )

/**
 * The first option of `args` that `options` does not know, if any; values of options
 * that take one are skipped, and nothing after `--` is an option.
 */
export const unknownOption = (
  args: ReadonlyArray<string>,
  options: ReadonlyMap<string, boolean>
): string | undefined => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") return undefined
    if (!arg.startsWith("-") || arg === "-") continue
    const name = arg.split("=")[0]!
    const takesValue = options.get(name)
    if (takesValue === undefined) return name
    if (takesValue && !arg.includes("=")) i++
  }
  return undefined
}

/**
 * `--log-format X` / `--log-format=X` taken out of `args` (before any `--`): its value,
 * if given, and the other arguments.
 */
export const takeOption = (
  args: ReadonlyArray<string>,
  name: string
): { readonly value: string | undefined; readonly rest: ReadonlyArray<string> } => {
  const rest: Array<string> = []
  let value: string | undefined
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") {
      rest.push(...args.slice(i))
      break
    }
    if (arg === name) value = args[++i] ?? ""
    else if (arg.startsWith(`${name}=`)) value = arg.slice(name.length + 1)
    else rest.push(arg)
  }
  return { value, rest }
}

const ansi = /\x1b\[[0-9;]*m/g

/** Text without its ANSI styles. */
export const plain = (text: string): string => text.replace(ansi, "")

/** What a flag's value should have been, as a usage error says it. */
const expectation = (info: FlagInfo | undefined, expected: string): string =>
  info?.choices !== undefined
    ? `expected one of ${info.choices.join(", ")}`
    : info?.integer === true
    ? "expected an integer"
    : `expected ${expected.replace(/^Expected:?\s*/, "").replace(/ at \[[^\]]*\]$/, "")}`

/**
 * A flag's bad value, named with the flag, the value and what the flag accepts; a bad
 * value from the environment with the variable that gave it.
 */
const invalidFlag = (error: CliError.InvalidValue, info: FlagInfo | undefined): string => {
  if (error.value === "config") {
    // a value the environment gave: the parser keeps what the configuration said of it, not the value
    const said = error.expected.replace(/^SchemaError\(([\s\S]*)\)$/, "$1")
    return info?.variable === undefined
      ? `Invalid value for --${error.option} from the environment: ${said}`
      : `invalid ${info.variable} (for --${error.option}): ${expectation(info, said)}`
  }
  return error.value === ""
    ? `missing value for --${error.option}: ${expectation(info, error.expected)}`
    : `invalid --${error.option} ${JSON.stringify(error.value)}: ${expectation(info, error.expected)}`
}

/**
 * A usage error of the parser in Sluice's words, as one line (Effect 4's parser words
 * its errors differently): a missing option with the variable that can give it, a bad
 * value with the option, the value and what was expected.
 */
const errorText = (
  error: CliError.CliError,
  subcommands: ReadonlyArray<string>,
  flags: ReadonlyMap<string, FlagInfo>
): string => {
  switch (error._tag) {
    case "MissingOption": {
      const variable = flags.get(error.option)?.variable
      return `missing --${error.option}${variable === undefined ? "" : ` (or set ${variable})`}`
    }
    case "MissingArgument":
      return `missing argument ${error.argument}`
    case "UnknownSubcommand": {
      const parent = error.parent?.join(" ") ?? "sluice"
      return `unknown command ${JSON.stringify(error.subcommand)} for ${parent}: use one of ${
        subcommands.join(", ")
      } (see ${parent} --help)`
    }
    case "UnrecognizedOption":
      return `unknown option ${error.option}`
    case "UnexpectedArgument":
      return `unexpected argument${error.arguments.length === 1 ? "" : "s"} ${
        error.arguments.map((value) => JSON.stringify(value)).join(", ")
      }`
    case "InvalidValue":
      return error.kind === "flag" ? invalidFlag(error, flags.get(error.option)) : error.message
    default:
      return error.message
  }
}

/**
 * The parser's usage errors as one plain line, each error's paragraphs joined by "; "
 * and the errors too; `subcommands` are the root's, named when one is not known;
 * `flags` what to say of the command's flags.
 */
export const oneLine = (
  errors: ReadonlyArray<CliError.CliError>,
  subcommands: ReadonlyArray<string>,
  flags: ReadonlyMap<string, FlagInfo> = new Map()
): string =>
  errors
    .flatMap((error) => plain(errorText(error, subcommands, flags)).split(/\n\s*\n/))
    .map((paragraph) => paragraph.replace(/\s+/g, " ").trim())
    .filter((paragraph) => paragraph !== "")
    .join("; ")

/** What a flag's value looks like in the help: its choices, or its kind (a secret's never named as such). */
const placeholder = (type: string, description: string): { readonly value: string; readonly text: string } => {
  const choices = /\s*\(choices: ([^)]*)\)$/.exec(description)
  if (choices !== null) {
    return { value: choices[1]!.split(", ").join(" | "), text: description.slice(0, choices.index) }
  }
  return { value: type === "string" ? "text" : type === "redacted" ? "secret" : type, text: description }
}

/** The widest help, in columns: 100, or a narrower terminal's width (`columns`, none for a pipe). */
export const helpWidth = (columns: number | undefined): number =>
  columns === undefined || !Number.isFinite(columns) || columns < 1 ? 100 : Math.max(40, Math.min(100, columns))

/** Joins the words of a group that wrapping keeps on one line when the line has room. */
const nbsp = "\u00a0"

/**
 * `text` wrapped to `width` columns at its spaces: the first line starts with `first`,
 * the others with `rest`. A group of words joined by `nbsp` stays on one line when it
 * fits in one; a word longer than a line is cut.
 */
const wrap = (text: string, width: number, first = "", rest = first): Array<string> => {
  const lines: Array<string> = []
  let line = first
  let words = 0
  const newLine = () => {
    lines.push(line)
    line = rest
    words = 0
  }
  const place = (word: string): void => {
    if (line.length + (words > 0 ? 1 : 0) + word.length <= width) {
      line += (words > 0 ? " " : "") + word
      words++
    } else if (words > 0) {
      newLine()
      place(word)
    } else if (word.includes(nbsp)) {
      for (const part of word.split(nbsp)) place(part)
    } else {
      const room = Math.max(1, width - line.length)
      line += word.slice(0, room)
      newLine()
      if (word.length > room) place(word.slice(room))
    }
  }
  for (const word of text.split(" ")) if (word !== "") place(word)
  if (words > 0 || lines.length === 0) lines.push(line)
  return lines.map((wrapped) => wrapped.replaceAll(nbsp, " ").trimEnd())
}

/** A description whose closing note of its default and variable (`(default 300; env SLUICE_TIMEOUT)`) wraps as one. */
const keepNoteTogether = (text: string): string =>
  text.replace(/\((?:[^()]*; )?env [^()]*\)$/, (note) => note.replaceAll(" ", nbsp))

/** An option the command takes before the parser reads the line, as its help shows it. */
export interface GlobalOption {
  /** The option and its value, as `--log-format pretty | json`. */
  readonly usage: string
  /** What it does. */
  readonly text: string
}

/** The parser's built-in options that only the root's help lists. */
const rootOnlyFlags: ReadonlySet<string> = new Set([...rootOnly.keys()].map((name) => name.slice(2)))

/**
 * A command's help as `sluice --help` shows it: the usage line with the program's
 * name and every option, the arguments, the options (each with its description once),
 * the commands, the environment variables the command reads beyond its options'
 * (`environment`), then the global options (`globals` first); bold headings only when
 * `styled`, every line wrapped to `width` columns.
 */
export const formatHelp = (
  doc: HelpDoc.HelpDoc,
  globals: ReadonlyArray<GlobalOption>,
  options: {
    readonly styled: boolean
    readonly width: number
    readonly environment?: ReadonlyArray<GlobalOption> | undefined
  }
): string => {
  const { styled, width } = options
  const bold = (text: string) => (styled ? `\x1b[1m${text}\x1b[0m` : text)
  const cyan = (text: string) => (styled ? `\x1b[36m${text}\x1b[0m` : text)
  const path = doc.commandPath ?? []
  const flagLine = (flag: HelpDoc.FlagDoc) => {
    const { text, value } = placeholder(flag.type, Option.getOrElse(flag.description, () => ""))
    const names = [`--${flag.name}`, ...flag.aliases].join(", ")
    const usage = flag.type === "boolean" ? `--${flag.name}` : `--${flag.name} ${value}`
    return { usage, heading: flag.type === "boolean" ? names : `${names} ${value}`, text }
  }
  const flags = doc.flags.map(flagLine)
  const args = doc.args ?? []
  const commands = (doc.subcommands ?? []).flatMap((group) => group.commands)
  const sections: Array<string> = []
  const option = (heading: string, text: string) => {
    sections.push(...wrap(heading, width, "", "    "))
    if (text !== "") sections.push(...wrap(keepNoteTogether(text), width, "  "))
    sections.push("")
  }
  if (doc.description !== "") sections.push(...wrap(doc.description, width), "")
  sections.push(bold("USAGE"), "")
  const command = ["$", ...path, ...(commands.length > 0 ? ["<command>"] : [])].join(" ")
  const usage = [
    ...flags.map((flag) => `[${flag.usage}]`),
    ...args.map((arg) => {
      const name = `<${arg.name}>${arg.variadic ? "..." : ""}`
      return arg.required ? name : `[${name}]`
    })
  ].map((item) => item.replaceAll(" ", nbsp))
  const hanging = command.length + 1 <= width / 3 ? " ".repeat(command.length + 1) : "    "
  sections.push(...wrap([command.replaceAll(" ", nbsp), ...usage].join(" "), width, "", hanging).map(cyan), "")
  if (args.length > 0) {
    sections.push(bold("ARGUMENTS"), "")
    for (const arg of args) option(`<${arg.name}>`, Option.getOrElse(arg.description, () => ""))
  }
  if (flags.length > 0) {
    sections.push(bold("OPTIONS"), "")
    for (const flag of flags) option(flag.heading, flag.text)
  }
  if (commands.length > 0) {
    sections.push(bold("COMMANDS"), "")
    const column = Math.max(...commands.map((command) => command.name.length)) + 2
    for (const command of commands) {
      const [head = "", ...tail] = wrap(
        command.shortDescription ?? command.description,
        width,
        " ".repeat(column + 2)
      )
      sections.push(`  ${cyan(command.name.padEnd(column))}${head.trimStart()}`, ...tail)
    }
    sections.push("")
  }
  if (options.environment !== undefined && options.environment.length > 0) {
    sections.push(bold("ENVIRONMENT"), "")
    for (const variable of options.environment) option(variable.usage, variable.text)
  }
  sections.push(bold("GLOBAL OPTIONS"), "")
  for (const global of globals) option(global.usage, global.text)
  const builtIn = (doc.globalFlags ?? []).filter((flag) => path.length <= 1 || !rootOnlyFlags.has(flag.name))
  for (const flag of builtIn) {
    const { heading, text } = flagLine(flag)
    option(heading, text)
  }
  return `${sections.join("\n").trimEnd()}\n`
}

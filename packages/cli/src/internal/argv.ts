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
  ["--wizard", false],
  ["--completions", true],
  ["--log-level", true]
])

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

const quoted = (names: ReadonlyArray<string>): string => names.map((name) => `'${name}'`).join(", ")

/**
 * A usage error of the parser in Sluice's words, as one line (the wording the command
 * has always used: Effect 4's parser words its errors differently).
 */
const errorText = (error: CliError.CliError, subcommands: ReadonlyArray<string>): string => {
  switch (error._tag) {
    case "MissingOption":
      return `Expected to find option: '--${error.option}'`
    case "MissingArgument":
      return `Missing argument <${error.argument}>`
    case "UnknownSubcommand":
      return `Invalid subcommand for ${error.parent?.join(" ") ?? "sluice"} - use one of ${quoted(subcommands)}`
    case "UnrecognizedOption":
      return `Received unknown argument: '${error.option}'`
    case "InvalidValue":
      // a value the environment gave: what the configuration said of it
      return error.value === "config" && error.kind === "flag"
        ? `Invalid value for --${error.option} from the environment: ${
          error.expected.replace(/^SchemaError\(([\s\S]*)\)$/, "$1")
        }`
        : error.message
    default:
      return error.message
  }
}

/**
 * The parser's usage errors as one plain line, each error's paragraphs joined by "; "
 * and the errors too; `subcommands` are the root's, named when one is not known.
 */
export const oneLine = (errors: ReadonlyArray<CliError.CliError>, subcommands: ReadonlyArray<string>): string =>
  errors
    .flatMap((error) => plain(errorText(error, subcommands)).split(/\n\s*\n/))
    .map((paragraph) => paragraph.replace(/\s+/g, " ").trim())
    .filter((paragraph) => paragraph !== "")
    .join("; ")

/** What a flag's value looks like in the help: its choices, or its kind. */
const placeholder = (type: string, description: string): { readonly value: string; readonly text: string } => {
  const choices = /\s*\(choices: ([^)]*)\)$/.exec(description)
  if (choices !== null) {
    return { value: choices[1]!.split(", ").join(" | "), text: description.slice(0, choices.index) }
  }
  return { value: type === "string" ? "text" : type, text: description }
}

/**
 * A command's help as `sluice --help` shows it: the usage line with the program's
 * name and every option, the arguments, the options (each with its description once),
 * the commands, then `footer`; bold headings only when `styled`.
 */
export const formatHelp = (doc: HelpDoc.HelpDoc, footer: string, styled: boolean): string => {
  const bold = (text: string) => (styled ? `\x1b[1m${text}\x1b[0m` : text)
  const cyan = (text: string) => (styled ? `\x1b[36m${text}\x1b[0m` : text)
  const path = doc.commandPath ?? []
  const flags = doc.flags.map((flag) => {
    const { text, value } = placeholder(flag.type, Option.getOrElse(flag.description, () => ""))
    const names = [`--${flag.name}`, ...flag.aliases].join(", ")
    return { usage: flag.type === "boolean" ? `--${flag.name}` : `--${flag.name} ${value}`, names, value, flag, text }
  })
  const args = doc.args ?? []
  const commands = (doc.subcommands ?? []).flatMap((group) => group.commands)
  const usage = [
    "$",
    ...path,
    ...(commands.length > 0 ? ["<command>"] : []),
    ...flags.map((flag) => `[${flag.usage}]`),
    ...args.map((arg) => {
      const name = `<${arg.name}>${arg.variadic ? "..." : ""}`
      return arg.required ? name : `[${name}]`
    })
  ].join(" ")
  const sections: Array<string> = []
  if (doc.description !== "") sections.push(doc.description, "")
  sections.push(bold("USAGE"), "", cyan(usage), "")
  if (args.length > 0) {
    sections.push(bold("ARGUMENTS"), "")
    for (const arg of args) {
      sections.push(`<${arg.name}>`, `  ${Option.getOrElse(arg.description, () => "")}`.trimEnd(), "")
    }
  }
  if (flags.length > 0) {
    sections.push(bold("OPTIONS"), "")
    for (const flag of flags) {
      sections.push(flag.flag.type === "boolean" ? flag.names : `${flag.names} ${flag.value}`)
      if (flag.text !== "") sections.push(`  ${flag.text}`)
      sections.push("")
    }
  }
  if (commands.length > 0) {
    sections.push(bold("COMMANDS"), "")
    const width = Math.max(...commands.map((command) => command.name.length)) + 2
    for (const command of commands) {
      sections.push(`  ${cyan(command.name.padEnd(width))}${command.shortDescription ?? command.description}`)
    }
    sections.push("")
  }
  sections.push(styled ? footer.replace(/^GLOBAL OPTIONS$/m, bold("GLOBAL OPTIONS")) : footer)
  const globals = doc.globalFlags ?? []
  for (const flag of globals) {
    const { text, value } = placeholder(flag.type, Option.getOrElse(flag.description, () => ""))
    const names = [`--${flag.name}`, ...flag.aliases].join(", ")
    sections.push("", flag.type === "boolean" ? names : `${names} ${value}`, "", `  ${text}`)
  }
  return `${sections.join("\n").trimEnd()}\n`
}

/**
 * What the command line says before the parser reads it: the global `--log-format`,
 * options a command does not have (named as such), and the help text made plain.
 *
 * @internal
 */
import { HelpDoc } from "@effect/cli"
import type { Usage } from "@effect/cli/Usage"
import * as Option from "effect/Option"

/** The options every command takes from the parser itself, with whether each takes a value. */
const builtIns: ReadonlyMap<string, boolean> = new Map([
  ["--help", false],
  ["-h", false],
  ["--version", false],
  ["--wizard", false],
  ["--completions", true],
  ["--log-level", true]
])

/** The `--name`s of a command's usage, with whether each takes a value. */
export const optionsOf = (usage: Usage, into: Map<string, boolean> = new Map(builtIns)): Map<string, boolean> => {
  switch (usage._tag) {
    case "Named":
      for (const name of usage.names) if (name.startsWith("-")) into.set(name, Option.isSome(usage.acceptedValues))
      return into
    case "Optional":
    case "Repeated":
      return optionsOf(usage.usage, into)
    case "Concat":
    case "Alternation":
      return optionsOf(usage.right, optionsOf(usage.left, into))
    default:
      return into
  }
}

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

/** A parser's error as one plain line, its paragraphs joined by "; ". */
export const oneLine = (doc: HelpDoc.HelpDoc): string =>
  plain(HelpDoc.toAnsiText(doc))
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.replace(/\s+/g, " ").trim())
    .filter((paragraph) => paragraph !== "")
    .join("; ")

/** The parser's own paragraphs that say nothing the option's description does not. */
const boilerplate = [
  /^A user-defined piece of text( that is confidential)?\.$/,
  /^An integer\.$/,
  /^A floating point number\.$/,
  /^A true or false value\.$/,
  /^One of the following: .*$/,
  /^This setting is optional\..*$/,
  /^This option can be set from environment variables\.$/
]

/**
 * The parser's help text as `sluice --help` shows it: usage lines with the program's
 * name, the parser's boilerplate paragraphs gone, `footer` appended, styles only when
 * `styled`. Other text the parser prints (the version) stays as it is, but for styles.
 */
export const tidyHelp = (text: string, program: string, footer: string, styled: boolean): string => {
  // not a help text (the version, completions): as it is
  if (!/^USAGE$/m.test(plain(text))) return `${(styled ? text : plain(text)).trimEnd()}\n`
  const lines = text.split("\n")
  const kept: Array<string> = []
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const bare = plain(line).trim()
    if (boilerplate.some((pattern) => pattern.test(bare))) {
      if (lines[i + 1]?.trim() === "") i++
      continue
    }
    kept.push(line.startsWith("$ ") && !line.startsWith(`$ ${program}`) ? `$ ${program} ${line.slice(2)}` : line)
  }
  const tidy = `${kept.join("\n").trimEnd()}\n\n${footer}\n`
  return styled ? tidy : plain(tidy)
}

/**
 * The repository's Dockerfile read as the builder reads it, for tests that check what
 * the image holds and runs without a container engine: its stages, the runtime stage's
 * files put in place from what its `COPY` lines name, its `ENV`, `HEALTHCHECK`,
 * `ENTRYPOINT` and `CMD`. Only the subset of the syntax the Dockerfile uses is read
 * (exec forms, `KEY=value` pairs, no variables past `FROM`); anything else is refused,
 * with its line, rather than read wrongly.
 */
import * as Schema from "effect/Schema"
import { cp, mkdir, stat } from "node:fs/promises"
import { basename, dirname, join, posix } from "node:path"

/** One instruction, its continuation lines joined. */
export interface Instruction {
  readonly keyword: string
  readonly args: string
  readonly line: number
}

/** A build stage: its base image (global `ARG`s substituted), its name, its instructions. */
export interface Stage {
  readonly image: string
  readonly name: string | undefined
  readonly instructions: ReadonlyArray<Instruction>
}

/** A `COPY` of the runtime stage: its sources as the build saw them, its destination in the image. */
export interface Copy {
  readonly from: string | undefined
  readonly sources: ReadonlyArray<string>
  readonly destination: string
  readonly line: number
}

/** A `HEALTHCHECK`: its options (`--interval=30s` as `interval: "30s"`) and its command, in exec form. */
export interface Healthcheck {
  readonly options: Readonly<Record<string, string>>
  readonly command: ReadonlyArray<string>
}

const refuse = (line: number, what: string): never => {
  throw new Error(`Dockerfile line ${line}: ${what}`)
}

/** The instructions of a Dockerfile: comments dropped, `\` continuations joined. */
const instructions = (text: string): ReadonlyArray<Instruction> => {
  const found: Array<Instruction> = []
  let pending: { text: string; line: number } | undefined
  text.split("\n").forEach((raw, index) => {
    const trimmed = raw.trim()
    // a comment (or a parser directive) ends nothing: the builder skips it, even inside a continuation
    if (trimmed.startsWith("#") || (trimmed === "" && pending === undefined)) return
    const continued = trimmed.endsWith("\\")
    const part = continued ? trimmed.slice(0, -1).trim() : trimmed
    pending = pending === undefined ? { text: part, line: index + 1 } : { ...pending, text: `${pending.text} ${part}` }
    if (continued) return
    const match = /^([A-Za-z]+)\s+(.*)$/.exec(pending.text)
    if (match === null) refuse(pending.line, `cannot read ${JSON.stringify(pending.text)}`)
    else found.push({ keyword: match[1]!.toUpperCase(), args: match[2]!.trim(), line: pending.line })
    pending = undefined
  })
  if (pending !== undefined) refuse(pending.line, "a continuation runs past the end of the file")
  return found
}

/** The stages of a Dockerfile, in order. */
export const parse = (text: string): ReadonlyArray<Stage> => {
  const globalArgs = new Map<string, string>()
  const stages: Array<{ image: string; name: string | undefined; instructions: Array<Instruction> }> = []
  for (const instruction of instructions(text)) {
    if (instruction.keyword === "FROM") {
      const match = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.args)
      if (match === null) return refuse(instruction.line, `cannot read FROM ${instruction.args}`)
      const image = match[1]!.replace(/\$\{(\w+)\}/g, (_, name: string) => {
        const value = globalArgs.get(name)
        return value === undefined ? refuse(instruction.line, `ARG ${name} has no default before FROM`) : value
      })
      stages.push({ image, name: match[2], instructions: [] })
    } else if (stages.length === 0) {
      if (instruction.keyword !== "ARG") refuse(instruction.line, `${instruction.keyword} before the first FROM`)
      const [name, value] = instruction.args.split("=", 2)
      if (name !== undefined && value !== undefined) globalArgs.set(name, value)
    } else {
      stages.at(-1)!.instructions.push(instruction)
    }
  }
  return stages
}

/** The stage named `name`. */
export const stage = (stages: ReadonlyArray<Stage>, name: string): Stage => {
  const found = stages.find((candidate) => candidate.name === name)
  if (found === undefined) throw new Error(`the Dockerfile has no stage named ${name}`)
  return found
}

/** The instructions of a stage with this keyword. */
export const all = (of: Stage, keyword: string): ReadonlyArray<Instruction> =>
  of.instructions.filter((instruction) => instruction.keyword === keyword)

/** The last instruction of a stage with this keyword (the one in force), if any. */
export const last = (of: Stage, keyword: string): Instruction | undefined => all(of, keyword).at(-1)

const ExecForm = Schema.fromJsonString(Schema.Array(Schema.String))

/** The arguments of an exec form (`["a", "b"]`); the shell form is refused. */
export const execForm = (instruction: Instruction, args = instruction.args): ReadonlyArray<string> => {
  if (!args.startsWith("[")) refuse(instruction.line, `${instruction.keyword} is not in exec form`)
  return Schema.decodeUnknownSync(ExecForm)(args)
}

/** The working directory each instruction of a stage runs in. */
const workdirs = (of: Stage): ReadonlyMap<Instruction, string> => {
  const result = new Map<Instruction, string>()
  let current = "/"
  for (const instruction of of.instructions) {
    if (instruction.keyword === "WORKDIR") {
      if (instruction.args.includes("$")) refuse(instruction.line, "a variable in WORKDIR")
      current = posix.resolve(current, instruction.args)
    }
    result.set(instruction, current)
  }
  return result
}

/** The working directory a stage ends in. */
export const workdir = (of: Stage): string => {
  const last = of.instructions.at(-1)
  return last === undefined ? "/" : workdirs(of).get(last)!
}

/** The environment a stage sets (`ENV KEY=value ...`, values bare or double-quoted). */
export const env = (of: Stage): Readonly<Record<string, string>> => {
  const result: Record<string, string> = {}
  for (const instruction of all(of, "ENV")) {
    if (instruction.args.includes("$")) refuse(instruction.line, "a variable in ENV")
    const pairs = instruction.args.match(/\w+=(?:"[^"]*"|\S*)/g) ?? []
    if (pairs.join(" ") !== instruction.args.replace(/\s+/g, " ")) {
      refuse(instruction.line, "ENV is read as KEY=value pairs only")
    }
    for (const pair of pairs) {
      const [name, value] = [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]
      result[name] = value.startsWith("\"") ? value.slice(1, -1) : value
    }
  }
  return result
}

/** The `COPY` lines of a stage, destinations made absolute from the `WORKDIR` in force. */
export const copies = (of: Stage): ReadonlyArray<Copy> => {
  const dirs = workdirs(of)
  return all(of, "COPY").map((instruction) => {
    if (instruction.args.includes("$") || /[*?[]/.test(instruction.args) || instruction.args.startsWith("[")) {
      refuse(instruction.line, "COPY is read without variables, wildcards or the JSON form")
    }
    const words = instruction.args.split(/\s+/)
    const flags = words.filter((word) => word.startsWith("--"))
    const paths = words.filter((word) => !word.startsWith("--"))
    let from: string | undefined
    for (const flag of flags) {
      if (flag.startsWith("--from=")) from = flag.slice("--from=".length)
      else if (!/^--(chown|chmod)=/.test(flag)) refuse(instruction.line, `COPY ${flag} is not read`)
    }
    if (paths.length < 2) refuse(instruction.line, "COPY needs a source and a destination")
    const destination = paths.at(-1)!
    const absolute = posix.resolve(dirs.get(instruction)!, destination)
    return {
      from,
      sources: paths.slice(0, -1),
      // a trailing slash names a directory to copy into
      destination: destination.endsWith("/") ? `${absolute}/` : absolute,
      line: instruction.line
    }
  })
}

/** The `HEALTHCHECK` of a stage, if it has one. */
export const healthcheck = (of: Stage): Healthcheck | undefined => {
  const instruction = last(of, "HEALTHCHECK")
  if (instruction === undefined) return undefined
  const match = /^((?:--[\w-]+=\S+\s+)*)CMD\s+(.*)$/.exec(instruction.args)
  if (match === null) return refuse(instruction.line, "HEALTHCHECK is read as [--option=value ...] CMD [exec form]")
  const options: Record<string, string> = {}
  for (const option of match[1]!.trim().split(/\s+/).filter((word) => word !== "")) {
    const [name, value] = option.slice(2).split("=", 2)
    options[name!] = value!
  }
  return { options, command: execForm(instruction, match[2]!) }
}

/** A Dockerfile duration (`30s`, `1m30s`, `500ms`) in milliseconds. */
export const durationMs = (text: string): number => {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)]
  if (parts.length === 0 || parts.map((part) => part[0]).join("") !== text) {
    throw new Error(`not a Dockerfile duration: ${text}`)
  }
  return parts.reduce((total, part) => total + Number(part[1]) * units[part[2]!]!, 0)
}

/**
 * Puts the files a stage's `COPY` lines name under `root`, as the image's file system
 * would hold them (`/app/dist/bin.js` at `<root>/app/dist/bin.js`). `source(from, path)`
 * says where a source is on this machine: `from` is the stage (or `undefined`, the
 * build context) and `path` the path that stage or the context saw. As the builder
 * does, a directory's contents are copied into the destination, and a file into a
 * destination ending in `/` keeps its name. The image paths written, in order.
 */
export const install = async (
  of: Stage,
  root: string,
  source: (from: string | undefined, path: string) => string
): Promise<ReadonlyArray<string>> => {
  const placed: Array<string> = []
  for (const copy of copies(of)) {
    const intoDirectory = copy.destination.endsWith("/")
    if (copy.sources.length > 1 && !intoDirectory) {
      refuse(copy.line, "COPY of several sources needs a destination ending in /")
    }
    for (const path of copy.sources) {
      const from = source(copy.from, path)
      const directory = (await stat(from)).isDirectory()
      const destination = intoDirectory && !directory
        ? posix.join(copy.destination, basename(path))
        : copy.destination.replace(/\/$/, "")
      const target = join(root, destination)
      await mkdir(dirname(target), { recursive: true })
      // a file already there is an overlap of two COPY lines: refused rather than replaced
      await cp(from, target, { recursive: true, errorOnExist: true, force: false })
      placed.push(destination)
    }
  }
  return placed
}

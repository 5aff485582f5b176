import type { Json } from "@sluice/core"

/**
 * One streamed argument value of a Vertex AI function call (`partialArgs[i]`): a JSON
 * path (RFC 9535, e.g. `$.items[0].name`) and at most one value. A string value may
 * arrive in pieces (`willContinue`), each appended to the last.
 *
 * @internal
 */
export interface PartialArg {
  readonly jsonPath: string
  readonly stringValue?: string | undefined
  readonly numberValue?: number | undefined
  readonly boolValue?: boolean | undefined
  readonly nullValue?: Json.JsonValue | undefined
  readonly willContinue?: boolean | undefined
}

type Segment = string | number
type Container = Record<string, unknown> | Array<unknown>

const identifier = /^[A-Za-z_$][\w$-]*/

/**
 * Reads a JSON path into segments, `[]` at the end marking an array. Returns a
 * message when the path is not one Sluice can follow.
 *
 * @internal
 */
export const parsePath = (path: string): { readonly segments: Array<Segment>; readonly array: boolean } | string => {
  if (!path.startsWith("$")) return `JSON path ${JSON.stringify(path)} does not start with $`
  const segments: Array<Segment> = []
  let rest = path.slice(1)
  let array = false
  while (rest.length > 0) {
    if (rest === "[]") {
      array = true
      break
    }
    if (rest.startsWith(".")) {
      const name = identifier.exec(rest.slice(1))
      if (name === null) return `JSON path ${JSON.stringify(path)} has an empty or invalid name`
      segments.push(name[0])
      rest = rest.slice(1 + name[0].length)
      continue
    }
    const index = /^\[(\d+)\]/.exec(rest)
    if (index !== null) {
      segments.push(Number(index[1]))
      rest = rest.slice(index[0].length)
      continue
    }
    const quoted = /^\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\]/.exec(rest)
    if (quoted !== null) {
      segments.push((quoted[1] ?? quoted[2] ?? "").replace(/\\(.)/g, "$1"))
      rest = rest.slice(quoted[0].length)
      continue
    }
    return `JSON path ${JSON.stringify(path)} cannot be read at ${JSON.stringify(rest)}`
  }
  return { segments, array }
}

const isContainer = (value: unknown): value is Container => typeof value === "object" && value !== null

const newContainer = (next: Segment): Container => (typeof next === "number" ? [] : Object.create(null))

const child = (container: Container, segment: Segment): unknown =>
  Array.isArray(container)
    ? typeof segment === "number" ? container[segment] : undefined
    : typeof segment === "string" && Object.prototype.hasOwnProperty.call(container, segment)
    ? container[segment]
    : undefined

const assign = (container: Container, segment: Segment, value: unknown): string | undefined => {
  if (Array.isArray(container)) {
    if (typeof segment !== "number") return `a name inside an array`
    if (segment > container.length) return `array index ${segment} past the end (${container.length})`
    container[segment] = value
    return undefined
  }
  if (typeof segment !== "string") return `an array index inside an object`
  container[segment] = value
  return undefined
}

/**
 * Builds a function call's arguments from its streamed `partialArgs`. Work per piece
 * is proportional to the piece (string pieces are appended, never re-parsed); the
 * JSON text is produced once, by `toJson`.
 *
 * @internal
 */
export class ArgumentsBuilder {
  private readonly root: Record<string, unknown> = Object.create(null)

  /** Applies one piece; returns a message when it cannot be applied. */
  apply(arg: PartialArg): string | undefined {
    const parsed = parsePath(arg.jsonPath)
    if (typeof parsed === "string") return parsed
    const { array, segments } = parsed
    if (segments.length === 0) return array ? "the arguments root cannot be an array" : undefined
    let container: Container = this.root
    for (let i = 0; i < segments.length - 1; i++) {
      const segment = segments[i]!
      const existing = child(container, segment)
      if (existing === undefined) {
        const created = newContainer(segments[i + 1]!)
        const failure = assign(container, segment, created)
        if (failure !== undefined) return `${arg.jsonPath}: ${failure}`
        container = created
      } else if (isContainer(existing)) {
        container = existing
      } else {
        return `${arg.jsonPath}: a value already set is not an object or array`
      }
    }
    const last = segments[segments.length - 1]!
    const existing = child(container, last)
    let value: unknown
    if (arg.stringValue !== undefined) {
      value = typeof existing === "string"
        ? existing + arg.stringValue
        : arg.stringValue
    } else if (arg.numberValue !== undefined) value = arg.numberValue
    else if (arg.boolValue !== undefined) value = arg.boolValue
    else if (arg.nullValue !== undefined) value = null
    else if (existing !== undefined) return undefined
    else if (array) value = []
    else if (arg.willContinue === true) value = ""
    else value = Object.create(null)
    const failure = assign(container, last, value)
    return failure === undefined ? undefined : `${arg.jsonPath}: ${failure}`
  }

  /** The arguments as JSON text. */
  toJson(): string {
    return JSON.stringify(this.root)
  }
}

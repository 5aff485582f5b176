/**
 * JSON values as a schema: the shape of every opaque provider payload Sluice keeps
 * (raw usage objects, provider metadata, parsed tool arguments and outputs); and the
 * one rule for JSON that clients send: how deep it may nest
 * (docs/http.md#json-nesting), checked over the text in one pass, without recursion,
 * before anything walks the parsed value.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import { PredicateAnnotationId } from "./SchemaGuard.js"

/**
 * A JSON value, as `JSON.parse` returns it.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonValue = null | boolean | number | string | ReadonlyArray<JsonValue> | JsonObject

/**
 * A JSON object.
 *
 * @since 0.1.0
 * @category models
 */
export interface JsonObject {
  readonly [key: string]: JsonValue
}

const isJsonValueUnknown = (value: unknown): value is JsonValue => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true
    case "number":
      return Number.isFinite(value)
    case "object": {
      if (value === null) return true
      if (Array.isArray(value)) return value.every(isJsonValueUnknown)
      const proto = Object.getPrototypeOf(value)
      if (proto !== Object.prototype && proto !== null) return false
      const keys = Object.keys(value)
      for (let i = 0; i < keys.length; i++) {
        if (!isJsonValueUnknown((value as Record<string, unknown>)[keys[i]!])) return false
      }
      return true
    }
    default:
      return false
  }
}

// JSON text has no -0: the arbitraries generate values that survive JSON.stringify.
const withoutNegativeZero = (value: unknown): JsonValue => {
  if (typeof value === "number") return value === 0 ? 0 : value
  if (typeof value === "string" || typeof value === "boolean" || value === null) return value
  if (Array.isArray(value)) return value.map(withoutNegativeZero)
  if (typeof value === "object") return withoutNegativeZeroObject(value)
  throw new Error(`not a JSON value: ${typeof value}`)
}

// own properties defined, not assigned: a key such as `__proto__` stays a plain key
const withoutNegativeZeroObject = (value: object): JsonObject => {
  const out: Record<string, JsonValue> = {}
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(out, key, {
      value: withoutNegativeZero(item),
      enumerable: true,
      writable: true,
      configurable: true
    })
  }
  return out
}

/**
 * Any JSON value: null, a boolean, a finite number, a string, an array or a plain
 * object of JSON values. Validated in place and kept as it is (no copy, so keys such
 * as `__proto__` that `JSON.parse` produced survive).
 *
 * @since 0.1.0
 * @category schemas
 */
export const JsonValue: Schema.Codec<JsonValue> = Schema.declare(isJsonValueUnknown, {
  [PredicateAnnotationId]: isJsonValueUnknown,
  identifier: "JsonValue",
  description: "a JSON value",
  expected: "a JSON value",
  toCodecArbitrary: () =>
    Schema.link<JsonValue>()(Schema.Json, {
      decode: SchemaGetter.transform(withoutNegativeZero),
      encode: SchemaGetter.transform((value: JsonValue): Schema.Json => value)
    })
})

const isJsonObjectUnknown = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value) && isJsonValueUnknown(value)

/**
 * Any JSON object.
 *
 * @since 0.1.0
 * @category schemas
 */
export const JsonObject: Schema.Codec<JsonObject> = Schema.declare(isJsonObjectUnknown, {
  [PredicateAnnotationId]: isJsonObjectUnknown,
  identifier: "JsonObject",
  description: "a JSON object",
  expected: "a JSON object",
  toCodecArbitrary: () =>
    Schema.link<JsonObject>()(Schema.JsonObject, {
      decode: SchemaGetter.transform(withoutNegativeZeroObject),
      encode: SchemaGetter.transform((value: JsonObject): Schema.JsonObject => value)
    })
})

/**
 * Parses JSON text, returning `undefined` instead of throwing when the text is not
 * valid JSON.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseOrUndefined = (text: string): JsonValue | undefined => {
  try {
    return JSON.parse(text) as JsonValue
  } catch {
    return undefined
  }
}

/**
 * Parses JSON text, returning the original string when it is not valid JSON
 * (docs/upserts.md's `parseJsonSafe`).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseOrString = (text: string): JsonValue => {
  const parsed = parseOrUndefined(text)
  return parsed === undefined ? text : parsed
}

/**
 * Whether a JSON value is an object (not an array, not null).
 *
 * @since 0.1.0
 * @category guards
 */
export const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Parses tool-call argument text (docs/views.md#toolcallaccumulator): the JSON object it holds, `{}` for empty
 * text, or `{"_invalid_arguments": "<raw>"}` when the text is not a JSON object, so a
 * caller can answer with a clean tool error instead of calling the tool with bogus
 * arguments. Never throws.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseArguments = (raw: string): JsonObject => {
  if (raw.trim() === "") return {}
  const parsed = parseOrUndefined(raw)
  return isObject(parsed) ? parsed : { _invalid_arguments: raw }
}

/**
 * Why tool-call argument text could not be used: `raw` the text as it came, `error`
 * what was wrong with it (the JSON parser's message, or that it is JSON but not an
 * object). A call that carries it must not be run (docs/views.md#tool-call-arguments).
 *
 * @since 0.3.0
 * @category models
 */
export interface InvalidArguments {
  readonly raw: string
  readonly error: string
}

/**
 * Why argument text is malformed (`InvalidArguments`), or `undefined` when
 * `parseArguments` gives its object (empty text included).
 *
 * @since 0.3.0
 * @category parsing
 */
export const invalidArguments = (raw: string): InvalidArguments | undefined => {
  if (raw.trim() === "") return undefined
  try {
    const parsed: unknown = JSON.parse(raw)
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return undefined
    return {
      raw,
      error: `the arguments are JSON but not an object (${Array.isArray(parsed) ? "an array" : typeof parsed})`
    }
  } catch (error) {
    return { raw, error: error instanceof Error ? error.message : String(error) }
  }
}

/**
 * The deepest nesting of arrays and objects accepted from a client by default: 128
 * levels (`[]` is one level, `[[]]` two). `JSON.parse` itself reads deeper text, but
 * `JSON.stringify`, schema decoding and any other walk of the value recurse once a
 * level, and a few thousand levels overflow the stack (docs/http.md#json-nesting).
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultMaxDepth = 128

/**
 * JSON text nested deeper than its limit: how deep it nests (`depth`) and the limit.
 *
 * @since 0.3.0
 * @category errors
 */
export class JsonTooDeep extends Schema.TaggedError<JsonTooDeep>()("JsonTooDeep", {
  depth: Schema.Int,
  limit: Schema.Int,
  message: Schema.String
}) {}

/**
 * Text that is not JSON: `JSON.parse`'s reason.
 *
 * @since 0.3.0
 * @category errors
 */
export class JsonInvalid extends Schema.TaggedError<JsonInvalid>()("JsonInvalid", {
  message: Schema.String
}) {}

const quote = 34 // "
const backslash = 92 // \
const openArray = 91 // [
const openObject = 123 // {
const closeArray = 93 // ]
const closeObject = 125 // }

/**
 * How deep the arrays and objects of JSON text nest (0 for a scalar, 1 for `[]` or
 * `{}`), counted in one pass over the text without recursion: brackets inside strings
 * (escapes included) do not count. Linear in the text's length, and total on any text
 * (text that is not JSON gives the depth its brackets reach; `JSON.parse` refuses it).
 *
 * @since 0.3.0
 * @category parsing
 */
export const nestingDepth = (text: string): number => {
  let depth = 0
  let deepest = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === quote) {
      // to the closing quote: an escaped character is skipped with its backslash
      for (i++; i < text.length; i++) {
        const inside = text.charCodeAt(i)
        if (inside === backslash) i++
        else if (inside === quote) break
      }
    } else if (code === openArray || code === openObject) {
      depth++
      if (depth > deepest) deepest = depth
    } else if ((code === closeArray || code === closeObject) && depth > 0) {
      depth--
    }
  }
  return deepest
}

/**
 * The `JsonTooDeep` of text nested deeper than `limit` (by default
 * `defaultMaxDepth`), or none: the check to run on a client's JSON before it is
 * parsed (`nestingDepth`, one pass, no recursion).
 *
 * @since 0.3.0
 * @category parsing
 */
export const depthProblem = (text: string, limit: number = defaultMaxDepth): JsonTooDeep | undefined => {
  const depth = nestingDepth(text)
  return depth <= limit ? undefined : new JsonTooDeep({
    depth,
    limit,
    message: `the JSON nests ${depth} levels deep, more than the ${limit} accepted`
  })
}

/**
 * Parses a client's JSON text: `JsonTooDeep` when it nests deeper than `limit` (by
 * default `defaultMaxDepth`; checked first, in one pass without recursion), else
 * `JsonInvalid` when it is not JSON, else the value, which any recursive walk can then
 * take (`JSON.stringify`, schema decoding) without overflowing the stack.
 *
 * @since 0.3.0
 * @category parsing
 */
export const parseBounded = (
  text: string,
  limit: number = defaultMaxDepth
): Result.Result<JsonValue, JsonTooDeep | JsonInvalid> => {
  const tooDeep = depthProblem(text, limit)
  if (tooDeep !== undefined) return Result.fail(tooDeep)
  try {
    return Result.succeed(JSON.parse(text))
  } catch (error) {
    return Result.fail(new JsonInvalid({ message: error instanceof Error ? error.message : String(error) }))
  }
}

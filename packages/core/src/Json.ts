/**
 * JSON values as a schema: the shape of every opaque provider payload Sluice keeps
 * (raw usage objects, provider metadata, parsed tool arguments and outputs).
 *
 * @since 0.1.0
 */
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

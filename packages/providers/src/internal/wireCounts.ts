import type { Json } from "@sluice/core"
import * as Schema from "effect/Schema"

/**
 * A token count as providers send it: a number, `null`, or missing. `Usage.make`
 * turns whatever is not a non-negative finite number into zero.
 *
 * @internal
 */
export const Count = Schema.optionalKey(Schema.NullOr(Schema.Number))

/**
 * Merges a later usage object over an earlier one, field by field: usage that is
 * cumulative (Anthropic `message_delta`) or split across chunks keeps every count it
 * has seen, and a later `null` does not erase an earlier count.
 *
 * @internal
 */
export const mergeUsage = (earlier: Json.JsonObject | undefined, later: Json.JsonObject): Json.JsonObject => {
  if (earlier === undefined) return later
  const merged: Record<string, Json.JsonValue> = { ...earlier }
  for (const key of Object.keys(later)) {
    const value = later[key]!
    if (value !== null) merged[key] = value
  }
  return merged
}

/**
 * Reads a count from a usage object (`undefined` unless it is a number).
 *
 * @internal
 */
export const countOf = (usage: Json.JsonObject | undefined, ...path: ReadonlyArray<string>): number | undefined => {
  let value: Json.JsonValue | undefined = usage
  for (const key of path) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
    value = (value as Json.JsonObject)[key]
  }
  return typeof value === "number" ? value : undefined
}

import type { Sse } from "@sluice/core"
import * as Either from "effect/Either"
import type * as Schema from "effect/Schema"
import type { WireDecodeError } from "../WireDecodeError.js"
import { decodeData } from "./decodeData.js"

/**
 * `decodeData` with a fast path for a provider's most frequent chunk shapes (text and
 * argument deltas). `fast` checks exactly what the schema checks for those shapes and
 * returns the decoded value, or `undefined` to let the schema decide; the schema
 * path parses the data again, which only happens for the rarer chunks. Tests check
 * that both paths agree.
 *
 * @internal
 */
export const decodeDataWithFastPath = <A, I>(
  provider: string,
  schema: Schema.Schema<A, I>,
  fast: (json: unknown) => A | undefined
): ((event: Sse.SseEvent) => Either.Either<A, WireDecodeError>) => {
  const slow = decodeData(provider, schema)
  return (event) => {
    let json: unknown
    try {
      json = JSON.parse(event.data)
    } catch {
      return slow(event)
    }
    const quick = fast(json)
    return quick === undefined ? slow(event) : Either.right(quick)
  }
}

/**
 * A plain object's own field, or `undefined` when the value is not a plain object.
 *
 * @internal
 */
export const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined

/**
 * Whether a value is a non-negative integer (a block or choice index).
 *
 * @internal
 */
export const isIndex = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0

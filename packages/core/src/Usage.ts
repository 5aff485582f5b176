/**
 * Token usage of a turn, counted the same way whatever the provider.
 *
 * `input` excludes cache reads and writes, `output` includes reasoning, and `total`
 * is `input + cacheRead + cacheWrite + output`. The provider's own object is kept in
 * `raw`. Missing counts are zeros, never `NaN`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { JsonValue } from "./Json.js"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * The usage schema.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Usage = Schema.Struct({
  input: Count,
  output: Count,
  cacheRead: Count,
  cacheWrite: Count,
  reasoning: Count,
  total: Count,
  raw: Schema.optionalKey(JsonValue)
}).annotate({ identifier: "Usage" })

/**
 * @since 0.1.0
 * @category models
 */
export type Usage = typeof Usage.Type

/**
 * Usage with every count at zero.
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: Usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 0 }

const count = (n: number | null | undefined): number =>
  typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.trunc(n) : 0

/**
 * Builds a usage from counts that may be missing, negative or not numbers; those
 * become zero. `total` is always derived.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (counts: {
  readonly input?: number | null | undefined
  readonly output?: number | null | undefined
  readonly cacheRead?: number | null | undefined
  readonly cacheWrite?: number | null | undefined
  readonly reasoning?: number | null | undefined
  readonly raw?: JsonValue | undefined
}): Usage => {
  const input = count(counts.input)
  const output = count(counts.output)
  const cacheRead = count(counts.cacheRead)
  const cacheWrite = count(counts.cacheWrite)
  const usage = {
    input,
    output,
    cacheRead,
    cacheWrite,
    reasoning: count(counts.reasoning),
    total: input + cacheRead + cacheWrite + output
  }
  return counts.raw === undefined ? usage : { ...usage, raw: counts.raw }
}

/**
 * Token usage of a turn, counted the same way whatever the provider.
 *
 * `input` excludes cache reads and writes, `output` includes reasoning, and `total`
 * is `input + cacheRead + cacheWrite + output`. The provider's own object is kept in
 * `raw`. Missing counts are zeros, never `NaN`.
 *
 * `reasoning` is the part of `output` the model spent reasoning, never added to it.
 * `iterations` (since 0.2.0) breaks a response's usage down by server-side sampling
 * pass when the provider reports one (Anthropic `usage.iterations[]`: `message`,
 * `compaction`, `advisor_message`, `fallback_message`), each with its own `model` when
 * it ran on another model than the one requested. The top-level counts stay the
 * provider's top-level figures; what a response bills is the sum over its
 * iterations, each at its own model's price (docs/events.md#usage-and-finish-reasons).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { JsonValue } from "./Json.js"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * One server-side sampling pass of a response: its kind as the provider names it
 * (`message`, `compaction`, `advisor_message`, ...), the model it ran on when the
 * provider names one (absent: the requested model), and its counts, counted like
 * `Usage`'s (`input` excludes cache reads and writes).
 *
 * @since 0.3.0
 * @category schemas
 */
export const UsageIteration = Schema.Struct({
  type: Schema.String,
  model: Schema.optionalKey(Schema.String),
  input: Count,
  output: Count,
  cacheRead: Count,
  cacheWrite: Count
}).annotate({ identifier: "UsageIteration" })

/**
 * @since 0.3.0
 * @category models
 */
export type UsageIteration = typeof UsageIteration.Type

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
  iterations: Schema.optionalKey(Schema.Array(UsageIteration)),
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
 * become zero. `total` is always derived. `iterations` is kept when given and not
 * empty (its counts cleaned the same way).
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
  readonly iterations?: ReadonlyArray<UsageIteration> | undefined
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
  const iterations = counts.iterations === undefined || counts.iterations.length === 0
    ? undefined
    : counts.iterations.map((iteration): UsageIteration => ({
      type: iteration.type,
      ...(iteration.model === undefined ? {} : { model: iteration.model }),
      input: count(iteration.input),
      output: count(iteration.output),
      cacheRead: count(iteration.cacheRead),
      cacheWrite: count(iteration.cacheWrite)
    }))
  return {
    ...usage,
    ...(iterations === undefined ? {} : { iterations }),
    ...(counts.raw === undefined ? {} : { raw: counts.raw })
  }
}

/**
 * The first design's usage shape, `{prompt, completion, total?}`: what a producer written to
 * the seed puts in `response_done.usage`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const SeedUsage = Schema.Struct({
  prompt: Count,
  completion: Count,
  total: Schema.optionalKey(Count)
}).annotate({ identifier: "SeedUsage" })

/**
 * @since 0.3.0
 * @category models
 */
export type SeedUsage = typeof SeedUsage.Type

/**
 * Decodes the first design's usage shape into a `Usage`: `prompt` is `input`, `completion` is
 * `output`, cache and reasoning counts are 0, `total` is derived like every `Usage`'s
 * and the first design's object is kept in `raw`. Encodes a `Usage` back to the first design's shape.
 *
 * @since 0.3.0
 * @category schemas
 */
export const UsageFromSeed = SeedUsage.pipe(
  Schema.decodeTo(
    Usage,
    SchemaTransformation.transform({
      decode: (seed: SeedUsage): Usage =>
        make({
          input: seed.prompt,
          output: seed.completion,
          raw: { ...seed }
        }),
      encode: (usage: Usage): SeedUsage => ({ prompt: usage.input, completion: usage.output, total: usage.total })
    })
  )
)

/**
 * What `response_done.usage` accepts: Sluice's `Usage`, or the first design's
 * `{prompt, completion, total}` decoded into one (`UsageFromSeed`). Always encodes as a
 * `Usage`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const UsageOnTheWire = Schema.Union([Usage, UsageFromSeed]).annotate({ identifier: "Usage" })

/**
 * Options of the upsert stage (docs/upserts.md's table): the batch gradient and the batch
 * timeout, plus the turn and thread ids when the caller wants them fixed rather than
 * taken from `response_start`. Validated by a schema; every problem is named.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Gradient from "./Gradient.js"
import { decodeOptions, NonNegativeInt, PositiveInt } from "./internal/optionsDecoding.js"
import type { InvalidUpsertOptions } from "./UpsertErrors.js"

const Steps = Schema.Array(PositiveInt).pipe(
  Schema.refine(Arr.isReadonlyArrayNonEmpty, { message: "must have at least one step" })
)

const mustBeUuid = { message: "must be a UUID" }

const growthMessage = { message: "must be a finite number at or above 0" }

const Growth = Schema.Number.annotate(growthMessage).check(
  Schema.isFinite(growthMessage).abort(),
  Schema.isGreaterThanOrEqualTo(0, growthMessage)
)

const Id = Schema.String.annotate(mustBeUuid).check(Schema.isUUID(undefined, mustBeUuid))

/**
 * The stage options as a schema. Defaults: `batchGradient` docs/upserts.md's
 * `[10, 10, 20, 20, 50, 50, 50, 50, 100, 100, 200, 200, 500, 500, 1000, 1000, 2000]`,
 * `batchTimeoutMs` 1000, `batchGrowth` 0.25 (past the listed steps, an item's next
 * `updated` upsert waits until it grew by that share of what was last upserted; 0
 * keeps the last step alone, as docs/upserts.md's first design). `turnId` and `threadId`, when given, override the ids of
 * `response_start` in every emitted payload.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UpsertOptions = Schema.Struct({
  turnId: Schema.optionalKey(Id),
  threadId: Schema.optionalKey(Id),
  batchGradient: Steps.pipe(Schema.withDecodingDefaultTypeKey(Effect.succeed(Gradient.defaultSteps))),
  batchTimeoutMs: NonNegativeInt.pipe(Schema.withDecodingDefaultTypeKey(Effect.succeed(1000))),
  batchGrowth: Growth.pipe(Schema.withDecodingDefaultTypeKey(Effect.succeed(Gradient.defaultGrowth)))
}).annotate({ identifier: "UpsertOptions" })

/**
 * The options as a caller writes them: every field optional.
 *
 * @since 0.1.0
 * @category models
 */
export type UpsertOptionsInput = typeof UpsertOptions.Encoded

/**
 * Validated options, ready for the stage.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolvedOptions {
  readonly turnId: string | undefined
  readonly threadId: string | undefined
  readonly gradient: Gradient.Gradient
  readonly batchTimeoutMs: number
}

/**
 * The options with every default.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: ResolvedOptions = {
  turnId: undefined,
  threadId: undefined,
  gradient: Gradient.defaultGradient,
  batchTimeoutMs: 1000
}

/**
 * Validates options and applies the defaults. Fails with `InvalidUpsertOptions` naming
 * each bad field: an empty gradient, a step that is not a positive integer, a negative
 * or fractional timeout, an id that is not a UUID.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (input: UpsertOptionsInput | undefined): Result.Result<ResolvedOptions, InvalidUpsertOptions> =>
  Result.map(decodeOptions(UpsertOptions)(input ?? {}), (options) => ({
    turnId: options.turnId,
    threadId: options.threadId,
    gradient: Gradient.make(options.batchGradient, options.batchGrowth),
    batchTimeoutMs: options.batchTimeoutMs
  }))

/**
 * Retries with exponential backoff, capped (seed 002): attempt `n` (0-based) waits
 * `retryBaseMs * 2^n`, never more than `retryMaxMs`, and at most `retryAttempts` retries
 * follow the first try. The upsert facade retries `onEmit` with it; any publisher can
 * reuse the same `Schedule`.
 *
 * @since 0.1.0
 */
import type * as Either from "effect/Either"
import * as Duration from "effect/Duration"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { decodeOptions, NonNegativeInt } from "./internal/optionsDecoding.js"
import type { InvalidUpsertOptions } from "./UpsertErrors.js"

/**
 * The retry options of seed 002's table, with their defaults: 3 retries, 1000 ms base,
 * 10000 ms cap.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RetryOptions = Schema.Struct({
  retryAttempts: Schema.optionalWith(NonNegativeInt, { default: () => 3, exact: true }),
  retryBaseMs: Schema.optionalWith(NonNegativeInt, { default: () => 1000, exact: true }),
  retryMaxMs: Schema.optionalWith(NonNegativeInt, { default: () => 10000, exact: true })
}).annotations({ identifier: "RetryOptions" })

/**
 * Validated retry options, defaults applied.
 *
 * @since 0.1.0
 * @category models
 */
export type RetryPolicy = typeof RetryOptions.Type

/**
 * Retry options as a caller writes them: every field optional.
 *
 * @since 0.1.0
 * @category models
 */
export type RetryOptionsInput = typeof RetryOptions.Encoded

/**
 * The default policy.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultPolicy: RetryPolicy = { retryAttempts: 3, retryBaseMs: 1000, retryMaxMs: 10000 }

/**
 * Validates retry options, naming every bad field (a negative count, a fraction, a
 * value that is not a number).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (input: RetryOptionsInput | undefined) => Either.Either<RetryPolicy, InvalidUpsertOptions> = (input) =>
  decodeOptions(RetryOptions)(input ?? {})

/**
 * The delay before retry `attempt` (0-based): `baseMs * 2^attempt`, capped at `maxMs`
 * (seed 002's `calculateRetryDelay`). Never negative, never `NaN`.
 *
 * @since 0.1.0
 * @category delays
 */
export const calculateRetryDelay = (attempt: number, baseMs: number, maxMs: number): number => {
  const cap = Math.max(0, maxMs)
  if (!(baseMs > 0)) return 0
  const delay = baseMs * 2 ** Math.max(0, Math.floor(attempt))
  return Number.isFinite(delay) ? Math.min(delay, cap) : cap
}

/**
 * The policy as a `Schedule` for `Effect.retry`: `retryAttempts` recurrences, the
 * n-th after `calculateRetryDelay(n, retryBaseMs, retryMaxMs)`. Outputs the number of
 * retries so far. Its delays run on Effect's `Clock`, so `TestClock` drives them in
 * tests.
 *
 * @since 0.1.0
 * @category schedules
 */
export const schedule = (policy: RetryPolicy): Schedule.Schedule<number> =>
  Schedule.addDelay(Schedule.recurs(policy.retryAttempts), (retry) =>
    Duration.millis(calculateRetryDelay(retry, policy.retryBaseMs, policy.retryMaxMs)))

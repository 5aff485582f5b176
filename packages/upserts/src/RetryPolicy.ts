/**
 * Retries with exponential backoff, capped (docs/upserts.md): attempt `n` (0-based) waits
 * `retryBaseMs * 2^n`, never more than `retryMaxMs`, and at most `retryAttempts` retries
 * follow the first try. The upsert facade retries `onEmit` with it. The schedule and the
 * options schema are core's `Backoff` (one home for every retry of Sluice); this module
 * keeps their names here and adds the facade's validation.
 *
 * @since 0.1.0
 */
import { Backoff } from "@sluice/core"
import type * as Result from "effect/Result"
import { decodeOptions } from "./internal/optionsDecoding.js"
import type { InvalidUpsertOptions } from "./UpsertErrors.js"

/**
 * The retry options of docs/upserts.md's table, with their defaults: 3 retries, 1000 ms base,
 * 10000 ms cap (core's `Backoff.RetryOptions`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const RetryOptions = Backoff.RetryOptions

/**
 * Validated retry options, defaults applied.
 *
 * @since 0.1.0
 * @category models
 */
export type RetryPolicy = Backoff.RetryPolicy

/**
 * Retry options as a caller writes them: every field optional.
 *
 * @since 0.1.0
 * @category models
 */
export type RetryOptionsInput = Backoff.RetryOptionsInput

/**
 * The default policy.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultPolicy: RetryPolicy = Backoff.defaultPolicy

/**
 * Validates retry options, naming every bad field (a negative count, a fraction, a
 * value that is not a number).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (input: RetryOptionsInput | undefined) => Result.Result<RetryPolicy, InvalidUpsertOptions> = (
  input
) => decodeOptions(RetryOptions)(input ?? {})

/**
 * The delay before retry `attempt` (0-based): `baseMs * 2^attempt`, capped at `maxMs`
 * (docs/upserts.md's `calculateRetryDelay`; core's `Backoff.delayMs`). Never negative, never
 * `NaN`.
 *
 * @since 0.1.0
 * @category delays
 */
export const calculateRetryDelay: (attempt: number, baseMs: number, maxMs: number) => number = Backoff.delayMs

/**
 * The policy as a `Schedule` for `Effect.retry` (core's `Backoff.schedule`):
 * `retryAttempts` recurrences, the n-th after `calculateRetryDelay(n, retryBaseMs,
 * retryMaxMs)`. Outputs the number of retries so far. Its delays run on Effect's
 * `Clock`, so `TestClock` drives them in tests.
 *
 * @since 0.1.0
 * @category schedules
 */
export const schedule = Backoff.schedule

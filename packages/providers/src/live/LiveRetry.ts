/**
 * When the live client tries a request again (the `retryable` flag of docs/errors.md). Only
 * before any output of the turn has been emitted: a retryable failure (`rate_limit`,
 * `provider_overloaded`, `timeout`, a 5xx, a connection dropped or a stream cut off
 * before the first item) is retried after a capped exponential backoff, or after
 * exactly the delay the provider asked for (`retry-after-ms` / `Retry-After`). A
 * provider that asks for more than `maxRetryAfter` is not retried.
 *
 * @since 0.1.0
 */
import { Backoff, type StreamEvent } from "@sluice/core"
import * as Duration from "effect/Duration"
import * as Schedule from "effect/Schedule"

/**
 * The policy. Defaults: 4 retries, 500 ms doubling up to 8 s, a `Retry-After` of at
 * most 60 s.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly maxRetries?: number | undefined
  readonly initialDelay?: Duration.Input | undefined
  readonly maxDelay?: Duration.Input | undefined
  readonly maxRetryAfter?: Duration.Input | undefined
}

/**
 * The defaults of `Options`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults = {
  maxRetries: 4,
  initialDelay: Duration.millis(500),
  maxDelay: Duration.seconds(8),
  maxRetryAfter: Duration.seconds(60)
} as const

/**
 * Whether a failure may be retried under the policy: it is retryable, and any delay
 * the provider asked for is at most `maxRetryAfter`.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isRetryable = (error: StreamEvent.ErrorObject, options: Options = {}): boolean =>
  error.retryable === true &&
  (error.retry_after_ms === undefined ||
    error.retry_after_ms <=
      Duration.toMillis(Duration.fromInputUnsafe(options.maxRetryAfter ?? defaults.maxRetryAfter)))

/**
 * The schedule, fed the error of each failed attempt: it stops at the first error
 * that is not retryable or after `maxRetries`, and waits `min(initialDelay * 2^n,
 * maxDelay)` before attempt `n + 1` (core's `Backoff.schedule`), or the provider's
 * `retry_after_ms` when it gave one. Its output is the error it was fed.
 *
 * @since 0.1.0
 * @category schedules
 */
export const schedule = (
  options: Options = {}
): Schedule.Schedule<StreamEvent.ErrorObject, StreamEvent.ErrorObject> => {
  const backoff: Schedule.Schedule<number, StreamEvent.ErrorObject> = Backoff.schedule({
    retryAttempts: options.maxRetries ?? defaults.maxRetries,
    retryBaseMs: Duration.toMillis(Duration.fromInputUnsafe(options.initialDelay ?? defaults.initialDelay)),
    retryMaxMs: Duration.toMillis(Duration.fromInputUnsafe(options.maxDelay ?? defaults.maxDelay))
  })
  return backoff.pipe(
    Schedule.while(({ input }) => isRetryable(input, options)),
    Backoff.honouringRetryAfter((error: StreamEvent.ErrorObject) => error.retry_after_ms)
  )
}

/**
 * Capped exponential backoff, the one schedule every Sluice retry uses: attempt `n`
 * (0-based) waits `min(baseMs * 2^n, maxMs)`, at most `retryAttempts` retries follow
 * the first try, and a server that named its own delay (`Retry-After`) can be obeyed
 * instead. The upsert facade retries `onEmit` with it, the Redis publisher its writes,
 * the live provider client its requests, and the server a failed tail. Its delays run
 * on Effect's `Clock`, so `TestClock` drives them in tests.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"

const mustBe = { message: "must be a non-negative integer" }

const NonNegativeInt = Schema.Number.annotate(mustBe).check(
  Schema.isInt(mustBe),
  Schema.isGreaterThanOrEqualTo(0, mustBe)
)

/**
 * The retry options of docs/upserts.md's table, with their defaults: 3 retries, 1000 ms base,
 * 10000 ms cap. A bad field's message is "must be a non-negative integer".
 *
 * @since 0.1.0
 * @category schemas
 */
export const RetryOptions = Schema.Struct({
  retryAttempts: NonNegativeInt.pipe(Schema.withDecodingDefaultKey(Effect.succeed(3))),
  retryBaseMs: NonNegativeInt.pipe(Schema.withDecodingDefaultKey(Effect.succeed(1000))),
  retryMaxMs: NonNegativeInt.pipe(Schema.withDecodingDefaultKey(Effect.succeed(10000)))
}).annotate({ identifier: "RetryOptions" })

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
 * The default policy: 3 retries, 1000 ms base, 10000 ms cap.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultPolicy: RetryPolicy = { retryAttempts: 3, retryBaseMs: 1000, retryMaxMs: 10000 }

/**
 * The delay before retry `attempt` (0-based): `baseMs * 2^attempt`, capped at `maxMs`
 * (docs/upserts.md's `calculateRetryDelay`). Never negative, never `NaN`.
 *
 * @since 0.1.0
 * @category delays
 */
export const delayMs = (attempt: number, baseMs: number, maxMs: number): number => {
  const cap = Math.max(0, maxMs)
  if (!(baseMs > 0)) return 0
  const delay = baseMs * 2 ** Math.max(0, Math.floor(attempt))
  return Number.isFinite(delay) ? Math.min(delay, cap) : cap
}

/**
 * The policy as a `Schedule` for `Effect.retry`, `Stream.retry` or `Effect.repeat`:
 * `retryAttempts` recurrences, the n-th after `delayMs(n, retryBaseMs, retryMaxMs)`.
 * Outputs the number of retries so far; accepts any input.
 *
 * @since 0.1.0
 * @category schedules
 */
export const schedule = (policy: RetryPolicy): Schedule.Schedule<number> =>
  Schedule.recurs(policy.retryAttempts).pipe(
    Schedule.addDelay(({ output }) =>
      Effect.succeed(Duration.millis(delayMs(output, policy.retryBaseMs, policy.retryMaxMs)))
    )
  )

/**
 * Lets the input of each recurrence (the failure being retried) name its own delay:
 * when `retryAfterMs` gives a number for it, that many milliseconds replace the
 * backoff's delay (a server's `Retry-After`). The schedule then outputs its input.
 *
 * @since 0.1.0
 * @category schedules
 */
export const honouringRetryAfter =
  <In>(retryAfterMs: (input: In) => number | undefined) =>
  <Out, R>(self: Schedule.Schedule<Out, In, R>): Schedule.Schedule<In, In, R> =>
    self.pipe(
      Schedule.passthrough,
      Schedule.modifyDelay(({ duration, input }) => {
        const asked = retryAfterMs(input)
        return Effect.succeed(asked === undefined ? duration : Duration.millis(asked))
      })
    )

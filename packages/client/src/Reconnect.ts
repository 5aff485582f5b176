/**
 * When the client opens a dropped feed again: exponential backoff with full jitter.
 * Attempt `n` (from 0) waits a random time in `[0, min(baseMs * 2^n, maxMs)]`; the
 * upper bound is core's `Backoff.delayMs` rule (the client cannot import core at run
 * time: core is Node code, and the client runs in browsers; `test/Reconnect.test.ts`
 * holds the two to the same numbers).
 *
 * @since 0.1.0
 */

/**
 * How the feed is opened again: waits from `baseMs` doubling up to `maxMs`, at most
 * `maxAttempts` failures in a row (the count starts over once an event arrives).
 *
 * @since 0.1.0
 * @category models
 */
export interface ReconnectOptions {
  readonly baseMs?: number | undefined
  readonly maxMs?: number | undefined
  readonly maxAttempts?: number | undefined
}

/**
 * The defaults: from 500 ms up to 30 s, without end.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults = { baseMs: 500, maxMs: 30_000, maxAttempts: Infinity } as const

/**
 * The longest wait before attempt `attempt` (from 0): `min(baseMs * 2^attempt, maxMs)`,
 * 0 for a base that is not positive.
 *
 * @since 0.1.0
 * @category backoff
 */
export const capMs = (attempt: number, baseMs: number, maxMs: number): number => {
  const cap = Math.max(0, maxMs)
  if (!(baseMs > 0)) return 0
  const delay = baseMs * 2 ** Math.max(0, Math.floor(attempt))
  return Number.isFinite(delay) ? Math.min(delay, cap) : cap
}

/**
 * The wait before attempt `attempt`: `random()` (in `[0, 1)`) times `capMs`, rounded.
 *
 * @since 0.1.0
 * @category backoff
 */
export const delayMs = (attempt: number, options: ReconnectOptions = {}, random: () => number = Math.random): number =>
  Math.round(random() * capMs(attempt, options.baseMs ?? defaults.baseMs, options.maxMs ?? defaults.maxMs))

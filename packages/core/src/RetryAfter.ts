/**
 * A server's `Retry-After` (RFC 9110): how long it asked to be left alone, read the one
 * way every Sluice client reads it (a provider's answer, the turn API's `at_capacity`).
 *
 * @since 0.3.0
 */

/**
 * A `Retry-After` value in milliseconds: delay-seconds (a fraction rounded up, as some
 * providers send), or a date counted from `now` (never below 0); `undefined` for
 * anything else. A date is an HTTP date, which starts with its day's name (IMF-fixdate,
 * RFC 850, asctime), or an ISO 8601 date-time as some servers send instead; so a
 * negative number, a number with a unit or a word is not read as one.
 *
 * @since 0.3.0
 * @category parsing
 */
export const toMillis = (value: string, now: number): number | undefined => {
  const text = value.trim()
  if (/^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000)
  const date = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun|\d{4}-\d{2}-\d{2}T)/.test(text) ? Date.parse(text) : Number.NaN
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

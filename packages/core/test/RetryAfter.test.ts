/**
 * `RetryAfter.toMillis`: the one reading of a `Retry-After` value, for the providers'
 * answers and the turn API's alike.
 */
import { describe, expect, it } from "@effect/vitest"
import { RetryAfter } from "../src/index.js"

const now = Date.parse("2026-11-26T12:00:00Z")

describe("RetryAfter.toMillis", () => {
  it("reads delay-seconds, a fraction rounded up, and an HTTP or ISO date from now", () => {
    expect(RetryAfter.toMillis("3", now)).toBe(3_000)
    expect(RetryAfter.toMillis(" 1.5 ", now)).toBe(1_500)
    expect(RetryAfter.toMillis("0.0004", now)).toBe(1)
    expect(RetryAfter.toMillis("Thu, 26 Nov 2026 12:00:05 GMT", now)).toBe(5_000)
    expect(RetryAfter.toMillis("Thursday, 26-Nov-26 12:00:07 GMT", now)).toBe(7_000)
    expect(RetryAfter.toMillis("2026-11-26T12:00:09Z", now)).toBe(9_000)
  })

  it("a date already past is 0; anything else is no answer", () => {
    expect(RetryAfter.toMillis("Thu, 26 Nov 2026 11:00:00 GMT", now)).toBe(0)
    for (const value of ["", "soon", "-1", "5s", "1e3", "26 Nov 2026"]) {
      expect(RetryAfter.toMillis(value, now)).toBeUndefined()
    }
  })
})

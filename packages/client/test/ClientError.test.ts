/**
 * `ClientError` of an answer: the API's code and message from its body, `http_error`
 * without one, and the wait its `Retry-After` asks for (seconds or an HTTP date).
 */
import { describe, expect, it } from "vitest"
import { fromResponse, retryAfterMs } from "../src/ClientError.js"

describe("ClientError", () => {
  it("reads Retry-After as seconds or as an HTTP date, never below 0", () => {
    const now = Date.parse("Thu, 26 Nov 2026 12:00:00 GMT")
    expect(retryAfterMs("1", now)).toBe(1_000)
    expect(retryAfterMs(" 120 ", now)).toBe(120_000)
    expect(retryAfterMs("Thu, 26 Nov 2026 12:00:05 GMT", now)).toBe(5_000)
    expect(retryAfterMs("Thu, 26 Nov 2026 11:59:00 GMT", now)).toBe(0)
    expect(retryAfterMs("soon", now)).toBeUndefined()
    expect(retryAfterMs("-1", now)).toBeUndefined()
    expect(retryAfterMs(null, now)).toBeUndefined()
  })

  it("takes the code and message from the body, and the wait from the header", () => {
    const refused = fromResponse(503, { error: { code: "at_capacity", message: "full" } }, "1")
    expect([refused.code, refused.message, refused.status, refused.retryAfterMs, refused.retryable]).toStrictEqual([
      "at_capacity",
      "full",
      503,
      1_000,
      true
    ])
    const bare = fromResponse(502, "<html>", undefined)
    expect([bare.code, bare.status, bare.retryAfterMs]).toStrictEqual(["http_error", 502, undefined])
  })
})

import { describe, expect, it } from "@effect/vitest"
import type { StreamEvent } from "@sluice/core"
import { checkEffect } from "@sluice/testing/property"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as FastCheck from "fast-check"
import { LiveRetry } from "../src/index.js"

const failure = (retryAfterMs?: number): StreamEvent.ErrorObject => ({
  code: "429",
  message: "slow down",
  type: "rate_limit",
  retryable: true,
  ...(retryAfterMs === undefined ? {} : { retry_after_ms: retryAfterMs })
})

/** The delays the schedule asks for, fed these errors in turn, until it is done. */
const delaysOf = (errors: ReadonlyArray<StreamEvent.ErrorObject>, options?: LiveRetry.Options) =>
  Effect.gen(function*() {
    const step = yield* Schedule.toStep(LiveRetry.schedule(options))
    let now = 0
    const delays: Array<number> = []
    for (const error of errors) {
      const decision = yield* Effect.result(step(now, error))
      if (Result.isFailure(decision)) break
      const delay = Duration.toMillis(decision.success[1])
      delays.push(delay)
      now += delay
    }
    return delays
  })

describe("LiveRetry", () => {
  it.effect("waits retry_after_ms when given, else min(initial * 2^n, max), for at most maxRetries", () =>
    checkEffect(
      FastCheck.tuple(
        FastCheck.array(FastCheck.option(FastCheck.integer({ min: 0, max: 60_000 }), { nil: undefined }), {
          maxLength: 8
        }),
        FastCheck.integer({ min: 0, max: 6 })
      ),
      ([retryAfters, maxRetries]) =>
        Effect.gen(function*() {
          const delays = yield* delaysOf(retryAfters.map(failure), {
            maxRetries,
            initialDelay: "100 millis",
            maxDelay: "1 second"
          })
          const expected = retryAfters.slice(0, maxRetries).map((retryAfter, n) =>
            retryAfter ?? Math.min(100 * 2 ** n, 1000)
          )
          expect(delays).toStrictEqual(expected)
        }),
      { numRuns: 100 }
    ), 60_000)

  it.effect("stops at the first failure that is not retryable, or that asks to wait longer than maxRetryAfter", () =>
    Effect.gen(function*() {
      expect(yield* delaysOf([failure(), { code: "400", message: "bad", retryable: false }, failure()])).toStrictEqual([
        500
      ])
      expect(yield* delaysOf([failure(10), failure(120_000)])).toStrictEqual([10])
      expect(yield* delaysOf([failure(120_000)], { maxRetryAfter: "5 minutes" })).toStrictEqual([120_000])
    }))

  it("isRetryable reads the flag and the retry-after bound", () => {
    expect(LiveRetry.isRetryable(failure())).toBe(true)
    expect(LiveRetry.isRetryable({ code: "x", message: "x" })).toBe(false)
    expect(LiveRetry.isRetryable(failure(60_001))).toBe(false)
    expect(LiveRetry.isRetryable(failure(60_000))).toBe(true)
  })
})

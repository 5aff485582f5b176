import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
import * as FastCheck from "fast-check"
import { Backoff } from "../src/index.js"

// Runs `attempts + 1` failing tries under the schedule on the TestClock and gives the
// clock time of each try.
type Down = Error & { readonly retryAfterMs?: number | undefined }

const triesAt = (schedule: Schedule.Schedule<unknown, Down>, retryAfter?: ReadonlyArray<number | undefined>) =>
  Effect.gen(function*() {
    const at = yield* Ref.make<Array<number>>([])
    const fiber = yield* Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const seen = yield* Ref.updateAndGet(at, (all) => [...all, now])
      const error: Down = Object.assign(new Error("down"), { retryAfterMs: retryAfter?.[seen.length - 1] })
      return yield* Effect.fail(error)
    }).pipe(Effect.retry(schedule), Effect.forkChild)
    yield* TestClock.adjust(1_000_000)
    yield* Fiber.await(fiber)
    return yield* Ref.get(at)
  })

describe("Backoff", () => {
  it("delayMs doubles from the base and stops at the cap, never negative or NaN", () => {
    expect([0, 1, 2, 3, 4].map((n) => Backoff.delayMs(n, 1000, 10_000))).toStrictEqual([1000, 2000, 4000, 8000, 10_000])
    expect(Backoff.delayMs(10_000, 1000, 10_000)).toBe(10_000)
    expect(Backoff.delayMs(3, 0, 10_000)).toBe(0)
    expect(Backoff.delayMs(-2, 1000, 10_000)).toBe(1000)
  })

  it("delayMs is min(base * 2^n, max)", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.nat(40), FastCheck.nat(10_000), FastCheck.nat(1_000_000), (n, base, max) => {
        expect(Backoff.delayMs(n, base, max)).toBe(base === 0 ? 0 : Math.min(base * 2 ** n, max))
      }),
      { numRuns: 200 }
    )
  }, 30_000)

  it("decodes docs/upserts.md's options with their defaults, naming a bad field", () => {
    expect(Schema.decodeUnknownSync(Backoff.RetryOptions)({})).toStrictEqual(Backoff.defaultPolicy)
    const bad = Schema.decodeUnknownResult(Backoff.RetryOptions)({ retryBaseMs: 1.5 })
    expect(Result.isFailure(bad) && bad.failure.message).toContain("must be a non-negative integer")
  })

  it.effect("schedule retries retryAttempts times after the capped delays, on the Clock", () =>
    Effect.gen(function*() {
      const at = yield* triesAt(Backoff.schedule({ retryAttempts: 4, retryBaseMs: 100, retryMaxMs: 300 }))
      expect(at).toStrictEqual([0, 100, 300, 600, 900])
    }))

  it.effect("honouringRetryAfter waits what the failure asks for, else the backoff", () =>
    Effect.gen(function*() {
      const schedule = Backoff.schedule({ retryAttempts: 3, retryBaseMs: 100, retryMaxMs: 1000 }).pipe(
        Backoff.honouringRetryAfter((error: Down) => error.retryAfterMs)
      )
      const at = yield* triesAt(schedule, [undefined, 5000, undefined])
      expect(at).toStrictEqual([0, 100, 5100, 5500])
    }))
})

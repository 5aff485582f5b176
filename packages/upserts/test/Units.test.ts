import { describe, expect, it } from "@effect/vitest"
import { Ids, Json, StreamBMessage, Tokens } from "@sluice/core"
import * as F from "@sluice/testing/fixtures"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as FastCheck from "fast-check"
import * as Gradient from "../src/Gradient.js"
import * as Helpers from "../src/Helpers.js"
import * as ItemBuffer from "../src/ItemBuffer.js"
import * as RetryPolicy from "../src/RetryPolicy.js"
import * as StreamBMessages from "../src/StreamBMessages.js"

describe("Gradient", () => {
  const g = Gradient.defaultGradient

  it("has docs/upserts.md's cumulative thresholds, the last step repeating", () => {
    const first = Array.from({ length: 20 }, (_, i) => Gradient.thresholdAt(g, i))
    expect(first).toStrictEqual([
      10,
      20,
      40,
      60,
      110,
      160,
      210,
      260,
      360,
      460,
      660,
      860,
      1360,
      1860,
      2860,
      3860,
      5860,
      7860,
      9860,
      11860
    ])
  })

  it.effect("its Schedule outputs the same thresholds", () =>
    Effect.gen(function*() {
      const step = yield* Schedule.toStep(Gradient.schedule(g))
      const outputs: Array<number> = []
      for (let i = 0; i < 20; i++) outputs.push((yield* step(0, undefined))[0])
      expect(outputs).toStrictEqual(Array.from({ length: 20 }, (_, i) => Gradient.thresholdAt(g, i)))
    }))

  it("counts about 17 + N/2000 thresholds for N tokens under the default gradient", () => {
    expect(Gradient.crossedBy(g, 9)).toBe(0)
    expect(Gradient.crossedBy(g, 10)).toBe(1)
    expect(Gradient.crossedBy(g, 5860)).toBe(17)
    expect(Gradient.crossedBy(g, 25860)).toBe(27)
  })

  it("indexAfter lands on the first threshold above the token count", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(FastCheck.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 8 }),
        FastCheck.nat(5000),
        FastCheck.nat(40),
        (steps, tokens, from) => {
          const gradient = Gradient.make([steps[0]!, ...steps.slice(1)])
          const start = Math.min(from, Gradient.indexAfter(gradient, 0, tokens))
          const index = Gradient.indexAfter(gradient, start, tokens)
          expect(Gradient.thresholdAt(gradient, index)).toBeGreaterThan(tokens)
          if (index > 0) expect(Gradient.thresholdAt(gradient, index - 1)).toBeLessThanOrEqual(tokens)
        }
      ),
      { numRuns: 200 }
    )
  }, 60_000)
})

describe("RetryPolicy", () => {
  it("calculateRetryDelay doubles from the base and stops at the cap", () => {
    expect([0, 1, 2, 3, 4, 5].map((n) => RetryPolicy.calculateRetryDelay(n, 1000, 10000))).toStrictEqual([
      1000,
      2000,
      4000,
      8000,
      10000,
      10000
    ])
    expect(RetryPolicy.calculateRetryDelay(5000, 1000, 10000)).toBe(10000)
    expect(RetryPolicy.calculateRetryDelay(5000, 0, 10000)).toBe(0)
    expect(RetryPolicy.calculateRetryDelay(-1, 1000, 10000)).toBe(1000)
  })

  it.effect("its Schedule waits those delays, retryAttempts times, on the Clock", () =>
    Effect.gen(function*() {
      const attempts: Array<number> = []
      const fiber = yield* Effect.forkChild(
        Clock.currentTimeMillis.pipe(
          Effect.flatMap((now) => Effect.sync(() => attempts.push(now))),
          Effect.andThen(Effect.fail("no")),
          Effect.retry(RetryPolicy.schedule({ retryAttempts: 5, retryBaseMs: 100, retryMaxMs: 500 })),
          Effect.flip
        )
      )
      for (let i = 0; i < 30; i++) yield* TestClock.adjust(100)
      expect(yield* Fiber.join(fiber)).toBe("no")
      expect(attempts).toStrictEqual([0, 100, 300, 700, 1200, 1700])
    }))

  it("validates its options", () => {
    const defaults = RetryPolicy.make(undefined)
    expect(defaults._tag === "Success" && defaults.success).toStrictEqual(RetryPolicy.defaultPolicy)
    const invalid = RetryPolicy.make({ retryBaseMs: -1 })
    expect(invalid._tag === "Failure" && invalid.failure.message).toBe(
      "invalid options: retryBaseMs: must be a non-negative integer"
    )
  })
})

describe("ItemBuffer", () => {
  it("follows docs/upserts.md's API, immutably", () => {
    const empty = ItemBuffer.make("m", "message", { origin: "agent" })
    const filled = ItemBuffer.appendContent(empty, "Hello, world")
    expect(ItemBuffer.getContent(empty)).toBe("")
    expect(ItemBuffer.getContent(filled)).toBe("Hello, world")
    expect(ItemBuffer.getTokenCount(filled)).toBe(3)
    expect(ItemBuffer.getUnemittedTokenCount(filled)).toBe(3)
    const emitted = ItemBuffer.markEmitted(ItemBuffer.markCreatedEmitted(filled))
    expect(ItemBuffer.hasEmittedCreated(emitted)).toBe(true)
    expect(ItemBuffer.hasUnemittedContent(emitted)).toBe(false)
    expect(ItemBuffer.getUnemittedTokenCount(ItemBuffer.appendContent(emitted, "!!!!!"))).toBe(2)
    expect(ItemBuffer.getBatchIndex(ItemBuffer.advanceBatchIndex(emitted))).toBe(1)
    expect(ItemBuffer.isComplete(ItemBuffer.markComplete(emitted))).toBe(true)
    expect(ItemBuffer.isHeld(ItemBuffer.setHeld(emitted, true))).toBe(true)
    expect(ItemBuffer.isHeld(emitted)).toBe(false)
    expect(ItemBuffer.getState(emitted)).toStrictEqual({
      itemId: "m",
      itemType: "message",
      content: "Hello, world",
      tokenCount: 3,
      batchIndex: 0,
      emittedTokenCount: 3,
      isComplete: false,
      isHeld: false,
      hasEmittedCreated: true,
      origin: "agent"
    })
  })

  it("moves past every threshold a large delta crosses, and reports reaching one", () => {
    const buffer = ItemBuffer.appendContent(ItemBuffer.make("m", "reasoning"), "x".repeat(4 * 45))
    expect(ItemBuffer.reachedThreshold(buffer, Gradient.defaultGradient)).toBe(true)
    const advanced = ItemBuffer.advancePastReached(buffer, Gradient.defaultGradient)
    expect(ItemBuffer.getBatchIndex(advanced)).toBe(3) // 10, 20, 40 crossed; next is 60
    expect(ItemBuffer.reachedThreshold(advanced, Gradient.defaultGradient)).toBe(false)
    expect(ItemBuffer.toBufferInfo(advanced)).toStrictEqual({
      itemId: "m",
      itemType: "reasoning",
      tokenCount: 45,
      contentLength: 180,
      batchIndex: 3,
      isHeld: false,
      isComplete: false
    })
  })
})

describe("StreamBMessages", () => {
  it.effect("wraps payloads with a fresh id, the Clock's time, the turn id, the type and JSON text", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_700_000_000_000)
      const payloads = [F.turnStarted(), F.upsert("m", "message", "created", "Hi", { origin: "agent" })]
      const messages = yield* Stream.runCollect(StreamBMessages.wrap(Stream.fromIterable(payloads)))
      const decode = Schema.decodeUnknownSync(Schema.fromJsonString(StreamBMessage.UIPayload))
      expect(messages.map((m) => [m.timestamp, m.turnId, m.payloadType])).toStrictEqual([
        [1_700_000_000_000, F.turnId, "turn_event"],
        [1_700_000_000_000, F.turnId, "item_upsert"]
      ])
      expect(messages.map((m) => decode(m.payload))).toStrictEqual(payloads)
      expect(messages.every((m) => Ids.isUuid(m.eventId))).toBe(true)
      expect(messages[0]!.eventId).not.toBe(messages[1]!.eventId)
      const single = yield* StreamBMessages.fromPayload(payloads[0]!)
      expect(Schema.is(StreamBMessage.StreamBMessage)(single)).toBe(true)
    }))
})

describe("Helpers", () => {
  it("are the shared implementations under docs/upserts.md's names", () => {
    expect(Helpers.estimateTokenCount).toBe(Tokens.estimateTokenCount)
    expect(Helpers.parseJsonSafe).toBe(Json.parseOrString)
    expect(Helpers.generateEventId).toBe(Ids.generateEventId)
    expect(Helpers.calculateRetryDelay).toBe(RetryPolicy.calculateRetryDelay)
    expect(Helpers.estimateTokenCount("abcde")).toBe(2)
    expect(Helpers.parseJsonSafe("{\"a\":1}")).toStrictEqual({ a: 1 })
    expect(Helpers.parseJsonSafe("{oops")).toBe("{oops")
  })
})

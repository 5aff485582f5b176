/**
 * One huge item: past the gradient's listed steps, an item's next `updated` upsert waits
 * until it grew by `batchGrowth` of what was last upserted, so what all its upserts carry
 * together is bounded by its size (about `2 + 1/growth` times it, plus the listed
 * steps), not by its size times its deltas. `batchGrowth: 0` keeps the last step alone.
 */
import { describe, expect, it } from "@effect/vitest"
import type { StreamBMessage, UIUpsert } from "@sluice/core"
import * as F from "@sluice/testing/fixtures"
import { checkEffect } from "@sluice/testing/property"
import * as Effect from "effect/Effect"
import * as FastCheck from "fast-check"
import * as Gradient from "../src/Gradient.js"
import * as UpsertOptions from "../src/UpsertOptions.js"

const upsertsOf = (out: ReadonlyArray<StreamBMessage.UIPayload>) =>
  out.filter((p): p is UIUpsert.UIUpsert => p.type === "item_upsert")

// A message of `deltas` deltas of `size` characters each.
const bigMessage = (deltas: ReadonlyArray<number>) => {
  const parts = deltas.map((size, i) => String.fromCharCode(97 + (i % 26)).repeat(size))
  return {
    content: parts.join(""),
    events: [
      F.responseStart(),
      F.itemStart("msg_1", "message"),
      ...parts.map((part) => F.delta("msg_1", part)),
      F.messageDone("msg_1", parts.join("")),
      F.responseDone()
    ]
  }
}

// What the upserts of the listed steps can carry at most: each is emitted at most one
// delta past its threshold (4 characters a token).
const listedBound = (maxDelta: number) =>
  Gradient.defaultGradient.thresholds.reduce((sum, threshold) => sum + threshold * 4 + maxDelta, maxDelta)

const carried = (upserts: ReadonlyArray<UIUpsert.UIUpsert>) => upserts.reduce((sum, u) => sum + u.content.length, 0)

describe("batchGrowth: one huge item", () => {
  it.effect(
    "2,000 deltas of 1 KB: a few dozen upserts carrying a few times the item, not hundreds of megabytes",
    () =>
      Effect.gen(function*() {
        const { content, events } = bigMessage(Array.from({ length: 2_000 }, () => 1_024))
        const upserts = upsertsOf(yield* F.runStage(events))
        expect(upserts[upserts.length - 1]!.content).toBe(content)
        const bound = (2 + 1 / Gradient.defaultGrowth) * content.length + listedBound(1_024)
        expect(carried(upserts)).toBeLessThanOrEqual(bound)
        expect(upserts.length).toBeLessThan(60)
        // Without growth, the last step repeats: hundreds of upserts, each the whole item so far.
        const flat = upsertsOf(yield* F.runStage(events, { batchGrowth: 0 }))
        expect(flat.length).toBeGreaterThan(200)
        expect(carried(flat)).toBeGreaterThan(50 * content.length)
      }),
    60_000
  )

  it.effect(
    "what an item's upserts carry stays within (2 + 1/growth) times its size plus the listed steps",
    () =>
      checkEffect(
        FastCheck.record({
          deltas: FastCheck.array(FastCheck.integer({ min: 1, max: 3_000 }), { minLength: 1, maxLength: 600 }),
          growth: FastCheck.constantFrom(0.1, 0.25, 0.5, 1)
        }),
        ({ deltas, growth }) =>
          Effect.gen(function*() {
            const { content, events } = bigMessage(deltas)
            const upserts = upsertsOf(yield* F.runStage(events, { batchGrowth: growth }))
            expect(upserts[upserts.length - 1]!.content).toBe(content)
            const maxDelta = Math.max(...deltas)
            expect(carried(upserts)).toBeLessThanOrEqual((2 + 1 / growth) * content.length + listedBound(maxDelta))
          }),
        { numRuns: 60 }
      ),
    120_000
  )

  it("the listed steps are kept as they are: growth applies past them only", () => {
    const gradient = Gradient.make(Gradient.defaultSteps, 0.25)
    const listed = gradient.thresholds.length
    for (let i = 0; i < listed; i++) {
      expect(Gradient.nextThreshold(gradient, i, gradient.thresholds[i]! * 10)).toBe(gradient.thresholds[i])
    }
    const last = gradient.thresholds[listed - 1]!
    expect(Gradient.nextThreshold(gradient, listed, last)).toBe(last + 2_000)
    expect(Gradient.nextThreshold(gradient, listed, 40_000)).toBe(50_000)
    expect(Gradient.nextThreshold(Gradient.make(Gradient.defaultSteps, 0), listed, 40_000)).toBe(last + 2_000)
  })

  it("batchGrowth must be a finite number at or above 0", () => {
    const result = UpsertOptions.make({ batchGrowth: -1 })
    expect(result._tag).toBe("Failure")
    expect(JSON.stringify(result)).toContain("batchGrowth")
    expect(UpsertOptions.make({}).pipe((r) => r._tag === "Success" ? r.success.gradient.growth : NaN)).toBe(0.25)
  })
})

/**
 * Thought summaries kept apart from raw thoughts in the summary
 * (docs/views.md#the-turn-summary).
 */
import { describe, expect, it } from "@effect/vitest"
import { framedTurn, mixedThoughts } from "@sluice/testing/turns"
import * as Result from "effect/Result"
import { Summary, Turn } from "../src/index.js"

describe("thought summaries and raw thoughts", () => {
  it("the summary keeps them apart, reasoning holding both", () => {
    const summary = Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(mixedThoughts)))
    expect(summary.reasoning).toBe("Plan: add.1 + 1 is 2Thinking about sumshmm, yes")
    expect(summary.reasoningSummary).toBe("Plan: add.Thinking about sums")
    expect(summary.reasoningRaw).toBe("1 + 1 is 2hmm, yes")
    expect(summary.text).toBe("2")
  })

  it("a final content that replaces what streamed takes the final's kind", () => {
    const events = framedTurn([
      { type: "item_start", item_id: "r", item_type: "reasoning", reasoning_kind: "raw" },
      { type: "item_delta", item_id: "r", delta_content: "draft" },
      {
        type: "item_done",
        item_id: "r",
        final_item: { type: "reasoning", id: "r", content: "A summary.", reasoning_kind: "summary" }
      }
    ])
    const summary = Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(events)))
    expect([summary.reasoningSummary, summary.reasoningRaw]).toStrictEqual(["A summary.", ""])
  })

  it("an unfinished reasoning item counts what streamed, by kind", () => {
    const events = framedTurn([
      { type: "item_start", item_id: "r", item_type: "reasoning", initial_content: "S", reasoning_kind: "summary" },
      { type: "item_delta", item_id: "r", delta_content: "R", reasoning_kind: "raw" }
    ])
    const summary = Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(events)))
    expect([summary.reasoning, summary.reasoningSummary, summary.reasoningRaw]).toStrictEqual(["SR", "S", "R"])
  })
})

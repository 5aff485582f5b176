/**
 * Thought summaries kept apart from raw thoughts (docs/views.md#the-turn-summary,
 * docs/views.md#processedchunk), and an in-stream error's raw object given back as
 * `originalError`.
 */
import { describe, expect, it } from "@effect/vitest"
import type { StreamEvent } from "@sluice/core"
import { Usage } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { ProcessedChunk, Summary, Turn } from "../src/index.js"
import { event } from "./events.js"

const runId = "5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69"

const turn = (middle: ReadonlyArray<StreamEvent.Payload>): Array<StreamEvent.StreamEvent> => [
  event({
    type: "response_start",
    response_id: runId,
    turn_id: "0c8d3f6e-2b1a-4d5c-8e7f-9a0b1c2d3e4f",
    thread_id: "7e6d5c4b-3a29-4817-a6b5-c4d3e2f1a0b9",
    model_id: "m",
    provider_id: "test",
    created_at: 1
  }),
  ...middle.map(event),
  event({ type: "response_done", response_id: runId, status: "complete", usage: Usage.empty, finish_reason: "stop" })
]

// One Responses-like reasoning item holding a summary and raw reasoning text, then a
// Gemini-like thought that arrives whole, then reasoning of no stated kind.
const mixed = turn([
  { type: "item_start", item_id: "r", item_type: "reasoning", reasoning_kind: "summary" },
  { type: "item_delta", item_id: "r", delta_content: "Plan: add." },
  { type: "item_delta", item_id: "r", delta_content: "1 + 1 is 2", reasoning_kind: "raw" },
  { type: "item_done", item_id: "r", final_item: { type: "reasoning", id: "r", content: "Plan: add.1 + 1 is 2" } },
  {
    type: "item_done",
    item_id: "g",
    final_item: { type: "reasoning", id: "g", content: "Thinking about sums", reasoning_kind: "summary" }
  },
  { type: "item_start", item_id: "x", item_type: "reasoning" },
  { type: "item_delta", item_id: "x", delta_content: "hmm" },
  { type: "item_done", item_id: "x", final_item: { type: "reasoning", id: "x", content: "hmm, yes" } },
  { type: "item_done", item_id: "m", final_item: { type: "message", id: "m", content: "2", origin: "agent" } }
])

const chunksOf = (events: ReadonlyArray<StreamEvent.StreamEvent>) =>
  Effect.map(Stream.runCollect(ProcessedChunk.fromEvents(Stream.fromIterable(events))), (chunks) => [...chunks])

describe("thought summaries and raw thoughts", () => {
  it("the summary keeps them apart, reasoning holding both", () => {
    const summary = Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(mixed)))
    expect(summary.reasoning).toBe("Plan: add.1 + 1 is 2Thinking about sumshmm, yes")
    expect(summary.reasoningSummary).toBe("Plan: add.Thinking about sums")
    expect(summary.reasoningRaw).toBe("1 + 1 is 2hmm, yes")
    expect(summary.text).toBe("2")
  })

  it("a final content that replaces what streamed takes the final's kind", () => {
    const events = turn([
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
    const events = turn([
      { type: "item_start", item_id: "r", item_type: "reasoning", initial_content: "S", reasoning_kind: "summary" },
      { type: "item_delta", item_id: "r", delta_content: "R", reasoning_kind: "raw" }
    ])
    const summary = Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(events)))
    expect([summary.reasoning, summary.reasoningSummary, summary.reasoningRaw]).toStrictEqual(["SR", "S", "R"])
  })

  it.effect(
    "ProcessedChunk thoughts carry their kind, and thoughtSegments folds them apart",
    () =>
      Effect.gen(function*() {
        const chunks = yield* chunksOf(mixed)
        const thoughts = chunks.flatMap((chunk) => chunk.thoughts ?? [])
        expect(thoughts).toStrictEqual([
          { text: "Plan: add.", kind: "summary" },
          { text: "1 + 1 is 2", kind: "raw" },
          { text: "Thinking about sums", kind: "summary" },
          { text: "hmm" },
          { text: ", yes" }
        ])
        expect(ProcessedChunk.thoughtSegments(chunks)).toStrictEqual({
          thoughtSummarySegments: ["Plan: add.", "Thinking about sums"],
          thoughtRawSegments: ["1 + 1 is 2", "hmm", ", yes"]
        })
      }),
    10_000
  )

  it.effect(
    "an in-stream error's raw object is the error chunk's originalError; none without one",
    () =>
      Effect.gen(function*() {
        const raw = { type: "overloaded_error", message: "Overloaded", request_id: "req_1" }
        const events = turn([
          {
            type: "response_error",
            response_id: runId,
            error: {
              code: "overloaded_error",
              message: "Overloaded",
              type: "provider_overloaded",
              retryable: true,
              raw
            }
          },
          { type: "response_error", response_id: runId, error: { code: "stream_truncated", message: "cut" } }
        ])
        const errors = (yield* chunksOf(events)).flatMap((chunk) => (chunk.type === "error" ? [chunk.error] : []))
        expect(errors[0]).toMatchObject({ code: "overloaded_error", retryable: true, originalError: raw })
        expect(errors[1]?.originalError).toBeUndefined()
      }),
    10_000
  )
})

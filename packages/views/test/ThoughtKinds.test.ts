/**
 * Thought summaries kept apart from raw thoughts in `ProcessedChunk`
 * (docs/views.md#processedchunk), and an in-stream error's raw object given back as
 * `originalError`.
 */
import { describe, expect, it } from "@effect/vitest"
import type { StreamEvent } from "@sluice/core"
import { framedTurn, mixedThoughts } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { ProcessedChunk } from "../src/index.js"

const runId = "5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69"

const chunksOf = (events: ReadonlyArray<StreamEvent.StreamEvent>) =>
  Effect.map(Stream.runCollect(ProcessedChunk.fromEvents(Stream.fromIterable(events))), (chunks) => [...chunks])

describe("thought summaries and raw thoughts", () => {
  it.effect(
    "ProcessedChunk thoughts carry their kind, and thoughtSegments folds them apart",
    () =>
      Effect.gen(function*() {
        const chunks = yield* chunksOf(mixedThoughts)
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
        const events = framedTurn([
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

/**
 * Approval requests (docs/events.md#output-items, docs/views.md#the-turn-summary) give
 * nothing in the views that route calls to run: no `ProcessedChunk` call, no message
 * patch.
 */
import { describe, expect, it } from "@effect/vitest"
import { Turn } from "@sluice/accumulator"
import { approvalEvents as events } from "@sluice/testing/turns"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { ProcessedChunk, StreamEventPatches } from "../src/index.js"

describe("approval requests", () => {
  it("give no ProcessedChunk and no message patch", () => {
    let before = Turn.empty
    const chunks: Array<ProcessedChunk.ProcessedChunk> = []
    for (const e of events(true)) {
      const chunk = ProcessedChunk.fromEvent(before, e)
      if (Option.isSome(chunk)) chunks.push(chunk.value)
      before = Result.getOrThrow(Turn.step(before, e))
    }
    expect(chunks.flatMap((chunk) => chunk.type === "function_call" ? [chunk.functionCall.name] : [])).toStrictEqual([
      "lookup"
    ])
    const state = StreamEventPatches.initial()
    const patches = events(true).flatMap((e) => Result.getOrThrow(StreamEventPatches.map(state, e)))
    expect(patches.flatMap((patch) => (patch.type === "tool_start" ? [patch.name] : []))).toStrictEqual(["lookup"])
  }, 10_000)
})

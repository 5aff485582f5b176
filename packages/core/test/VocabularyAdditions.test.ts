/**
 * The vocabulary added in 0.2.0 (docs/events.md): approval requests, the `paused`
 * finish reason, usage iterations, reasoning kinds and an in-stream error's `raw`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { OutputItem, ProviderError, SchemaDecode, StreamEvent, TurnBuilder, Usage } from "../src/index.js"

const decode = SchemaDecode.decodeUnknownResult(StreamEvent.StreamEvent)

const builder = () =>
  TurnBuilder.make({
    providerId: "p",
    options: {
      runId: "5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69",
      turnId: "0c8d3f6e-2b1a-4d5c-8e7f-9a0b1c2d3e4f",
      threadId: "7e6d5c4b-3a29-4817-a6b5-c4d3e2f1a0b9"
    },
    now: () => 1
  })

describe("0.2.0 vocabulary", () => {
  it("approval requests, reasoning kinds, raw errors and paused decode to themselves", () => {
    const b = builder()
    const out: Array<StreamEvent.StreamEvent> = []
    b.open(out, "approval_request", { id: "a", name: "ask" })
    b.done(out, "a", { type: "approval_request", id: "a", provider_id: "mcpr_1", name: "ask", arguments: "{}" })
    b.open(out, "reasoning", { id: "r", initial_content: "S", reasoning_kind: "summary" })
    b.delta(out, "r", "R", "raw")
    b.delta(out, "r", "S2")
    b.done(out, "r", { type: "reasoning", id: "r", content: "SRS2" })
    b.error(
      out,
      new ProviderError.ProviderError({ type: "api_error", retryable: false, code: "x", message: "m" }),
      { type: "error", error: { code: "x" } }
    )
    b.finish(out, { finishReason: "paused" })
    for (const event of out) expect(Result.getOrThrow(decode(event))).toStrictEqual(event)
    const payloads = out.map((event) => event.payload)
    expect(payloads.filter((p) => p.type === "item_start")).toMatchObject([
      { item_type: "approval_request", name: "ask" },
      { item_type: "reasoning", initial_content: "S", reasoning_kind: "summary" }
    ])
    expect(payloads.filter((p) => p.type === "item_delta")).toStrictEqual([
      { type: "item_delta", item_id: "r", delta_content: "R", reasoning_kind: "raw" },
      { type: "item_delta", item_id: "r", delta_content: "S2" }
    ])
    expect(payloads.find((p) => p.type === "response_error")).toMatchObject({
      error: { code: "x", raw: { type: "error", error: { code: "x" } } }
    })
    expect(payloads.at(-1)).toMatchObject({ status: "error", finish_reason: "paused" })
  })

  it("an error without raw stays as before", () => {
    const error = new ProviderError.ProviderError({ type: "timeout", retryable: true, code: "t", message: "m" })
    expect(StreamEvent.errorObjectFromProviderError(error)).toStrictEqual({
      code: "t",
      message: "m",
      type: "timeout",
      retryable: true
    })
  })

  it("refuses an unknown reasoning kind and an approval request without its provider id", () => {
    const kinds = Schema.decodeUnknownResult(OutputItem.ReasoningKind)
    expect(Result.isFailure(kinds("thoughts"))).toBe(true)
    const items = Schema.decodeUnknownResult(OutputItem.OutputItem)
    expect(Result.isFailure(items({ type: "approval_request", id: "a", name: "ask", arguments: "{}" }))).toBe(true)
  })

  it("Usage.make keeps cleaned iterations and leaves out an empty list", () => {
    const usage = Usage.make({
      input: 5,
      output: 7,
      iterations: [{
        type: "advisor_message",
        model: "big",
        input: 3,
        output: -2,
        cacheRead: Number.NaN,
        cacheWrite: 1
      }]
    })
    expect(usage).toStrictEqual({
      input: 5,
      output: 7,
      cacheRead: 0,
      cacheWrite: 0,
      reasoning: 0,
      total: 12,
      iterations: [{ type: "advisor_message", model: "big", input: 3, output: 0, cacheRead: 0, cacheWrite: 1 }]
    })
    expect(Usage.make({ input: 1, iterations: [] }).iterations).toBeUndefined()
    expect(Result.isSuccess(Schema.decodeUnknownResult(Usage.Usage)(usage))).toBe(true)
  })
})

/**
 * The AI SDK's UI message stream has no `paused` finish reason: a paused turn (to be
 * continued, docs/events.md#usage-and-finish-reasons) finishes as `other`; an approval
 * request (docs/events.md#output-items) gives no tool chunk.
 */
import { describe, expect, it } from "@effect/vitest"
import { StreamEvent } from "@sluice/core"
import * as UiMessageStream from "../src/UiMessageStream.js"

const runId = "5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69"
let n = 0
const event = (payload: StreamEvent.Payload) =>
  StreamEvent.envelope({ runId }, payload, `00000000-0000-4000-8000-${String(n++).padStart(12, "0")}`, 0)

const chunksOf = (events: ReadonlyArray<StreamEvent.StreamEvent>) => {
  let state = UiMessageStream.initial
  const out: Array<UiMessageStream.UiMessageChunk> = []
  for (const e of events) {
    const [next, chunks] = UiMessageStream.step(state, e)
    state = next
    out.push(...chunks)
  }
  return out
}

const start = event({
  type: "response_start",
  response_id: runId,
  turn_id: "0c8d3f6e-2b1a-4d5c-8e7f-9a0b1c2d3e4f",
  thread_id: "7e6d5c4b-3a29-4817-a6b5-c4d3e2f1a0b9",
  model_id: "m",
  provider_id: "anthropic",
  created_at: 0
})

describe("UiMessageStream", () => {
  it("finishes a paused turn as other", () => {
    const chunks = chunksOf([
      start,
      event({ type: "response_done", response_id: runId, status: "complete", finish_reason: "paused" })
    ])
    expect(chunks.at(-1)).toStrictEqual({ type: "finish", finishReason: "other" })
  })

  it("gives no tool chunk for an approval request", () => {
    const chunks = chunksOf([
      start,
      event({ type: "item_start", item_id: "a", item_type: "approval_request", name: "ask" }),
      event({
        type: "item_done",
        item_id: "a",
        final_item: { type: "approval_request", id: "a", provider_id: "mcpr_1", name: "ask", arguments: "{}" }
      }),
      event({ type: "response_done", response_id: runId, status: "complete", finish_reason: "stop" })
    ])
    expect(chunks.map((chunk) => chunk.type)).toStrictEqual(["start", "start-step", "finish-step", "finish"])
  })
})

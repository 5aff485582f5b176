/**
 * Approval requests (docs/events.md#output-items, docs/views.md#the-turn-summary): a
 * question the caller answers, never a tool call. They are listed apart in the summary
 * and give nothing in the views that route calls to run.
 */
import { describe, expect, it } from "@effect/vitest"
import type { OutputItem } from "@sluice/core"
import { OutputItem as Items, SchemaDecode, StreamEvent, Usage } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { IContent, ProcessedChunk, StreamEventPatches, Summary, Turn } from "../src/index.js"
import { event } from "./events.js"

const runId = "5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69"

const approval: OutputItem.ApprovalRequestItem = {
  type: "approval_request",
  id: "mcpr_1",
  provider_id: "mcpr_682d498e3bd4819196a0ce1664f8e77b",
  server_label: "deepwiki",
  name: "ask_question",
  arguments: "{\"repoName\":\"modelcontextprotocol/modelcontextprotocol\",\"question\":\"What transports?\"}"
}

const call: OutputItem.FunctionCallItem = {
  type: "function_call",
  id: "fc_1",
  call_id: "call_1",
  name: "lookup",
  arguments: "{\"q\":1}"
}

const events = (withStart: boolean): Array<StreamEvent.StreamEvent> => [
  event({
    type: "response_start",
    response_id: runId,
    turn_id: "0c8d3f6e-2b1a-4d5c-8e7f-9a0b1c2d3e4f",
    thread_id: "7e6d5c4b-3a29-4817-a6b5-c4d3e2f1a0b9",
    model_id: "gpt-test",
    provider_id: "openai-responses",
    created_at: 1
  }),
  ...(withStart
    ? [event({ type: "item_start", item_id: approval.id, item_type: "approval_request", name: approval.name })]
    : []),
  event({ type: "item_done", item_id: approval.id, final_item: approval }),
  event({ type: "item_start", item_id: call.id, item_type: "function_call", name: call.name }),
  event({ type: "item_done", item_id: call.id, final_item: call }),
  event({
    type: "response_done",
    response_id: runId,
    status: "complete",
    usage: Usage.make({ input: 10, output: 5 }),
    finish_reason: "stop"
  })
]

describe("approval requests", () => {
  it("decode as an item_done event and are neither client nor provider tool calls", () => {
    const decode = SchemaDecode.decodeUnknownResult(StreamEvent.StreamEvent)
    for (const e of events(true)) expect(Result.getOrThrow(decode(e))).toStrictEqual(e)
    expect(Items.isApprovalRequest(approval)).toBe(true)
    expect(Items.isClientToolCall(approval)).toBe(false)
    expect(Items.isProviderToolCall(approval)).toBe(false)
    expect(Items.streamedContent(approval)).toBe(approval.arguments)
  })

  it("are listed in the summary's approvalRequests, never in toolCalls or providerToolCalls", () => {
    for (const withStart of [true, false]) {
      const summary = Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(events(withStart))))
      expect(summary.approvalRequests).toStrictEqual([
        {
          id: approval.provider_id,
          serverLabel: "deepwiki",
          name: "ask_question",
          arguments: { repoName: "modelcontextprotocol/modelcontextprotocol", question: "What transports?" }
        }
      ])
      expect(summary.toolCalls).toStrictEqual([{ id: "call_1", name: "lookup", arguments: { q: 1 } }])
      expect(summary.providerToolCalls).toStrictEqual([])
    }
  })

  it("keep bad argument text under the arguments rule and leave serverLabel out when absent", () => {
    const { server_label: _, ...bare } = approval
    const item: OutputItem.ApprovalRequestItem = { ...bare, arguments: "{\"a\":" }
    const all = events(true).map((e) =>
      e.payload.type === "item_done" && e.payload.item_id === approval.id
        ? event({ type: "item_done", item_id: approval.id, final_item: item })
        : e
    )
    expect(Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(all))).approvalRequests).toStrictEqual([
      { id: approval.provider_id, name: "ask_question", arguments: { _invalid_arguments: "{\"a\":" } }
    ])
  })

  it.effect("give no ProcessedChunk, no IContent tool call and no message patch", () =>
    Effect.gen(function*() {
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
      const contents = yield* Stream.runCollect(IContent.fromEvents(Stream.fromIterable(events(true))))
      const names = [...contents].flatMap((content) =>
        content.blocks.flatMap((block) => (block.type === "tool_call" ? [block.name] : []))
      )
      expect(names).toStrictEqual(["lookup"])
      const state = StreamEventPatches.initial()
      const patches = events(true).flatMap((e) => Result.getOrThrow(StreamEventPatches.map(state, e)))
      expect(patches.flatMap((patch) => (patch.type === "tool_start" ? [patch.name] : []))).toStrictEqual(["lookup"])
    }), 10_000)
})

/**
 * Approval requests (docs/events.md#output-items, docs/views.md#the-turn-summary): a
 * question the caller answers, never a tool call. They are listed apart in the summary
 * and give nothing in the views that route calls to run (`IContent` here; the others
 * in `@sluice/views`).
 */
import { describe, expect, it } from "@effect/vitest"
import type { OutputItem } from "@sluice/core"
import { OutputItem as Items, SchemaDecode, StreamEvent } from "@sluice/core"
import { approval, approvalEvents as events, event } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { IContent, Summary, Turn } from "../src/index.js"

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

  it.effect("give no IContent tool call", () =>
    Effect.gen(function*() {
      const contents = yield* Stream.runCollect(IContent.fromEvents(Stream.fromIterable(events(true))))
      const names = [...contents].flatMap((content) =>
        content.blocks.flatMap((block) => (block.type === "tool_call" ? [block.name] : []))
      )
      expect(names).toStrictEqual(["lookup"])
    }), 10_000)
})

import { describe, expect, it } from "@effect/vitest"
import type { OutputItem, StreamEvent } from "@sluice/core"
import { Json } from "@sluice/core"
import { checkEffect } from "@sluice/testing/property"
import { event, itemsArbitrary, script, turnEvents } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as FastCheck from "fast-check"
import { AssistantMessage, MessageAccumulator, StreamEventPatches } from "../src/index.js"

const cuts = FastCheck.array(FastCheck.nat({ max: 80 }), { maxLength: 12 })

const toMessage = (events: ReadonlyArray<StreamEvent.StreamEvent>) =>
  Stream.fromIterable(events).pipe(StreamEventPatches.fromStreamEvents, MessageAccumulator.run({ provider: "test" }))

const expectedContent = (item: OutputItem.OutputItem): AssistantMessage.Content => {
  switch (item.type) {
    case "message":
      return { type: "text", text: item.content }
    case "reasoning":
      return { type: "reasoning", text: item.content, signature: item.signature ?? "" }
    case "function_call":
      return {
        type: "tool_call",
        id: item.call_id,
        name: item.name,
        tool_type: "function",
        arguments: item.arguments,
        input: Json.parseArguments(item.arguments)
      }
    default:
      throw new Error(`unexpected item ${item.type}`)
  }
}

const [start] = turnEvents([])
const done = event({
  type: "response_done",
  response_id: start!.run_id,
  status: "complete",
  finish_reason: "tool-calls"
})

describe("StreamEventPatches", () => {
  it.effect(
    "drives the message accumulator to the turn's items, however the deltas are split",
    () =>
      checkEffect(FastCheck.tuple(itemsArbitrary, cuts), ([items, c]) =>
        Effect.gen(function*() {
          const message = yield* toMessage(turnEvents(script(items, c)))
          expect(message.content).toStrictEqual(items.map(expectedContent))
          expect(message.usage).toStrictEqual({ input: 3, cache_write: 0, cache_read: 0, output: 4, total: 7, raw: {} })
          expect([message.stop_reason, message.model, message.id]).toStrictEqual(["stop", "model", start!.run_id])
        }), { numRuns: 100 }),
    60_000
  )

  it.effect("serializes interleaved items of one type in the order they started", () =>
    Effect.gen(function*() {
      const message = yield* toMessage([
        start!,
        event({ type: "item_start", item_id: "f1", item_type: "function_call", name: "a" }),
        event({ type: "item_start", item_id: "m1", item_type: "message" }),
        event({ type: "item_start", item_id: "f2", item_type: "function_call", name: "b" }),
        event({ type: "item_start", item_id: "m2", item_type: "message", initial_content: "sec" }),
        event({ type: "item_delta", item_id: "f2", delta_content: "{\"y\":" }),
        event({ type: "item_delta", item_id: "m2", delta_content: "ond" }),
        event({ type: "item_delta", item_id: "m1", delta_content: "first" }),
        event({ type: "item_delta", item_id: "f1", delta_content: "{\"x\":1}" }),
        event({
          type: "item_done",
          item_id: "f2",
          final_item: { type: "function_call", id: "f2", call_id: "call_b", name: "b", arguments: "{\"y\":2}" }
        }),
        event({
          type: "item_done",
          item_id: "m2",
          final_item: { type: "message", id: "m2", content: "second", origin: "agent" }
        }),
        event({
          type: "item_done",
          item_id: "m1",
          final_item: { type: "message", id: "m1", content: "first!", origin: "agent" }
        }),
        event({
          type: "item_done",
          item_id: "f1",
          final_item: { type: "function_call", id: "f1", call_id: "call_a", name: "a", arguments: "{\"x\":1}" }
        }),
        done
      ])
      expect(message.content).toStrictEqual([
        { type: "text", text: "first!" },
        { type: "text", text: "second" },
        { type: "tool_call", id: "call_a", name: "a", tool_type: "function", arguments: "{\"x\":1}", input: { x: 1 } },
        { type: "tool_call", id: "call_b", name: "b", tool_type: "function", arguments: "{\"y\":2}", input: { y: 2 } }
      ])
      expect(message.stop_reason).toBe("tool-calls")
    }))

  it.effect("keeps provider-executed calls and their results out of the tool calls, listed apart with their results", () =>
    Effect.gen(function*() {
      const search = "{\"type\":\"search\",\"query\":\"sluice\"}"
      const message = yield* toMessage([
        start!,
        event({ type: "item_start", item_id: "ws", item_type: "function_call", name: "web_search_call" }),
        event({ type: "item_delta", item_id: "ws", delta_content: search }),
        event({
          type: "item_done",
          item_id: "ws",
          final_item: {
            type: "function_call",
            id: "ws",
            call_id: "ws_1",
            name: "web_search_call",
            arguments: search,
            provider_executed: true
          }
        }),
        event({ type: "item_start", item_id: "wr", item_type: "function_call_output" }),
        event({ type: "item_delta", item_id: "wr", delta_content: "{\"sources\":[]}" }),
        event({
          type: "item_done",
          item_id: "wr",
          final_item: {
            type: "function_call_output",
            id: "wr",
            call_id: "ws_1",
            output: "{\"sources\":[]}",
            success: true,
            provider_executed: true
          }
        }),
        event({ type: "item_start", item_id: "m", item_type: "message", initial_content: "Found." }),
        event({
          type: "item_done",
          item_id: "m",
          final_item: { type: "message", id: "m", content: "Found.", origin: "agent" }
        }),
        event({ type: "item_start", item_id: "f", item_type: "function_call", name: "save" }),
        event({
          type: "item_done",
          item_id: "f",
          final_item: { type: "function_call", id: "f", call_id: "call_s", name: "save", arguments: "{}" }
        }),
        done
      ])
      expect(message.content).toStrictEqual([
        {
          type: "provider_tool_call",
          id: "ws_1",
          name: "web_search_call",
          tool_type: "function",
          arguments: search,
          input: { type: "search", query: "sluice" }
        },
        { type: "provider_tool_result", tool_use_id: "ws_1", content: "{\"sources\":[]}" },
        { type: "text", text: "Found." },
        { type: "tool_call", id: "call_s", name: "save", tool_type: "function", arguments: "{}", input: {} }
      ])
      expect(AssistantMessage.toolCalls(message).map((call) => call.id)).toStrictEqual(["call_s"])
      expect(message.provider_tool_calls).toStrictEqual([
        {
          id: "ws_1",
          name: "web_search_call",
          arguments: search,
          input: { type: "search", query: "sluice" },
          result: "{\"sources\":[]}"
        }
      ])
    }))

  it.effect("a message without provider-executed calls has no provider_tool_calls", () =>
    Effect.gen(function*() {
      const message = yield* toMessage([
        start!,
        event({ type: "item_start", item_id: "f", item_type: "function_call", name: "save" }),
        event({
          type: "item_done",
          item_id: "f",
          final_item: { type: "function_call", id: "f", call_id: "call_s", name: "save", arguments: "{}" }
        }),
        done
      ])
      expect(message).not.toHaveProperty("provider_tool_calls")
    }))

  it.effect("ends open text at response_done, drops unfinished tool calls and queued cancelled items, records errors", () =>
    Effect.gen(function*() {
      const message = yield* toMessage([
        start!,
        event({ type: "item_start", item_id: "m1", item_type: "message", initial_content: "kept" }),
        event({ type: "item_start", item_id: "m2", item_type: "message", initial_content: "dropped" }),
        event({ type: "item_cancelled", item_id: "m2" }),
        event({ type: "item_start", item_id: "f", item_type: "function_call", name: "f" }),
        event({ type: "item_start", item_id: "o", item_type: "function_call_output" }),
        event({
          type: "item_done",
          item_id: "o",
          final_item: { type: "function_call_output", id: "o", call_id: "call_f", output: "42", success: true }
        }),
        event({ type: "response_error", response_id: start!.run_id, error: { code: "x", message: "boom" } }),
        event({ type: "response_done", response_id: start!.run_id, status: "error", finish_reason: "error" })
      ])
      expect(message.content).toStrictEqual([
        { type: "text", text: "kept" },
        { type: "tool_result", tool_use_id: "call_f", content: "42" }
      ])
      expect([message.stop_reason, message.error_message]).toStrictEqual(["error", "boom"])
    }))

  it.effect("refuses out-of-order events and final content that contradicts the deltas", () =>
    Effect.gen(function*() {
      const unknown = yield* Effect.flip(
        toMessage([start!, event({ type: "item_delta", item_id: "ghost", delta_content: "x" })])
      )
      expect(unknown.reason).toBe("UnknownItem")
      const mismatch = yield* Effect.flip(
        toMessage([
          start!,
          event({ type: "item_start", item_id: "m", item_type: "message", initial_content: "abc" }),
          event({
            type: "item_done",
            item_id: "m",
            final_item: { type: "message", id: "m", content: "xyz", origin: "agent" }
          })
        ])
      )
      expect(mismatch.reason).toBe("ContentMismatch")
      const twice = yield* Effect.flip(
        toMessage([
          start!,
          event({ type: "item_start", item_id: "m", item_type: "message" }),
          event({ type: "item_start", item_id: "m", item_type: "message" })
        ])
      )
      expect(twice.reason).toBe("DuplicateItem")
      const late = yield* Effect.flip(
        toMessage([
          start!,
          event({
            type: "item_done",
            item_id: "m",
            final_item: { type: "message", id: "m", content: "a", origin: "agent" }
          }),
          event({ type: "item_delta", item_id: "m", delta_content: "b" })
        ])
      )
      expect(late.reason).toBe("ItemAlreadyDone")
    }))
})

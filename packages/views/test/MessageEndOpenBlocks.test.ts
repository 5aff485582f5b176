/**
 * `message_end` with blocks still open (docs/views.md#messageaccumulator-over-event-patches):
 * the final message is built from the blocks as they stand, each open block closed as
 * its `*_end` would close it and named in the event's `closed`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { MessageAccumulator } from "../src/index.js"

const endOf = (patches: ReadonlyArray<unknown>) =>
  Effect.map(
    Stream.fromIterable(patches).pipe(MessageAccumulator.accumulate({ provider: "test" }), Stream.runCollect),
    (events) => [...events].at(-1)
  )

describe("message_end with blocks still open", () => {
  it.effect("closes an open text block with its text", () =>
    Effect.gen(function*() {
      const end = yield* endOf([
        { type: "message_start", delta: { id: "m", model: "x", role: "assistant" } },
        { type: "text_start", delta: "hi" },
        { type: "text_delta", delta: " there" },
        { type: "message_end" }
      ])
      expect(end?.type === "message_end" && [end.message.content, end.closed]).toStrictEqual([
        [{ type: "text", text: "hi there" }],
        [0]
      ])
    }), 10_000)

  it.effect(
    "closes open blocks of several types in content order; a cut tool call keeps its raw arguments",
    () =>
      Effect.gen(function*() {
        const end = yield* endOf([
          { type: "reasoning_start", delta: "think", signature: "" },
          { type: "reasoning_end", delta: "", signature: "sig" },
          { type: "tool_start", id: "toolu_1", name: "read", tool_type: "tool_use", delta: "" },
          { type: "text_start", delta: "Reading" },
          { type: "tool_delta", delta: "{\"path\": \"/tm" },
          { type: "message_end" }
        ])
        expect(end?.type === "message_end" && end.closed).toStrictEqual([1, 2])
        expect(end?.type === "message_end" && end.message.content).toStrictEqual([
          { type: "reasoning", text: "think", signature: "sig" },
          {
            type: "tool_call",
            id: "toolu_1",
            name: "read",
            tool_type: "tool_use",
            arguments: "{\"path\": \"/tm",
            input: { _invalid_arguments: "{\"path\": \"/tm" }
          },
          { type: "text", text: "Reading" }
        ])
      }),
    10_000
  )

  it.effect(
    "a whole open tool call is parsed as at its end; a provider-executed one stays apart",
    () =>
      Effect.gen(function*() {
        const end = yield* endOf([
          {
            type: "tool_start",
            id: "srv_1",
            name: "web_search",
            tool_type: "server_tool_use",
            delta: "{\"q\":1}",
            provider_executed: true
          },
          { type: "message_end" }
        ])
        expect(end?.type === "message_end" && end.message.provider_tool_calls).toStrictEqual([
          { id: "srv_1", name: "web_search", arguments: "{\"q\":1}", input: { q: 1 } }
        ])
      }),
    10_000
  )

  it("the push API takes it too, and nothing after it", () => {
    const accumulator = MessageAccumulator.make()
    accumulator.push({ type: "tool_result_start", tool_use_id: "t", delta: "partial" }, 1)
    const end = accumulator.push({ type: "message_end" }, 2)
    expect(Result.isSuccess(end) && end.success.type === "message_end" && end.success.closed).toStrictEqual([0])
    expect(Option.map(accumulator.finalMessage(), (message) => message.content)).toStrictEqual(
      Option.some([{ type: "tool_result", tool_use_id: "t", content: "partial" }])
    )
    const after = accumulator.push({ type: "text_start" }, 3)
    expect(Result.isFailure(after) && after.failure.reason).toBe("MessageEnded")
  })

  it.effect("run gives the final message", () =>
    Effect.gen(function*() {
      const message = yield* Stream.fromIterable([{ type: "text_start", delta: "x" }, { type: "message_end" }]).pipe(
        MessageAccumulator.run()
      )
      expect(message.content).toStrictEqual([{ type: "text", text: "x" }])
    }), 10_000)
})

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { MessageAccumulator } from "../src/index.js"

const seedPatches: ReadonlyArray<unknown> = [
  { type: "message_start", delta: { id: "msg_1", model: "m-1", role: "assistant" } },
  { type: "reasoning_start", delta: "thinking", signature: "" },
  { type: "reasoning_delta", delta: "...", signature: "" },
  { type: "reasoning_end", delta: "", signature: "sig==" },
  { type: "text_start", delta: "hi" },
  { type: "text_delta", delta: " there" },
  { type: "text_end", delta: "" },
  { type: "tool_start", id: "toolu_1", name: "tool_name", tool_type: "tool_use", delta: "" },
  { type: "tool_delta", delta: "{\"a\":" },
  { type: "tool_end", delta: "1}" },
  { type: "tool_result_start", tool_use_id: "srv_1", name: "server_tool_result", delta: "res" },
  { type: "tool_result_delta", delta: "ult" },
  { type: "tool_result_end", delta: "" },
  { type: "message_delta", delta: { stop_reason: "stop" }, usage: { output: 2 } },
  { type: "message_end" }
]

const failureOf = (patches: ReadonlyArray<unknown>) =>
  Effect.flip(Stream.fromIterable(patches).pipe(MessageAccumulator.run({ provider: "test" })))

describe("MessageAccumulator", () => {
  it.effect("builds docs/views.md's assistant message, assigning content indexes and usage defaults", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_716_650_000_000)
      const events = [
        ...(yield* Stream.fromIterable(seedPatches).pipe(
          MessageAccumulator.accumulate({ provider: "anthropic", api: "messages" }),
          Stream.runCollect
        ))
      ]
      expect(events.map((e) => [e.type, "content_index" in e ? e.content_index : null])).toStrictEqual([
        ["message_start", null],
        ["reasoning_start", 0],
        ["reasoning_delta", 0],
        ["reasoning_end", 0],
        ["text_start", 1],
        ["text_delta", 1],
        ["text_end", 1],
        ["tool_start", 2],
        ["tool_delta", 2],
        ["tool_end", 2],
        ["tool_result_start", 3],
        ["tool_result_delta", 3],
        ["tool_result_end", 3],
        ["message_delta", null],
        ["message_end", null]
      ])
      const last = events.at(-1)!
      expect(last.type === "message_end" && last.message).toStrictEqual({
        role: "assistant",
        id: "msg_1",
        model: "m-1",
        provider: "anthropic",
        api: "messages",
        content: [
          { type: "reasoning", text: "thinking...", signature: "sig==" },
          { type: "text", text: "hi there" },
          {
            type: "tool_call",
            id: "toolu_1",
            name: "tool_name",
            tool_type: "tool_use",
            arguments: "{\"a\":1}",
            input: { a: 1 }
          },
          { type: "tool_result", tool_use_id: "srv_1", name: "server_tool_result", content: "result" }
        ],
        usage: { input: 0, cache_write: 0, cache_read: 0, output: 2, total: 2, raw: {} },
        stop_reason: "stop",
        timestamp: 1_716_650_000_000
      })
      const partial = events[5]!
      expect("partial" in partial && partial.partial.content).toStrictEqual([
        { type: "reasoning", text: "thinking...", signature: "sig==" },
        { type: "text", text: "hi there" }
      ])
    }))

  it.effect("takes message_start's timestamp over the clock, and later usage counts over earlier ones", () =>
    Effect.gen(function*() {
      const message = yield* Stream.make(
        { type: "message_start", delta: { timestamp: 42 } },
        { type: "message_delta", usage: { input: 5, output: 1, cache_read: 2, raw: { n: 1 } } },
        { type: "message_delta", usage: { output: 7 } },
        { type: "message_end" }
      ).pipe(MessageAccumulator.run())
      expect(message.timestamp).toBe(42)
      expect(message.usage).toStrictEqual({
        input: 5,
        cache_write: 0,
        cache_read: 2,
        output: 7,
        total: 14,
        raw: { n: 1 }
      })
      expect(message.stop_reason).toBeNull()
    }))

  it.effect("lets blocks of different types interleave", () =>
    Effect.gen(function*() {
      const message = yield* Stream.make(
        { type: "text_start", delta: "a" },
        { type: "tool_start", id: "call_1", name: "f" },
        { type: "text_delta", delta: "b" },
        { type: "tool_delta", delta: "{}" },
        { type: "tool_end" },
        { type: "text_end", delta: "c" },
        { type: "message_end" }
      ).pipe(MessageAccumulator.run())
      expect(message.content).toStrictEqual([
        { type: "text", text: "abc" },
        { type: "tool_call", id: "call_1", name: "f", tool_type: "tool_use", arguments: "{}", input: {} }
      ])
    }))

  it.effect("refuses a second block of the same type while one is open (docs/views.md's limitation)", () =>
    Effect.gen(function*() {
      const error = yield* failureOf([
        { type: "text_start", delta: "first" },
        { type: "text_start", delta: "second" },
        { type: "text_delta", delta: " more" }
      ])
      expect([error.reason, error.patchIndex, error.patchType]).toStrictEqual(["BlockAlreadyOpen", 1, "text_start"])
      expect(error.message).toContain("content index 0")
    }))

  it.effect("cannot see a delta sent after its block closed and another of its type opened: it lands in the open one", () =>
    Effect.gen(function*() {
      const message = yield* Stream.make(
        { type: "text_start", delta: "A" },
        { type: "text_end" },
        { type: "text_start", delta: "B" },
        { type: "text_delta", delta: "meant-for-A" },
        { type: "text_end" },
        { type: "message_end" }
      ).pipe(MessageAccumulator.run())
      expect(message.content).toStrictEqual([
        { type: "text", text: "A" },
        { type: "text", text: "Bmeant-for-A" }
      ])
    }))

  it.effect("refuses unknown patch types and bad fields by Schema, naming the patch", () =>
    Effect.gen(function*() {
      const unknown = yield* failureOf([{ type: "message_start" }, { type: "content_block_start", index: 0 }])
      expect([unknown.reason, unknown.patchType, unknown.patchIndex]).toStrictEqual([
        "UnknownPatchType",
        "content_block_start",
        1
      ])
      const notObject = yield* failureOf(["text_start"])
      expect(notObject.reason).toBe("UnknownPatchType")
      const bad = yield* failureOf([{ type: "tool_start", name: "f" }])
      expect([bad.reason, bad.patchType]).toStrictEqual(["InvalidPatch", "tool_start"])
      expect(bad.message).toContain("id")
    }))

  it.effect("refuses patches out of order", () =>
    Effect.gen(function*() {
      expect((yield* failureOf([{ type: "text_delta", delta: "x" }])).reason).toBe("NoOpenBlock")
      expect((yield* failureOf([{ type: "reasoning_end" }])).reason).toBe("NoOpenBlock")
      // message_end with a block still open is no longer refused: it closes the block
      // (test/MessageEndOpenBlocks.test.ts)
      expect((yield* failureOf([{ type: "message_start" }, { type: "message_start" }])).reason).toBe(
        "DuplicateMessageStart"
      )
      expect((yield* failureOf([{ type: "message_end" }, { type: "text_start" }])).reason).toBe("MessageEnded")
      expect((yield* failureOf([{ type: "text_start" }, { type: "text_end" }])).reason).toBe("MessageNotEnded")
    }))

  it("offers docs/views.md's push API; a refused patch leaves the state as it was", () => {
    const accumulator = MessageAccumulator.make({ provider: "p" })
    expect(Result.isSuccess(accumulator.push({ type: "text_start", delta: "x" }, 7))).toBe(true)
    const before = accumulator.state()
    const refused = accumulator.push({ type: "text_start" }, 8)
    expect(Result.isFailure(refused) && refused.failure.reason).toBe("BlockAlreadyOpen")
    expect(accumulator.state()).toBe(before)
    expect(Option.isNone(accumulator.finalMessage())).toBe(true)
    accumulator.push({ type: "text_end", delta: "y" }, 9)
    const end = accumulator.push({ type: "message_end" }, 10)
    expect(Result.isSuccess(end) && end.success.type).toBe("message_end")
    expect(accumulator.finalMessage()).toStrictEqual(
      Option.some({
        role: "assistant",
        provider: "p",
        content: [{ type: "text", text: "xy" }],
        usage: { input: 0, cache_write: 0, cache_read: 0, output: 0, total: 0, raw: {} },
        stop_reason: null,
        timestamp: 7
      })
    )
  })
})

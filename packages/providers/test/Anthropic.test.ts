import { describe, expect, it } from "@effect/vitest"
import { SchemaDecode } from "@sluice/core"
import { checkEffect } from "@sluice/testing/property"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"
import { Anthropic, WireDecodeError } from "../src/index.js"
import * as Providers from "../src/request/Providers.js"
import { done, errors, finals, ofType, own, ownJson, recorded, runText } from "./support/normalizerHarness.js"
import { transcriptProperties } from "./support/transcriptProperties.js"

const normalize = Anthropic.normalize
const run = (text: string) => runText(normalize, text)

const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`

const start = event("message_start", {
  type: "message_start",
  message: {
    id: "msg_x",
    type: "message",
    role: "assistant",
    model: "claude-x",
    content: [],
    usage: { input_tokens: 5, output_tokens: 1 }
  }
})
const stop = (reason: string) =>
  event("message_delta", { type: "message_delta", delta: { stop_reason: reason }, usage: { output_tokens: 2 } }) +
  event("message_stop", { type: "message_stop" })
const textBlock = (index: number, text: string) =>
  event("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }) +
  event("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text } }) +
  event("content_block_stop", { type: "content_block_stop", index })

describe("Anthropic.normalize", () => {
  it.effect("reads recorded thinking with its signature, then a tool call with split arguments", () =>
    Effect.gen(function*() {
      const events = yield* run(recorded("anthropic", "thinking-then-tool.sse"))
      const [reasoning, call] = finals(events)
      expect(reasoning).toMatchObject({ type: "reasoning", provider_id: "anthropic" })
      expect(
        reasoning?.type === "reasoning" &&
          reasoning.signature?.startsWith("EtYDCkYICxgCKkAVHEWRYo6RgSMs4ZZDX4gW16kdfp2EIXft")
      ).toBe(true)
      expect(
        reasoning?.type === "reasoning" && reasoning.content.startsWith("The user is asking for weather information")
      ).toBe(true)
      expect(call).toStrictEqual({
        type: "function_call",
        id: "item_1",
        call_id: "toolu_01Js4AMfx5qpTLhwTusnvT68",
        name: "weather",
        arguments: "{\"location\": \"Florence, Italy\"}"
      })
      const end = done(events)
      expect(end?.status).toBe("complete")
      expect(end?.finish_reason).toBe("tool-calls")
      expect(end?.usage).toMatchObject({
        input: 424,
        output: 119,
        cacheRead: 0,
        cacheWrite: 0,
        reasoning: 0,
        total: 543
      })
    }))

  it.effect("keeps recorded redacted thinking data", () =>
    Effect.gen(function*() {
      const events = yield* run(recorded("anthropic", "redacted-thinking.sse"))
      const items = finals(events)
      expect(items.map((item) => item.type)).toStrictEqual(["reasoning", "reasoning", "message"])
      const first = items[0]
      expect(first?.type === "reasoning" && first.redacted).toBe(true)
      expect(first?.type === "reasoning" && first.data?.startsWith("EqkECkYIBxgCKkA8AZ4noDfV5VcOJe")).toBe(true)
      expect(first?.type === "reasoning" && first.data?.endsWith("ewJ/hgB")).toBe(true)
      expect(done(events)).toMatchObject({
        status: "complete",
        finish_reason: "stop",
        usage: { input: 92, output: 189, total: 281 }
      })
    }))

  it.effect("reads recorded parallel tool calls", () =>
    Effect.gen(function*() {
      const events = yield* run(recorded("anthropic", "tool-parallel.sse"))
      expect(finals(events).map((item) => (item.type === "function_call" ? [item.name, item.arguments] : item.type)))
        .toStrictEqual([
          "message",
          ["add", "{\"a\": 2, \"b\": 3}"],
          ["multiply", "{\"a\": 2, \"b\": 3}"]
        ])
    }))

  it.effect("maps text deltas and usage with cache reads and writes (input excludes them)", () =>
    Effect.gen(function*() {
      const events = yield* run(own("anthropic", "text-cache.sse"))
      expect(ofType(events, "item_delta").map((delta) => delta.delta_content)).toStrictEqual([
        "Hello",
        ", wörld",
        " ☂."
      ])
      expect(finals(events)).toStrictEqual([{
        type: "message",
        id: "item_0",
        content: "Hello, wörld ☂.",
        origin: "agent"
      }])
      const usage = done(events)?.usage
      expect(usage).toMatchObject({ input: 12, cacheRead: 100, cacheWrite: 50, output: 9, reasoning: 0, total: 171 })
      // message_delta restated only output_tokens: the counts of message_start survive
      expect(usage?.raw).toMatchObject({ input_tokens: 12, cache_read_input_tokens: 100, output_tokens: 9 })
    }))

  it.effect("keeps a signature split over deltas, redacted thinking, and tool calls without arguments", () =>
    Effect.gen(function*() {
      const events = yield* run(own("anthropic", "thinking-tools.sse"))
      expect(finals(events)).toStrictEqual([
        {
          type: "reasoning",
          id: "item_0",
          content: "Two lookups, both at once.",
          // claude-opus-4-1: Anthropic returns Claude 4 models' thinking summarized
          reasoning_kind: "summary",
          provider_id: "anthropic",
          signature: "EqQBCkgIARABGAIiQL2sig=="
        },
        {
          type: "reasoning",
          id: "item_1",
          content: "",
          provider_id: "anthropic",
          redacted: true,
          data: "RWRhY3RlZCBibG9i"
        },
        { type: "message", id: "item_2", content: "Checking both.", origin: "agent" },
        {
          type: "function_call",
          id: "item_3",
          call_id: "toolu_weather",
          name: "weather",
          arguments: "{\"city\":\"Florence\"}"
        },
        {
          type: "function_call",
          id: "item_4",
          call_id: "toolu_time",
          name: "local_time",
          arguments: "{\"zone\":\"Europe/Rome\",\"hours\":24}"
        },
        { type: "function_call", id: "item_5", call_id: "toolu_ping", name: "ping", arguments: "{}" }
      ])
      expect(ofType(events, "item_start")[2]).toMatchObject({ item_type: "message", initial_content: "Checking " })
      expect(done(events)).toMatchObject({ status: "complete", finish_reason: "tool-calls" })
    }))

  it.effect("maps server tool use and its result block, and keeps citations", () =>
    Effect.gen(function*() {
      const events = yield* run(own("anthropic", "server-tool.sse"))
      const [use, result, text] = finals(events)
      expect(use).toStrictEqual({
        type: "function_call",
        id: "item_0",
        call_id: "srvtoolu_1",
        name: "web_search",
        arguments: "{\"query\": \"sluice gates\"}",
        provider_executed: true,
        provider_metadata: { server_tool: true, block_type: "server_tool_use" }
      })
      expect(result).toMatchObject({
        type: "function_call_output",
        call_id: "srvtoolu_1",
        success: true,
        provider_executed: true,
        provider_metadata: { server_tool: true, block_type: "web_search_tool_result" }
      })
      expect(result?.type === "function_call_output" && JSON.parse(result.output)[0].url).toBe(
        "https://example.com/sluice"
      )
      expect(text?.type === "message" && text.provider_metadata?.citations).toHaveLength(1)
      expect(done(events)?.usage).toMatchObject({ input: 2100, output: 41 })
    }))

  it.effect("marks a server tool result that carries an error as unsuccessful", () =>
    Effect.gen(function*() {
      const events = yield* run(
        start +
          event("content_block_start", {
            type: "content_block_start",
            index: 0,
            content_block: {
              type: "web_search_tool_result",
              tool_use_id: "srvtoolu_2",
              content: { type: "web_search_tool_result_error", error_code: "max_uses_exceeded" }
            }
          }) +
          event("content_block_stop", { type: "content_block_stop", index: 0 }) +
          stop("end_turn")
      )
      expect(finals(events)[0]).toMatchObject({ type: "function_call_output", success: false })
    }))

  it.effect("turns event: error overloaded_error into a retryable provider_overloaded error, keeping the text", () =>
    Effect.gen(function*() {
      const events = yield* run(own("anthropic", "overloaded.sse"))
      expect(finals(events)).toStrictEqual([{ type: "message", id: "item_0", content: "Partial ans", origin: "agent" }])
      expect(errors(events)).toStrictEqual([
        {
          code: "overloaded_error",
          message: "Overloaded",
          type: "provider_overloaded",
          retryable: true,
          status: 529,
          // the wire's error object, for logs (ProcessedChunk's originalError)
          raw: { type: "overloaded_error", message: "Overloaded" }
        }
      ])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "error", usage: { input: 40, output: 1 } })
    }))

  it.effect("turns a refusal into a content_blocked error and finish reason content-filter", () =>
    Effect.gen(function*() {
      const events = yield* run(own("anthropic", "refusal.sse"))
      expect(finals(events)[0]).toMatchObject({ type: "message", content: "I can't help with that." })
      expect(errors(events)).toMatchObject([{ type: "content_blocked", retryable: false, code: "refusal" }])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "content-filter" })
    }))

  it.effect("ends a truncated stream with a retryable error, keeping what arrived", () =>
    Effect.gen(function*() {
      const events = yield* run(own("anthropic", "truncated.sse"))
      expect(finals(events)).toStrictEqual([
        { type: "message", id: "item_0", content: "Reading the file", origin: "agent" },
        { type: "function_call", id: "item_1", call_id: "toolu_cut", name: "read_file", arguments: "{\"path\": \"/tm" }
      ])
      expect(errors(events)).toMatchObject([{ code: "stream_truncated", retryable: true }])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "error", usage: { input: 30, output: 1 } })
    }))

  it.effect("finalizes tool arguments at the block's stop, not when a prefix parses", () =>
    Effect.gen(function*() {
      const events = yield* run(
        start +
          event("content_block_start", {
            type: "content_block_start",
            index: 0,
            content_block: { type: "tool_use", id: "toolu_p", name: "f", input: {} }
          }) +
          event("content_block_delta", {
            type: "content_block_delta",
            index: 0,
            delta: { type: "input_json_delta", partial_json: "{\"a\":1}" }
          }) +
          event("content_block_delta", {
            type: "content_block_delta",
            index: 0,
            delta: { type: "input_json_delta", partial_json: "{\"b\":2}" }
          }) +
          event("content_block_stop", { type: "content_block_stop", index: 0 }) +
          stop("tool_use")
      )
      const types = events.map((e) => e.payload.type)
      expect(types.indexOf("item_done")).toBe(types.lastIndexOf("item_delta") + 1)
      expect(finals(events)[0]).toMatchObject({ arguments: "{\"a\":1}{\"b\":2}" })
    }))

  it.effect("maps every stop reason", () =>
    Effect.gen(function*() {
      const reasons: Array<[string, string]> = [
        ["end_turn", "stop"],
        ["stop_sequence", "stop"],
        ["max_tokens", "length"],
        ["model_context_window_exceeded", "length"],
        ["tool_use", "tool-calls"],
        ["pause_turn", "paused"],
        ["some_future_reason", "other"]
      ]
      for (const [reason, expected] of reasons) {
        const events = yield* run(start + textBlock(0, "x") + stop(reason))
        expect(done(events)).toMatchObject({ status: "complete", finish_reason: expected })
      }
    }))

  it("classifies every Anthropic error type", () => {
    const cases: Array<[string, string, boolean]> = [
      ["overloaded_error", "provider_overloaded", true],
      ["rate_limit_error", "rate_limit", true],
      ["api_error", "api_error", true],
      ["timeout_error", "timeout", true],
      ["invalid_request_error", "api_error", false],
      ["authentication_error", "api_error", false],
      ["billing_error", "api_error", false],
      ["permission_error", "api_error", false],
      ["not_found_error", "api_error", false],
      ["request_too_large", "api_error", false],
      ["some_future_error", "api_error", false]
    ]
    for (const [type, expected, retryable] of cases) {
      const error = Anthropic.classifyError({ type, message: "m" })
      expect([error.type, error.retryable, error.code]).toStrictEqual([expected, retryable, type])
    }
  })

  // events after message_stop are refused (test/SmallerWireOrder.test.ts)
  it.effect("ignores block types it does not read", () =>
    Effect.gen(function*() {
      const unknownBlock = event("content_block_start", {
        type: "content_block_start",
        index: 0,
        content_block: { type: "container_upload", file_id: "f" }
      }) +
        event("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "future_delta", x: 1 } }) +
        event("content_block_stop", { type: "content_block_stop", index: 0 })
      const events = yield* run(start + unknownBlock + textBlock(1, "hi") + stop("end_turn"))
      expect(finals(events).map((item) => item.type === "message" && item.content)).toStrictEqual(["hi"])
      expect(events[events.length - 1]?.payload.type).toBe("response_done")
    }))

  it.effect("fails with WireDecodeError naming the line for data that is not JSON", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(run(start + "event: content_block_start\ndata: {not json\n\n"))
      expect(error).toBeInstanceOf(WireDecodeError.WireDecodeError)
      expect(error).toMatchObject({ _tag: "WireDecodeError", provider: "anthropic", line: 4, reason: "InvalidJson" })
    }))

  it.effect("fails with WireDecodeError for an unknown event type or a delta of a block that is not open", () =>
    Effect.gen(function*() {
      const unknown = yield* Effect.flip(run(start + event("surprise", { type: "surprise" })))
      expect(unknown).toMatchObject({ _tag: "WireDecodeError", reason: "UnexpectedShape", line: 4 })
      const orphan = yield* Effect.flip(
        run(
          start +
            event("content_block_delta", {
              type: "content_block_delta",
              index: 7,
              delta: { type: "text_delta", text: "x" }
            })
        )
      )
      expect(orphan).toMatchObject({ _tag: "WireDecodeError", reason: "InvalidOrder", line: 4 })
      expect(orphan.message).toContain("block 7")
      const mismatch = yield* Effect.flip(
        run(
          start +
            event("content_block_start", {
              type: "content_block_start",
              index: 0,
              content_block: { type: "text", text: "" }
            }) +
            event("content_block_delta", {
              type: "content_block_delta",
              index: 0,
              delta: { type: "input_json_delta", partial_json: "{" }
            })
        )
      )
      expect(mismatch.message).toContain("input_json_delta does not belong in a message block")
    }))

  it.effect("decodes content deltas as the StreamChunk schema does", () =>
    checkEffect(
      FastCheck.tuple(
        FastCheck.constantFrom("text_delta", "thinking_delta", "input_json_delta"),
        FastCheck.oneof(FastCheck.string(), FastCheck.integer(), FastCheck.constant(null)),
        FastCheck.oneof(FastCheck.nat(), FastCheck.constant(-1), FastCheck.constant(1.5)),
        FastCheck.dictionary(FastCheck.string(), FastCheck.jsonValue(), { maxKeys: 3 })
      ),
      ([deltaType, value, index, extra]) =>
        Effect.gen(function*() {
          const field = deltaType === "text_delta"
            ? "text"
            : deltaType === "thinking_delta"
            ? "thinking"
            : "partial_json"
          const blockType = deltaType === "text_delta"
            ? "text"
            : deltaType === "thinking_delta"
            ? "thinking"
            : "tool_use"
          const block = blockType === "tool_use"
            ? { type: blockType, id: "tu", name: "f" }
            : { type: blockType, [blockType]: "" }
          const data = {
            ...extra,
            type: "content_block_delta",
            index,
            delta: { ...extra, type: deltaType, [field]: value }
          }
          const body = start +
            (Number.isInteger(index) && index >= 0
              ? event("content_block_start", { type: "content_block_start", index, content_block: block })
              : "") +
            event("content_block_delta", data)
          const bySchema = SchemaDecode.decodeUnknownResult(Anthropic.StreamChunk)(JSON.parse(JSON.stringify(data)))
          const exit = yield* Effect.result(run(body))
          if (Result.isFailure(bySchema)) {
            expect(exit._tag).toBe("Failure")
          } else {
            const chunk = bySchema.success
            const expected = chunk.type === "content_block_delta" && "text" in chunk.delta ?
              chunk.delta.text
              : chunk.type === "content_block_delta" && "thinking" in chunk.delta ?
              chunk.delta.thinking
              : chunk.type === "content_block_delta" && "partial_json" in chunk.delta ?
              chunk.delta.partial_json
              : undefined
            expect(exit._tag).toBe("Success")
            if (Result.isSuccess(exit)) {
              expect(ofType(exit.success, "item_delta").map((d) => d.delta_content).join("")).toBe(expected)
            }
          }
        }),
      { numRuns: 150 }
    ), 120_000)

  transcriptProperties(Providers.get("anthropic"), [
    ["thinking-then-tool", recorded("anthropic", "thinking-then-tool.sse")],
    ["redacted-thinking", recorded("anthropic", "redacted-thinking.sse")],
    ["tool-parallel", recorded("anthropic", "tool-parallel.sse")],
    ["text-cache", own("anthropic", "text-cache.sse")],
    ["thinking-tools", own("anthropic", "thinking-tools.sse")],
    ["server-tool", own("anthropic", "server-tool.sse")],
    ["compaction", own("anthropic", "compaction.sse")],
    ["recorded compaction", recorded("anthropic", "compaction.sse")],
    ["recorded web-search", recorded("anthropic", "web-search.sse")],
    ["recorded web-fetch", recorded("anthropic", "web-fetch.sse")],
    ["recorded code-execution", recorded("anthropic", "code-execution.sse")],
    ["overloaded", own("anthropic", "overloaded.sse")],
    ["pause-turn", own("anthropic", "pause-turn.sse")],
    ["thinking-usage", own("anthropic", "thinking-usage.sse")],
    ["refusal", own("anthropic", "refusal.sse")],
    ["truncated", own("anthropic", "truncated.sse")]
  ])
})

describe("Anthropic compaction", () => {
  it.effect("keeps a compaction block as its own item; usage counts every pass on the requested model and lists the iterations (recorded)", () =>
    Effect.gen(function*() {
      const events = yield* run(recorded("anthropic", "compaction.sse"))
      const items = finals(events)
      expect(items.map((item) => item.type)).toStrictEqual(["compaction", "message"])
      const compaction = items[0]!
      expect(
        compaction.type === "compaction" &&
          compaction.content.startsWith("## Summary of Conversation\n\n### Task Context")
      ).toBe(true)
      // iterations: compaction 60385 in / 522 out, message 612 in / 2819 out; Anthropic's top level is the
      // message's alone, the usage counts both passes (the request consumed 60,997 input tokens)
      expect(done(events)).toMatchObject({
        status: "complete",
        finish_reason: "stop",
        usage: {
          input: 60_997,
          output: 3341,
          total: 64_338,
          iterations: [
            { type: "compaction", input: 60385, output: 522, cacheRead: 0, cacheWrite: 0 },
            { type: "message", input: 612, output: 2819, cacheRead: 0, cacheWrite: 0 }
          ]
        }
      })
    }))

  it.effect("streamed and non-streaming compaction give the same items and the same usage with iterations", () =>
    Effect.gen(function*() {
      const streamed = yield* run(own("anthropic", "compaction.sse"))
      const whole = yield* Anthropic.normalizeResponse(ownJson("anthropic", "compaction.json"))
      expect(finals(whole)).toStrictEqual(finals(streamed))
      expect(finals(streamed)[0]).toMatchObject({
        type: "compaction",
        content: "## Summary\nThe user asked for the capital of Peru; it is Lima. Pending: its population."
      })
      for (const events of [streamed, whole]) {
        expect(done(events)?.usage).toMatchObject({
          input: 281,
          output: 91,
          cacheRead: 0,
          cacheWrite: 0,
          total: 372,
          iterations: [
            { type: "compaction", input: 100, output: 83, cacheRead: 0, cacheWrite: 0 },
            { type: "message", input: 181, output: 8, cacheRead: 0, cacheWrite: 0 }
          ]
        })
      }
    }))

  it("passes on another model stay out of the counts; passes naming the requested model count", () => {
    const raw = {
      input_tokens: 40,
      output_tokens: 4,
      iterations: [
        { type: "compaction", input_tokens: 900, output_tokens: 90, cache_read_input_tokens: 10 },
        { type: "advisor_message", model: "claude-opus-4-7", input_tokens: 700, output_tokens: 70 },
        { type: "message", model: "claude-sonnet-4-6", input_tokens: 40, output_tokens: 4 }
      ]
    }
    const counted = Anthropic.usage(raw, "claude-sonnet-4-6")
    expect(counted).toMatchObject({ input: 940, output: 94, cacheRead: 10, cacheWrite: 0, total: 1044 })
    expect(counted.iterations?.map((iteration) => [iteration.type, iteration.model])).toStrictEqual([
      ["compaction", undefined],
      ["advisor_message", "claude-opus-4-7"],
      ["message", "claude-sonnet-4-6"]
    ])
    // without the model nothing tells whose a pass is: the top-level figures
    expect(Anthropic.usage(raw)).toMatchObject({ input: 40, output: 4 })
  })

  it("usage without iterations keeps the top-level counts", () => {
    expect(Anthropic.usage({ input_tokens: 5, output_tokens: 7 })).toMatchObject({ input: 5, output: 7, total: 12 })
    expect(Anthropic.usage({ input_tokens: 5, output_tokens: 7, iterations: [] })).toMatchObject({
      input: 5,
      output: 7
    })
  })
})

describe("Anthropic.normalizeResponse", () => {
  it.effect("decodes a Messages response into the same final items", () =>
    Effect.gen(function*() {
      const events = yield* Anthropic.normalizeResponse(ownJson("anthropic", "thinking-tools.json"))
      const streamed = yield* run(own("anthropic", "thinking-tools.sse"))
      expect(finals(events)).toStrictEqual(finals(streamed))
      expect(done(events)).toMatchObject({
        status: "complete",
        finish_reason: "tool-calls",
        usage: { input: 300, output: 87 }
      })
    }))

  it.effect("turns an error body into a classified response_error", () =>
    Effect.gen(function*() {
      const events = yield* Anthropic.normalizeResponse({
        type: "error",
        error: { type: "rate_limit_error", message: "slow down" }
      })
      expect(errors(events)).toMatchObject([{
        type: "rate_limit",
        retryable: true,
        code: "rate_limit_error",
        message: "slow down"
      }])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "error" })
    }))

  it.effect("fails with WireDecodeError for a body of the wrong shape", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Anthropic.normalizeResponse({ type: "message", content: "nope" }))
      expect(error).toMatchObject({
        _tag: "WireDecodeError",
        provider: "anthropic",
        line: 0,
        reason: "UnexpectedShape"
      })
    }))
})

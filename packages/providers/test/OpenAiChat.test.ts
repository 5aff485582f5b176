import { describe, expect, it } from "@effect/vitest"
import { checkEffect } from "@sluice/testing/property"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as FastCheck from "fast-check"
import { OpenAiChat } from "../src/index.js"
import * as Providers from "../src/request/Providers.js"
import { chatChunk as chunk, runChat as run, runChatCompatible as runCompatible } from "./support/chatWire.js"
import { done, errors, finals, ofType, own, ownJson, recorded } from "./support/normalizerHarness.js"
import { transcriptProperties } from "./support/transcriptProperties.js"

const DONE = "data: [DONE]\n\n"

describe("OpenAiChat.normalize", () => {
  it.effect("reads recorded plain text with usage", () =>
    Effect.gen(function*() {
      const events = yield* run(recorded("openai-chat", "text-simple.sse"))
      expect(ofType(events, "response_start")[0]).toMatchObject({
        model_id: "gpt-4o-mini-2024-07-18",
        provider_id: "openai-chat"
      })
      expect(finals(events)).toStrictEqual([{ type: "message", id: "item_0", content: "Olá!", origin: "agent" }])
      expect(done(events)).toMatchObject({
        status: "complete",
        finish_reason: "stop",
        usage: { input: 20, output: 2, total: 22 }
      })
    }))

  it.effect("reads recorded parallel tool calls with split arguments", () =>
    Effect.gen(function*() {
      const events = yield* run(recorded("openai-chat", "tool-parallel.sse"))
      expect(finals(events)).toStrictEqual([
        {
          type: "function_call",
          id: "item_0",
          call_id: "call_cclGbjTQkZDEnnHrRiU0n7NO",
          name: "add",
          arguments: "{\"a\": 2, \"b\": 3}"
        },
        {
          type: "function_call",
          id: "item_1",
          call_id: "call_Nob2SzTcxIjro1HvSBPQS6XG",
          name: "multiply",
          arguments: "{\"a\": 2, \"b\": 3}"
        }
      ])
      expect(ofType(events, "item_start").map((start) => start.name)).toStrictEqual(["add", "multiply"])
      expect(done(events)).toMatchObject({
        status: "complete",
        finish_reason: "tool-calls",
        usage: { input: 106, output: 50 }
      })
    }))

  it.effect("reads DeepSeek reasoning_content as a reasoning item, with reasoning tokens", () =>
    Effect.gen(function*() {
      const events = yield* runCompatible(recorded("openai-compatible", "deepseek-thinking.sse"))
      const [reasoning, message] = finals(events)
      expect(reasoning).toMatchObject({ type: "reasoning", provider_id: "openai-compatible" })
      expect(reasoning?.type === "reasoning" && reasoning.content.startsWith("Hmm, the user just said \"Hello\"."))
        .toBe(true)
      expect(message).toMatchObject({ type: "message", content: "Hello there! 😊 How can I help you today?" })
      expect(ofType(events, "response_start")[0]?.provider_id).toBe("openai-compatible")
      expect(done(events)).toMatchObject({
        finish_reason: "stop",
        usage: { input: 6, output: 212, reasoning: 198, total: 218 }
      })
    }))

  it.effect("reads an OpenRouter error inside a chunk after reasoning, keeping usage", () =>
    Effect.gen(function*() {
      const events = yield* runCompatible(recorded("openai-compatible", "openrouter-midstream-error.sse"))
      expect(finals(events)).toMatchObject([{
        type: "reasoning",
        content: "We need to respond to a greeting. The user"
      }])
      expect(errors(events)).toStrictEqual([
        {
          code: "400",
          message: "Token limit reached",
          type: "api_error",
          retryable: false,
          status: 400,
          raw: { code: 400, message: "Token limit reached" }
        }
      ])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "error", usage: { input: 43, output: 10 } })
    }))

  it.effect("maps usage with cached and reasoning tokens (input excludes the cached ones)", () =>
    Effect.gen(function*() {
      const events = yield* run(own("openai-chat", "text-usage.sse"))
      expect(finals(events)).toStrictEqual([{
        type: "message",
        id: "item_0",
        content: "Olá, wörld ☂",
        origin: "agent"
      }])
      expect(done(events)?.usage).toMatchObject({
        input: 36,
        cacheRead: 64,
        cacheWrite: 0,
        output: 30,
        reasoning: 10,
        total: 130
      })
    }))

  it.effect("gives zero usage when the stream has none", () =>
    Effect.gen(function*() {
      const events = yield* run(own("openai-chat", "no-usage.sse"))
      expect(done(events)).toMatchObject({
        status: "complete",
        finish_reason: "stop",
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 0 }
      })
    }))

  it.effect("merges usage split across chunks", () =>
    Effect.gen(function*() {
      const events = yield* run(
        chunk({ content: "a" }, null, { usage: { prompt_tokens: 10, completion_tokens: null } }) +
          chunk({}, "stop", { usage: { completion_tokens: 4 } }) +
          DONE
      )
      expect(done(events)?.usage).toMatchObject({ input: 10, output: 4, total: 14 })
    }))

  it.effect("joins interleaved tool calls whose indexes start above zero, by id when the index is missing", () =>
    Effect.gen(function*() {
      const events = yield* run(own("openai-chat", "tools-interleaved.sse"))
      expect(finals(events)).toStrictEqual([
        { type: "message", id: "item_0", content: "Looking up both.", origin: "agent" },
        {
          type: "function_call",
          id: "item_1",
          call_id: "call_weather",
          name: "weather",
          arguments: "{\"city\":\"Florence\"}"
        },
        {
          type: "function_call",
          id: "item_2",
          call_id: "call_time",
          name: "local_time",
          arguments: "{\"zone\":\"Europe/Rome\"}"
        }
      ])
      expect(done(events)).toMatchObject({ finish_reason: "tool-calls" })
    }))

  it.effect("does not finalize tool arguments before the turn ends, even when a prefix parses", () =>
    Effect.gen(function*() {
      const events = yield* run(
        chunk({
          tool_calls: [{ index: 0, id: "call_p", type: "function", function: { name: "f", arguments: "{\"a\":1}" } }]
        }) +
          chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"b\":2}" } }] }) +
          chunk({}, "tool_calls") +
          DONE
      )
      const types = events.map((e) => e.payload.type)
      expect(types.indexOf("item_done")).toBeGreaterThan(types.lastIndexOf("item_delta"))
      expect(finals(events)[0]).toMatchObject({ arguments: "{\"a\":1}{\"b\":2}" })
    }))

  it.effect("reads the legacy function_call delta", () =>
    Effect.gen(function*() {
      const events = yield* run(
        chunk({ function_call: { name: "lookup", arguments: "{\"q\":" } }) +
          chunk({ function_call: { arguments: "\"x\"}" } }) +
          chunk({}, "function_call") +
          DONE
      )
      expect(finals(events)).toMatchObject([{ type: "function_call", name: "lookup", arguments: "{\"q\":\"x\"}" }])
      expect(done(events)).toMatchObject({ finish_reason: "tool-calls" })
    }))

  it.effect("reads OpenRouter reasoning with a signature and encrypted details", () =>
    Effect.gen(function*() {
      const events = yield* runCompatible(own("openai-chat", "reasoning-details.sse"))
      expect(finals(events)).toStrictEqual([
        {
          type: "reasoning",
          id: "item_0",
          content: "Add two numbers.",
          provider_id: "openai-compatible",
          signature: "c2lnLW9wZW5yb3V0ZXI=",
          encrypted_content: "ZW5jcnlwdGVk",
          // the details as they came, merged across chunks by type and index, to go back as they are
          provider_metadata: {
            reasoning_details: [
              {
                type: "reasoning.text",
                text: "Add two numbers.",
                signature: "c2lnLW9wZW5yb3V0ZXI=",
                index: 0,
                format: "anthropic-claude-v1"
              },
              { type: "reasoning.encrypted", data: "ZW5jcnlwdGVk", index: 1, format: "anthropic-claude-v1" }
            ]
          }
        },
        { type: "message", id: "item_1", content: "2 + 3 = 5", origin: "agent" }
      ])
      expect(done(events)?.usage).toMatchObject({
        input: 10,
        cacheRead: 30,
        cacheWrite: 10,
        output: 20,
        reasoning: 12,
        total: 70
      })
    }))

  it.effect("turns an in-stream overloaded error into a retryable provider_overloaded error, keeping the text", () =>
    Effect.gen(function*() {
      const events = yield* run(own("openai-chat", "overloaded.sse"))
      expect(finals(events)).toMatchObject([{ type: "message", content: "Partial ans" }])
      expect(errors(events)).toMatchObject([{
        type: "provider_overloaded",
        retryable: true,
        code: "server_overloaded"
      }])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "error" })
    }))

  it.effect("turns finish_reason content_filter into a content_blocked error", () =>
    Effect.gen(function*() {
      const events = yield* run(own("openai-chat", "content-filter.sse"))
      expect(finals(events)).toMatchObject([{ type: "message", content: "Here is" }])
      expect(errors(events)).toMatchObject([{ type: "content_blocked", retryable: false, code: "content_filter" }])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "content-filter" })
    }))

  it.effect("keeps a refusal as a message marked refusal, with a content_blocked error", () =>
    Effect.gen(function*() {
      const events = yield* run(own("openai-chat", "refusal.sse"))
      expect(finals(events)).toStrictEqual([
        {
          type: "message",
          id: "item_0",
          content: "I can't help with that.",
          origin: "agent",
          provider_metadata: { refusal: true }
        }
      ])
      expect(errors(events)).toMatchObject([{
        type: "content_blocked",
        code: "refusal",
        message: "I can't help with that."
      }])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "content-filter" })
    }))

  it.effect("ends a truncated stream with a retryable error, keeping what arrived", () =>
    Effect.gen(function*() {
      const events = yield* run(own("openai-chat", "truncated.sse"))
      expect(finals(events)).toStrictEqual([
        { type: "message", id: "item_0", content: "Reading the file", origin: "agent" },
        { type: "function_call", id: "item_1", call_id: "call_cut", name: "read_file", arguments: "{\"path\": \"/tm" }
      ])
      expect(errors(events)).toMatchObject([{ code: "stream_truncated", retryable: true }])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "error" })
    }))

  it.effect("completes a stream that ends after its finish_reason without [DONE]", () =>
    Effect.gen(function*() {
      const events = yield* run(chunk({ content: "ok" }) + chunk({}, "length"))
      expect(errors(events)).toStrictEqual([])
      expect(done(events)).toMatchObject({ status: "complete", finish_reason: "length" })
    }))

  it.effect("reads only the first choice", () =>
    Effect.gen(function*() {
      const both = `data: ${
        JSON.stringify({
          model: "m",
          choices: [
            { index: 1, delta: { content: "second" }, finish_reason: null },
            { index: 0, delta: { content: "first" }, finish_reason: "stop" }
          ]
        })
      }\n\n`
      const events = yield* run(both + DONE)
      expect(finals(events)).toMatchObject([{ type: "message", content: "first" }])
    }))

  it("classifies in-stream error objects", () => {
    const cases: Array<[Parameters<typeof OpenAiChat.classifyError>[0], string, boolean]> = [
      [{ message: "m", type: "server_error", code: "server_overloaded" }, "provider_overloaded", true],
      [{ message: "m", type: "requests", code: "rate_limit_exceeded" }, "rate_limit", true],
      [{ message: "m", type: "insufficient_quota", code: "insufficient_quota" }, "rate_limit", false],
      [{ message: "m", code: 429 }, "rate_limit", true],
      [{ message: "m", code: 503 }, "provider_overloaded", true],
      [{ message: "m", code: 504 }, "timeout", true],
      [{ message: "m", code: 502 }, "api_error", true],
      [{ message: "m", code: 400 }, "api_error", false],
      [{ message: "m", type: "invalid_request_error", code: "content_policy_violation" }, "content_blocked", false],
      [{ message: "m", type: "server_error", code: null }, "api_error", true],
      [{ message: "m", type: "invalid_request_error" }, "api_error", false]
    ]
    for (const [error, type, retryable] of cases) {
      const classified = OpenAiChat.classifyError(error)
      expect([classified.type, classified.retryable]).toStrictEqual([type, retryable])
    }
  })

  it.effect("fails with WireDecodeError naming the line for data that is not a chunk", () =>
    Effect.gen(function*() {
      const notJson = yield* Effect.flip(run(chunk({ content: "a" }) + "data: {\"choices\": [\n\n"))
      expect(notJson).toMatchObject({
        _tag: "WireDecodeError",
        provider: "openai-chat",
        line: 3,
        reason: "InvalidJson"
      })
      const wrongShape = yield* Effect.flip(run(chunk({ content: "a" }) + "data: {\"choicez\": []}\n\n"))
      expect(wrongShape).toMatchObject({ _tag: "WireDecodeError", line: 3, reason: "UnexpectedShape" })
      const badDelta = yield* Effect.flip(run(chunk({ content: 42 })))
      expect(badDelta).toMatchObject({ _tag: "WireDecodeError", line: 1, reason: "UnexpectedShape" })
    }))

  it.effect("decodes text deltas as the StreamChunk schema does", () =>
    checkEffect(
      FastCheck.tuple(
        FastCheck.constantFrom("content", "refusal", "reasoning_content", "reasoning", "role", "unknown_field"),
        FastCheck.oneof(FastCheck.string(), FastCheck.integer(), FastCheck.constant(null)),
        FastCheck.oneof(
          FastCheck.constant(0),
          FastCheck.constant(null),
          FastCheck.constant(-1),
          FastCheck.constant("0")
        ),
        FastCheck.oneof(FastCheck.constant(null), FastCheck.constant("stop"), FastCheck.constant(3)),
        FastCheck.oneof(FastCheck.constant(null), FastCheck.constant("m"), FastCheck.constant(7))
      ),
      ([key, value, index, finish, model]) =>
        Effect.gen(function*() {
          const data = {
            id: "c",
            model,
            choices: [{ index, delta: { [key]: value }, finish_reason: finish }],
            usage: null
          }
          const bySchema = Schema.decodeUnknownResult(OpenAiChat.StreamChunk)(data)
          const exit = yield* Effect.result(run(`data: ${JSON.stringify(data)}\n\n`))
          expect(exit._tag).toBe(bySchema._tag)
          if (Result.isSuccess(exit) && Result.isSuccess(bySchema)) {
            const choice = bySchema.success.choices?.[0]
            const delta = choice?.index === 0 || choice?.index == null ? choice?.delta : undefined
            const text = [
              delta?.reasoning_content ?? delta?.reasoning ?? "",
              delta?.content ?? "",
              delta?.refusal ?? ""
            ]
              .join("")
            expect(ofType(exit.success, "item_delta").map((d) => d.delta_content).join("")).toBe(text)
          }
        }),
      { numRuns: 150 }
    ), 120_000)

  transcriptProperties(Providers.get("openai-chat"), [
    ["text-simple", recorded("openai-chat", "text-simple.sse")],
    ["tool-parallel", recorded("openai-chat", "tool-parallel.sse")],
    ["text-usage", own("openai-chat", "text-usage.sse")],
    ["tools-interleaved", own("openai-chat", "tools-interleaved.sse")],
    ["overloaded", own("openai-chat", "overloaded.sse")],
    ["content-filter", own("openai-chat", "content-filter.sse")],
    ["refusal", own("openai-chat", "refusal.sse")],
    ["truncated", own("openai-chat", "truncated.sse")]
  ])

  describe("openai-compatible", () => {
    transcriptProperties(Providers.get("openai-compatible"), [
      ["deepseek-thinking", recorded("openai-compatible", "deepseek-thinking.sse")],
      ["openrouter-midstream-error", recorded("openai-compatible", "openrouter-midstream-error.sse")],
      ["reasoning-details", own("openai-chat", "reasoning-details.sse")]
    ])
  })
})

describe("OpenAiChat.normalizeResponse", () => {
  it.effect("decodes a chat.completion response into the same final items", () =>
    Effect.gen(function*() {
      const events = yield* OpenAiChat.normalizeResponse(ownJson("openai-chat", "tools-interleaved.json"))
      const streamed = yield* run(own("openai-chat", "tools-interleaved.sse"))
      expect(finals(events)).toStrictEqual(finals(streamed))
      expect(done(events)).toMatchObject({
        status: "complete",
        finish_reason: "tool-calls",
        usage: { input: 80, output: 40 }
      })
    }))

  it.effect("turns an error body into a classified response_error", () =>
    Effect.gen(function*() {
      const events = yield* OpenAiChat.normalizeCompatibleResponse({ error: { message: "slow down", code: 429 } })
      expect(errors(events)).toMatchObject([{ type: "rate_limit", retryable: true, code: "429", status: 429 }])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "error" })
      expect(ofType(events, "response_start")[0]?.provider_id).toBe("openai-compatible")
    }))

  it.effect("fails with WireDecodeError for a body of the wrong shape", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(OpenAiChat.normalizeResponse({ choices: "nope" }))
      expect(error).toMatchObject({
        _tag: "WireDecodeError",
        provider: "openai-chat",
        line: 0,
        reason: "UnexpectedShape"
      })
    }))
})

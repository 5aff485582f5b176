import type { LanguageModelV4StreamPart } from "@ai-sdk/provider"
import { describe, expect, it } from "@effect/vitest"
import { ProviderError } from "@sluice/core"
import type { StreamEvent } from "@sluice/core"
import { StreamEvent as Events } from "@sluice/core"
import { jsonSchema, simulateReadableStream, streamText, tool } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { AiSdkStream } from "../src/index.js"

const usage = {
  inputTokens: { total: 10, noCache: 7, cacheRead: 3, cacheWrite: 0 },
  outputTokens: { total: 5, text: 3, reasoning: 2 }
}

const partsStream = (chunks: ReadonlyArray<LanguageModelV4StreamPart>) =>
  simulateReadableStream({ chunks: [...chunks], initialDelayInMs: null, chunkDelayInMs: null })

const mockModel = (chunks: ReadonlyArray<LanguageModelV4StreamPart>) =>
  new MockLanguageModelV4({ modelId: "mock-model", doStream: async () => ({ stream: partsStream(chunks) }) })

const collect = (stream: Stream.Stream<StreamEvent.StreamEvent, unknown>) =>
  Effect.map(Stream.runCollect(stream), (chunk) => [...chunk])

/** What a turn's events amount to. */
const summarize = (events: ReadonlyArray<StreamEvent.StreamEvent>) => {
  const finals = events.flatMap((e) => (e.payload.type === "item_done" ? [e.payload.final_item] : []))
  const done = events.flatMap((e) => (e.payload.type === "response_done" ? [e.payload] : []))
  const errors = events.flatMap((e) => (e.payload.type === "response_error" ? [e.payload.error] : []))
  const deltas = events.flatMap((e) => (e.payload.type === "item_delta" ? [e.payload.delta_content] : []))
  return { finals, done, errors, deltas, first: events[0]?.payload }
}

const isEvent = Schema.is(Events.StreamEvent)

describe("AiSdkStream with streamText", () => {
  it.effect("turns text, reasoning with signatures, a streamed tool call, its result and usage into StreamEvents", () =>
    Effect.gen(function*() {
      const model = mockModel([
        { type: "stream-start", warnings: [] },
        { type: "response-metadata", id: "r1", modelId: "mock-model-1" },
        { type: "reasoning-start", id: "r" },
        { type: "reasoning-delta", id: "r", delta: "think" },
        { type: "reasoning-delta", id: "r", delta: "", providerMetadata: { anthropic: { signature: "sig==" } } },
        { type: "reasoning-end", id: "r" },
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "Hel" },
        { type: "text-delta", id: "t", delta: "lo" },
        { type: "text-end", id: "t" },
        { type: "tool-input-start", id: "call_1", toolName: "add" },
        { type: "tool-input-delta", id: "call_1", delta: "{\"a\":" },
        { type: "tool-input-delta", id: "call_1", delta: "1}" },
        { type: "tool-input-end", id: "call_1" },
        { type: "tool-call", toolCallId: "call_1", toolName: "add", input: "{\"a\":1}" },
        { type: "finish", usage, finishReason: { unified: "tool-calls", raw: "tool_use" } }
      ])
      const result = streamText({
        model,
        prompt: "add",
        tools: {
          add: tool({
            inputSchema: jsonSchema<{ a: number }>({ type: "object" }),
            execute: async ({ a }) => ({ sum: a + 1 })
          })
        }
      })
      const events = yield* collect(AiSdkStream.fromStreamText(result, { providerId: "mock" }))
      expect(events.every(isEvent)).toBe(true)
      const { deltas, done, errors, finals, first } = summarize(events)
      expect(first).toMatchObject({ type: "response_start", provider_id: "mock" })
      expect(deltas).toStrictEqual(["think", "Hel", "lo", "{\"a\":", "1}"])
      expect(finals).toStrictEqual([
        {
          type: "reasoning",
          id: "item_0",
          content: "think",
          signature: "sig==",
          provider_metadata: { anthropic: { signature: "sig==" } }
        },
        { type: "message", id: "item_1", content: "Hello", origin: "agent" },
        { type: "function_call", id: "item_2", call_id: "call_1", name: "add", arguments: "{\"a\":1}" },
        { type: "function_call_output", id: "item_3", call_id: "call_1", output: "{\"sum\":2}", success: true }
      ])
      expect(errors).toStrictEqual([])
      expect(done).toHaveLength(1)
      expect(done[0]).toMatchObject({
        status: "complete",
        finish_reason: "tool-calls",
        usage: { input: 7, cacheRead: 3, cacheWrite: 0, output: 5, reasoning: 2, total: 15 }
      })
    }))

  it.effect("turns an error part into a classified response_error and ends the turn with status error", () =>
    Effect.gen(function*() {
      const model = mockModel([
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "par" },
        { type: "error", error: Object.assign(new Error("Too many requests"), { statusCode: 429, isRetryable: true }) }
      ])
      const result = streamText({ model, prompt: "x", onError: () => {} })
      const { done, errors, finals } = summarize(yield* collect(AiSdkStream.fromStreamText(result)))
      expect(errors.map((e) => [e.type, e.code, e.retryable, e.status])).toStrictEqual([[
        "rate_limit",
        "429",
        true,
        429
      ]])
      expect(finals).toStrictEqual([{ type: "message", id: "item_0", content: "par", origin: "agent" }])
      expect(done.map((d) => [d.status, d.finish_reason])).toStrictEqual([["error", "error"]])
    }))

  it.effect("turns a failed request (doStream rejects) into a response_error", () =>
    Effect.gen(function*() {
      const model = new MockLanguageModelV4({
        doStream: async () => {
          throw Object.assign(new Error("Overloaded"), { name: "AI_APICallError", statusCode: 529, isRetryable: true })
        }
      })
      const result = streamText({ model, prompt: "x", onError: () => {}, maxRetries: 0 })
      const { done, errors } = summarize(yield* collect(AiSdkStream.fromStreamText(result)))
      expect(errors.map((e) => [e.type, e.retryable, e.message])).toStrictEqual([[
        "provider_overloaded",
        true,
        "Overloaded"
      ]])
      expect(done.map((d) => d.status)).toStrictEqual(["error"])
    }))
})

describe("AiSdkStream provider-executed tools", () => {
  it.effect("a tool call and result with providerExecuted are provider_executed items", () =>
    Effect.gen(function*() {
      const stream = new ReadableStream({
        start: (controller) => {
          controller.enqueue({
            type: "tool-input-start",
            id: "srvtoolu_1",
            toolName: "web_search",
            providerExecuted: true
          })
          controller.enqueue({ type: "tool-input-delta", id: "srvtoolu_1", delta: "{\"query\":\"x\"}" })
          controller.enqueue({
            type: "tool-call",
            toolCallId: "srvtoolu_1",
            toolName: "web_search",
            input: "{\"query\":\"x\"}",
            providerExecuted: true
          })
          controller.enqueue({
            type: "tool-result",
            toolCallId: "srvtoolu_1",
            toolName: "web_search",
            result: [{ url: "https://a" }],
            providerExecuted: true
          })
          controller.enqueue({ type: "tool-call", toolCallId: "call_1", toolName: "lookup", input: "{}" })
          controller.enqueue({ type: "finish", finishReason: { unified: "tool-calls" }, usage: {} })
          controller.close()
        }
      })
      const { finals } = summarize(yield* collect(AiSdkStream.fromDoStream({ stream })))
      expect(
        finals.map((
          item
        ) => [
          item.type,
          "call_id" in item ? item.call_id : undefined,
          "provider_executed" in item ? item.provider_executed : undefined
        ])
      ).toStrictEqual([
        ["function_call", "srvtoolu_1", true],
        ["function_call_output", "srvtoolu_1", true],
        ["function_call", "call_1", undefined]
      ])
    }))
})

describe("AiSdkStream sources", () => {
  it.effect("source parts become the sources of the message open at the time, or of the next one", () =>
    Effect.gen(function*() {
      const stream = new ReadableStream({
        start: (controller) => {
          controller.enqueue({ type: "source", sourceType: "url", id: "s0", url: "https://a.example", title: "A" })
          controller.enqueue({ type: "text-start", id: "t" })
          controller.enqueue({ type: "text-delta", id: "t", delta: "Cited." })
          controller.enqueue({
            type: "source",
            sourceType: "document",
            id: "s1",
            mediaType: "application/pdf",
            title: "Report",
            filename: "r.pdf"
          })
          controller.enqueue({ type: "source", sourceType: "something-else", id: "s2" })
          controller.enqueue({ type: "text-end", id: "t" })
          controller.enqueue({ type: "finish", finishReason: { unified: "stop" }, usage: {} })
          controller.close()
        }
      })
      const { finals } = summarize(yield* collect(AiSdkStream.fromDoStream({ stream })))
      expect(finals).toStrictEqual([
        {
          type: "message",
          id: "item_0",
          content: "Cited.",
          origin: "agent",
          sources: [
            { kind: "url", url: "https://a.example", title: "A" },
            { kind: "document", title: "Report", filename: "r.pdf" }
          ]
        }
      ])
    }))
})

describe("AiSdkStream error parts: classified from body and status by the one classifier", () => {
  const classifiedOf = (error: unknown) =>
    Effect.gen(function*() {
      const stream = new ReadableStream({
        start: (controller) => {
          controller.enqueue({ type: "error", error })
          controller.close()
        }
      })
      const { errors } = summarize(yield* collect(AiSdkStream.fromDoStream({ stream })))
      return errors.map((e) => [e.type, e.retryable, e.code])
    })

  it.effect("reads the provider's body wherever the AI SDK put it", () =>
    Effect.gen(function*() {
      const quotaBody = {
        error: {
          message: "You exceeded your current quota.",
          type: "insufficient_quota",
          param: null,
          code: "insufficient_quota"
        }
      }
      const policyBody = {
        error: { message: "Rejected.", type: "invalid_request_error", param: null, code: "content_policy_violation" }
      }
      const cases: ReadonlyArray<readonly [string, unknown, ReadonlyArray<unknown>]> = [
        // an APICallError: the SDK calls a 429 retryable, the body says the quota is gone
        [
          "APICallError 429 insufficient_quota (data)",
          Object.assign(new Error("quota"), {
            name: "AI_APICallError",
            statusCode: 429,
            isRetryable: true,
            data: quotaBody
          }),
          ["rate_limit", false, "insufficient_quota"]
        ],
        [
          "APICallError 429 insufficient_quota (responseBody)",
          Object.assign(new Error("quota"), {
            statusCode: 429,
            isRetryable: true,
            responseBody: JSON.stringify(quotaBody)
          }),
          ["rate_limit", false, "insufficient_quota"]
        ],
        [
          "APICallError 400 content policy",
          Object.assign(new Error("x"), { statusCode: 400, isRetryable: false, data: policyBody }),
          ["content_blocked", false, "content_policy_violation"]
        ],
        // the raw provider objects older @ai-sdk/* and OpenAI-compatible providers put in the part: no statusCode
        [
          "Anthropic event: error, whole",
          { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
          ["provider_overloaded", true, "overloaded_error"]
        ],
        ["Anthropic error object, bare", { type: "overloaded_error", message: "Overloaded" }, [
          "provider_overloaded",
          true,
          "overloaded_error"
        ]],
        ["OpenAI-compatible error object", {
          message: "Rate limit reached",
          type: "requests",
          code: "rate_limit_exceeded"
        }, ["rate_limit", true, "rate_limit_exceeded"]],
        [
          "context window",
          {
            type: "error",
            error: { type: "invalid_request_error", message: "prompt is too long: 208973 tokens > 200000 maximum" }
          },
          ["api_error", false, ProviderError.contextLengthExceeded]
        ],
        ["Gemini error object", { error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } }, [
          "provider_overloaded",
          true,
          "UNAVAILABLE"
        ]],
        // nothing to read: the status and the SDK's own isRetryable decide
        ["no body", Object.assign(new Error("x"), { statusCode: 500, isRetryable: false }), ["api_error", false, "500"]]
      ]
      for (const [name, error, expected] of cases) {
        expect([name, ...(yield* classifiedOf(error))[0]!]).toStrictEqual([name, ...expected])
      }
    }))
})

describe("AiSdkStream with a model's doStream", () => {
  const call = { prompt: [{ role: "user" as const, content: [{ type: "text" as const, text: "x" }] }] }

  it.effect("reads V4 parts: deltas in `delta`, tool input as JSON text, Gemini thoughtSignature, usage and finish reason", () =>
    Effect.gen(function*() {
      const model = mockModel([
        { type: "stream-start", warnings: [] },
        { type: "response-metadata", id: "r1", modelId: "gemini-x" },
        { type: "text-start", id: "0", providerMetadata: { google: { thoughtSignature: "ts-text" } } },
        { type: "text-delta", id: "0", delta: "ok" },
        { type: "text-end", id: "0" },
        {
          type: "tool-call",
          toolCallId: "c1",
          toolName: "look",
          input: "{\"q\":1}",
          providerMetadata: { google: { thoughtSignature: "ts-call" } }
        },
        { type: "raw", rawValue: { anything: true } },
        { type: "finish", usage, finishReason: { unified: "stop", raw: "STOP" } }
      ])
      const { done, finals, first } = summarize(
        yield* collect(AiSdkStream.fromDoStream(yield* Effect.promise(() => model.doStream(call))))
      )
      expect(first).toMatchObject({ type: "response_start", model_id: "gemini-x", provider_id: "ai-sdk" })
      expect(finals).toStrictEqual([
        {
          type: "message",
          id: "item_0",
          content: "ok",
          origin: "agent",
          provider_metadata: { google: { thoughtSignature: "ts-text" }, thoughtSignature: "ts-text" }
        },
        {
          type: "function_call",
          id: "item_1",
          call_id: "c1",
          name: "look",
          arguments: "{\"q\":1}",
          provider_metadata: { google: { thoughtSignature: "ts-call" }, thoughtSignature: "ts-call" }
        }
      ])
      expect(done.map((d) => [d.status, d.finish_reason, d.usage?.total])).toStrictEqual([["complete", "stop", 15]])
    }))

  it.effect("keeps redacted and encrypted reasoning", () =>
    Effect.gen(function*() {
      const model = mockModel([
        { type: "reasoning-start", id: "a", providerMetadata: { anthropic: { redactedData: "opaque" } } },
        { type: "reasoning-end", id: "a" },
        { type: "reasoning-start", id: "b" },
        { type: "reasoning-delta", id: "b", delta: "sum" },
        {
          type: "reasoning-end",
          id: "b",
          providerMetadata: { openai: { itemId: "rs_1", reasoningEncryptedContent: "enc" } }
        },
        { type: "finish", usage, finishReason: { unified: "stop", raw: undefined } }
      ])
      const { finals } = summarize(
        yield* collect(AiSdkStream.fromDoStream(yield* Effect.promise(() => model.doStream(call))))
      )
      expect(finals).toMatchObject([
        { type: "reasoning", content: "", redacted: true, data: "opaque" },
        { type: "reasoning", content: "sum", encrypted_content: "enc" }
      ])
    }))

  it.effect("reports content-filter finishes as content_blocked, not retryable", () =>
    Effect.gen(function*() {
      const model = mockModel([{ type: "finish", usage, finishReason: { unified: "content-filter", raw: "SAFETY" } }])
      const { done, errors } = summarize(
        yield* collect(AiSdkStream.fromDoStream(yield* Effect.promise(() => model.doStream(call))))
      )
      expect(errors.map((e) => [e.type, e.retryable])).toStrictEqual([["content_blocked", false]])
      expect(done.map((d) => [d.status, d.finish_reason])).toStrictEqual([["error", "content-filter"]])
    }))

  it.effect("ends a stream without finish as truncated, closing open items", () =>
    Effect.gen(function*() {
      const { done, errors, finals } = summarize(
        yield* collect(
          Stream.make(
            { type: "tool-input-start", id: "c", toolName: "f" },
            { type: "tool-input-delta", id: "c", delta: "{\"a\"" }
          ).pipe(AiSdkStream.fromParts())
        )
      )
      expect(finals).toStrictEqual([{
        type: "function_call",
        id: "item_0",
        call_id: "c",
        name: "f",
        arguments: "{\"a\""
      }])
      expect(errors.map((e) => [e.code, e.retryable])).toStrictEqual([["stream_truncated", true]])
      expect(done.map((d) => d.status)).toStrictEqual(["error"])
    }))

  it.effect("ends an aborted stream with status aborted", () =>
    Effect.gen(function*() {
      const { done } = summarize(
        yield* collect(
          Stream.make({ type: "text-start", id: "t" }, { type: "abort", reason: "user" }).pipe(AiSdkStream.fromParts())
        )
      )
      expect(done.map((d) => [d.status, d.finish_reason])).toStrictEqual([["aborted", null]])
    }))

  it.effect("turns a stream that errors into a response_error", () =>
    Effect.gen(function*() {
      const stream = new ReadableStream<unknown>({
        pull: (controller) => controller.error(Object.assign(new Error("socket hang up"), { name: "TypeError" }))
      })
      const { done, errors } = summarize(yield* collect(AiSdkStream.fromDoStream({ stream })))
      expect(errors.map((e) => [e.type, e.code, e.message])).toStrictEqual([[
        "api_error",
        "TypeError",
        "socket hang up"
      ]])
      expect(done.map((d) => d.status)).toStrictEqual(["error"])
    }))

  it.effect("fails with AiSdkPartError naming a malformed part, after the events before it", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const error = yield* Stream.make({ type: "text-start", id: "t" }, { type: "text-delta", id: 7, delta: "x" }).pipe(
        AiSdkStream.fromParts(),
        Stream.runForEach((e) => Effect.sync(() => seen.push(e.type))),
        Effect.flip
      )
      expect(seen).toStrictEqual(["response_start", "item_start"])
      expect([error._tag, error.reason, error.partIndex, error.partType]).toStrictEqual([
        "AiSdkPartError",
        "InvalidPart",
        1,
        "text-delta"
      ])
      const late = yield* Stream.make({ type: "abort" }, { type: "text-start", id: "t" }).pipe(
        AiSdkStream.fromParts(),
        Stream.runDrain,
        Effect.flip
      )
      expect([late.reason, late.partIndex]).toStrictEqual(["PartAfterFinish", 1])
      const orphan = yield* Stream.make({ type: "tool-input-delta", id: "nope", delta: "{" }).pipe(
        AiSdkStream.fromParts(),
        Stream.runDrain,
        Effect.flip
      )
      expect([orphan.reason, orphan.message.includes("nope")]).toStrictEqual(["InvalidPart", true])
    }))
})

import { describe, expect, it } from "@effect/vitest"
import { StreamEvent } from "@sluice/core"
import * as AiError from "effect/ai/AiError"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Response from "effect/ai/Response"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { EffectAiStream } from "../src/index.js"

// A language model whose provider streams these encoded parts (then fails, when given).
const model = (parts: ReadonlyArray<Response.StreamPartEncoded>, failure?: AiError.AiError) =>
  LanguageModel.make({
    generateText: () => Effect.succeed([]),
    streamText: () =>
      failure === undefined
        ? Stream.fromIterable(parts)
        : Stream.concat(Stream.fromIterable(parts), Stream.fail(failure))
  })

const run = (parts: ReadonlyArray<Response.StreamPartEncoded>, failure?: AiError.AiError) =>
  Effect.gen(function*() {
    const service = yield* model(parts, failure)
    const events = yield* LanguageModel.streamText({ prompt: "hi" }).pipe(
      EffectAiStream.fromParts({ providerId: "mock" }),
      Stream.runCollect,
      Effect.provideService(LanguageModel.LanguageModel, service)
    )
    const all = events
    // every event is a valid StreamEvent
    for (const event of all) yield* Schema.decodeUnknownEffect(Schema.toType(StreamEvent.StreamEvent))(event)
    return all.map((event) => event.payload)
  })

const usage = { inputTokens: { total: 10 }, outputTokens: { total: 5 } }

describe("EffectAiStream.fromParts", () => {
  it.effect("text, reasoning and a source become items; finish ends the turn with its reason and usage", () =>
    Effect.gen(function*() {
      const payloads = yield* run([
        { type: "response-metadata", id: "r", modelId: "mock-model", timestamp: undefined },
        { type: "reasoning-start", id: "0" },
        { type: "reasoning-delta", id: "0", delta: "Hmm." },
        { type: "reasoning-end", id: "0" },
        { type: "text-start", id: "1" },
        { type: "text-delta", id: "1", delta: "Hello " },
        { type: "source", sourceType: "url", id: "s", url: "https://example.com/", title: "Example" },
        { type: "text-delta", id: "1", delta: "world" },
        { type: "text-end", id: "1" },
        { type: "finish", reason: "stop", usage }
      ])
      expect(payloads.map((payload) => payload.type)).toStrictEqual([
        "response_start",
        "item_start",
        "item_delta",
        "item_done",
        "item_start",
        "item_delta",
        "item_delta",
        "item_done",
        "response_done"
      ])
      expect(payloads[0]).toMatchObject({ model_id: "mock-model", provider_id: "mock" })
      expect(payloads[3]).toMatchObject({ final_item: { type: "reasoning", content: "Hmm." } })
      expect(payloads[7]).toMatchObject({
        final_item: {
          type: "message",
          content: "Hello world",
          origin: "agent",
          sources: [{ kind: "url", url: "https://example.com/", title: "Example" }]
        }
      })
      expect(payloads[8]).toMatchObject({ status: "complete", finish_reason: "stop", usage: { input: 10, output: 5 } })
    }))

  it.effect("tool parameters stream into a function call; a provider-executed call and its result keep the flag", () =>
    Effect.gen(function*() {
      // decoded parts as streamText passes them on for a toolkit's tools, built by hand
      const parts = [
        Response.makePart("tool-params-start", { id: "c1", name: "get_weather", providerExecuted: false }),
        Response.makePart("tool-params-delta", { id: "c1", delta: "{\"city\":" }),
        Response.makePart("tool-params-delta", { id: "c1", delta: "\"Paris\"}" }),
        Response.makePart("tool-params-end", { id: "c1" }),
        Response.makePart("tool-call", {
          id: "c1",
          name: "get_weather",
          params: { city: "Paris" },
          providerExecuted: false
        }),
        Response.makePart("tool-call", {
          id: "ws",
          name: "web_search",
          params: { query: "q" },
          providerExecuted: true
        }),
        Response.makePart("tool-result", {
          id: "ws",
          name: "web_search",
          result: { hits: 2 },
          encodedResult: { hits: 2 },
          isFailure: false,
          providerExecuted: true,
          preliminary: false
        }),
        Response.makePart("finish", { reason: "tool-calls", usage: new Response.Usage({ ...usage }) })
      ]
      const events = yield* Stream.fromIterable(parts).pipe(EffectAiStream.fromParts(), Stream.runCollect)
      const payloads = events.map((event) => event.payload)
      const done = payloads.flatMap((payload) => (payload.type === "item_done" ? [payload.final_item] : []))
      expect(done).toMatchObject([
        { type: "function_call", call_id: "c1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" },
        {
          type: "function_call",
          call_id: "ws",
          name: "web_search",
          arguments: "{\"query\":\"q\"}",
          provider_executed: true
        },
        { type: "function_call_output", call_id: "ws", output: "{\"hits\":2}", success: true, provider_executed: true }
      ])
      expect(done[0]).not.toHaveProperty("provider_executed")
      expect(payloads.at(-1)).toMatchObject({ type: "response_done", finish_reason: "tool-calls" })
    }))

  it.effect("an error part, a failed stream and a stream without finish all end the turn with an error", () =>
    Effect.gen(function*() {
      const failed = yield* run(
        [{ type: "text-start", id: "1" }, { type: "text-delta", id: "1", delta: "Hal" }],
        AiError.make({
          module: "Mock",
          method: "streamText",
          reason: new AiError.UnknownError({ description: "the connection dropped" })
        })
      )
      expect(failed.map((payload) => payload.type)).toStrictEqual([
        "response_start",
        "item_start",
        "item_delta",
        "response_error",
        "item_done",
        "response_done"
      ])
      expect(failed[3]).toMatchObject({
        error: { code: "UnknownError", message: "Mock.streamText: the connection dropped" }
      })
      expect(failed.at(-1)).toMatchObject({ status: "error" })
      const truncated = yield* run([{ type: "text-start", id: "1" }])
      expect(truncated.find((payload) => payload.type === "response_error")).toMatchObject({
        error: { code: "stream_truncated", retryable: true }
      })
      const errorPart = yield* run([{ type: "error", error: { message: "overloaded" } }])
      expect(errorPart.map((payload) => payload.type)).toStrictEqual([
        "response_start",
        "response_error",
        "response_done"
      ])
    }))
})

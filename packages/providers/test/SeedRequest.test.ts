/**
 * The first design's request rules for every provider's request (docs/generation.md#requests):
 * temperature bounded 0-2 (a typed error naming the field), a tool's `parameters`
 * defaulting to `{}`, and the non-streaming request when `streaming === false`, sent
 * live to a loopback server that answers with each provider's non-streaming JSON
 * (test/fixtures/<provider>/<name>.json, the same content as the `.sse` of that name;
 * their sources are in each folder's FIXTURES.md).
 */
import { describe, expect, it } from "@effect/vitest"
import { Summary, Turn } from "@sluice/accumulator"
import type { StreamEvent } from "@sluice/core"
import { Sse } from "@sluice/core"
import { drive, fixture, serve } from "@sluice/testing/providers"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { LlmRequest, ProviderClient, Providers } from "../src/index.js"
import type { ProviderName } from "../src/ProviderName.js"

const providers: ReadonlyArray<ProviderName> = [
  "openai-chat",
  "openai-compatible",
  "openai-responses",
  "anthropic",
  "gemini"
]

const options = { apiKey: "key", baseUrl: "http://127.0.0.1:1" }

const client = (provider: ProviderName, baseUrl: string) =>
  ProviderClient.make({
    provider,
    apiKeys: [Redacted.make("key-a")],
    baseUrl,
    retry: { maxRetries: 0 }
  }).pipe(Effect.provide(FetchHttpClient.layer))

const summaryOf = (events: ReadonlyArray<StreamEvent.StreamEvent>) =>
  Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(events)))

/** The tools of a wire body, whatever the provider calls them. */
const toolSchemas = (provider: ProviderName, body: Record<string, unknown>): unknown => {
  const tools = body.tools as ReadonlyArray<Record<string, unknown>>
  switch (provider) {
    case "anthropic":
      return tools.map((tool) => tool.input_schema)
    case "gemini":
      return (tools[0]?.functionDeclarations as ReadonlyArray<Record<string, unknown>>).map((tool) => tool.parameters)
    case "openai-responses":
      return tools.map((tool) => tool.parameters)
    default:
      return tools.map((tool) => (tool.function as Record<string, unknown>).parameters)
  }
}

describe("LlmRequest rules (docs/generation.md)", () => {
  describe("temperature is bounded 0-2 for every provider", () => {
    for (const provider of providers) {
      it(`${provider}: 0 and 2 are sent, -0.1 and 2.1 are a LlmRequestError naming temperature`, () => {
        for (const temperature of [0, 1.3, 2]) {
          const wire = Providers.encodeChecked(provider, LlmRequest.prompt("m", "hi", { temperature }), options)
          expect(Result.isSuccess(wire)).toBe(true)
          if (Result.isFailure(wire)) return
          const body = wire.success.body
          const sent = provider === "gemini"
            ? (body.generationConfig as Record<string, unknown>).temperature
            : body.temperature
          expect(sent).toBe(temperature)
        }
        for (const temperature of [-0.1, 2.1, Number.NaN, Number.POSITIVE_INFINITY]) {
          const wire = Providers.encodeChecked(provider, LlmRequest.prompt("m", "hi", { temperature }), options)
          expect(Result.isFailure(wire)).toBe(true)
          if (Result.isSuccess(wire)) return
          expect(wire.failure._tag).toBe("LlmRequestError")
          expect(wire.failure.field).toBe("temperature")
          expect(wire.failure.message).toContain("from 0 to 2")
        }
      })
    }

    it.effect("the live client fails the stream with the typed error and sends nothing", () =>
      Effect.gen(function*() {
        const server = yield* serve([])
        for (const provider of providers) {
          const live = yield* client(provider, server.url)
          const exit = yield* Effect.exit(
            Stream.runDrain(live.stream(LlmRequest.prompt("m", "hi", { temperature: 3 })))
          )
          expect(Exit.isFailure(exit)).toBe(true)
          const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
          expect(error?._tag === "Fail" ? error.error : undefined).toMatchObject({
            _tag: "LlmRequestError",
            field: "temperature"
          })
        }
        expect(server.requests()).toHaveLength(0)
      }), 30_000)

    it("checkResult: the same rules for a typed request, its conversation taken as it is", () => {
      const bad = LlmRequest.checkResult(LlmRequest.prompt("m", "hi", { temperature: 2.5 }))
      expect(Result.isFailure(bad) ? bad.failure.field : undefined).toBe("temperature")
      const request: LlmRequest.LlmRequest = {
        model: "m",
        messages: [{ _tag: "user", text: "hi" }],
        tools: [LlmRequest.tool("now", { description: "the time" })],
        temperature: 0.2
      }
      const good = LlmRequest.checkResult(request)
      expect(Result.isSuccess(good) ? good.success : undefined).toStrictEqual({
        ...request,
        tools: [{ name: "now", description: "the time", parameters: {} }]
      })
      if (Result.isSuccess(good)) expect(good.success.messages).toBe(request.messages)
    })

    it("other fields are named by their path", () => {
      const bad = LlmRequest.validateResult({ model: "m", messages: [], tools: [{ name: 1 }] })
      expect(Result.isFailure(bad) ? bad.failure.field : undefined).toBe("tools[0].name")
      const max = LlmRequest.validateResult({ model: "m", messages: [], maxTokens: 0 })
      expect(Result.isFailure(max) ? max.failure.field : undefined).toBe("maxTokens")
    })
  })

  describe("a tool's parameters default to {}", () => {
    it("decoding a request (JSON) without parameters gives {}", () => {
      const decoded = Schema.decodeUnknownSync(LlmRequest.LlmRequest)({
        model: "m",
        messages: [{ _tag: "user", text: "hi" }],
        tools: [{ name: "now", description: "the time" }, { name: "echo", parameters: { type: "object" } }]
      })
      expect(decoded.tools?.map((tool) => tool.parameters)).toStrictEqual([{}, { type: "object" }])
      expect(LlmRequest.tool("now")).toStrictEqual({ name: "now", parameters: {} })
    })

    for (const provider of providers) {
      it(`${provider}: a tool without parameters is sent with the empty schema`, () => {
        // a caller outside TypeScript leaves `parameters` out
        const untyped: unknown = { model: "m", messages: [{ _tag: "user", text: "hi" }], tools: [{ name: "now" }] }
        const checked = Providers.encodeChecked(provider, untyped, options)
        expect(Result.isSuccess(checked) ? toolSchemas(provider, checked.success.body) : undefined).toStrictEqual([{}])
        // and `encode` itself fills it for a value that skipped validation
        const wire = Providers.encode(provider, untyped as LlmRequest.LlmRequest, options)
        expect(toolSchemas(provider, wire.body)).toStrictEqual([{}])
      })
    }
  })

  describe("streaming === false sends the non-streaming request", () => {
    it("each provider's non-streaming wire form", () => {
      const request = LlmRequest.prompt("gemini-2.5-flash", "hi", { streaming: false })
      for (const provider of providers) {
        const streamed = Providers.encode(provider, { ...request, streaming: true }, options)
        const wire = Providers.encode(provider, request, options)
        expect(wire.body.stream).toBeUndefined()
        expect(wire.body.stream_options).toBeUndefined()
        expect(wire.headers.accept).toBe("application/json")
        expect(Providers.isNonStreaming(request)).toBe(true)
        if (provider === "gemini") {
          expect(streamed.url).toBe("http://127.0.0.1:1/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
          expect(wire.url).toBe("http://127.0.0.1:1/models/gemini-2.5-flash:generateContent")
        } else {
          expect(streamed.body.stream).toBe(true)
          expect(wire.url).toBe(streamed.url)
        }
      }
    })

    const cases: ReadonlyArray<readonly [ProviderName, string]> = [
      ["openai-chat", "openai-chat/tools-interleaved"],
      ["openai-compatible", "openai-chat/reasoning-details"],
      ["openai-responses", "openai-responses/parallel-tools"],
      ["anthropic", "anthropic/thinking-tools"],
      ["gemini", "gemini/thought-signature-text"]
    ]
    for (const [provider, name] of cases) {
      it.effect(
        `${provider}: the JSON answer (${name}.json) gives the turn its stream (${name}.sse) gives`,
        () =>
          Effect.gen(function*() {
            const server = yield* serve([{ _tag: "status", status: 200, body: fixture(`${name}.json`) }])
            const live = yield* client(provider, server.url)
            const request = LlmRequest.prompt("m", "hi", { streaming: false })
            const { exit } = yield* drive(Stream.runCollect(live.stream(request)))
            const events = yield* exit
            const streamed = yield* Stream.make(new TextEncoder().encode(fixture(`${name}.sse`))).pipe(
              Sse.decode(),
              Providers.get(provider).normalize(),
              Stream.runCollect
            )
            const summary = summaryOf(events)
            const expected = summaryOf(streamed)
            expect(summary.status).toBe(expected.status)
            expect(summary.text).toBe(expected.text)
            expect(summary.toolCalls.map((call) => [call.name, call.arguments])).toStrictEqual(
              expected.toolCalls.map((call) => [call.name, call.arguments])
            )
            expect(summary.usage).toStrictEqual(expected.usage)
            const sent = server.requests()
            expect(sent).toHaveLength(1)
            expect((sent[0]?.body as Record<string, unknown>).stream).toBeUndefined()
            expect(sent[0]?.headers.accept).toBe("application/json")
          }),
        30_000
      )
    }

    it.effect("a non-streaming error answer (429) is retried like a streaming one", () =>
      Effect.gen(function*() {
        const server = yield* serve([
          {
            _tag: "status",
            status: 429,
            headers: { "retry-after": "1" },
            body: JSON.stringify({ type: "error", error: { type: "rate_limit_error", message: "slow down" } })
          },
          { _tag: "status", status: 200, body: fixture("anthropic/thinking-tools.json") }
        ])
        const live = yield* ProviderClient.make({
          provider: "anthropic",
          apiKeys: [Redacted.make("key-a"), Redacted.make("key-b")],
          baseUrl: server.url
        }).pipe(Effect.provide(FetchHttpClient.layer))
        const { delays, exit } = yield* drive(
          Stream.runCollect(live.stream(LlmRequest.prompt("m", "hi", { streaming: false })))
        )
        const events = yield* exit
        expect(delays).toStrictEqual([1000])
        expect(summaryOf(events).status).toBe("complete")
        expect(server.requests().map((sent) => sent.headers["x-api-key"])).toStrictEqual(["key-a", "key-b"])
      }), 30_000)

    it.effect("a 200 whose body is not JSON fails with WireDecodeError", () =>
      Effect.gen(function*() {
        const server = yield* serve([{ _tag: "status", status: 200, body: "<html>" }])
        const live = yield* client("openai-chat", server.url)
        const { exit } = yield* drive(
          Stream.runDrain(live.stream(LlmRequest.prompt("m", "hi", { streaming: false })))
        )
        expect(Exit.isFailure(exit)).toBe(true)
        const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
        expect(reason?._tag === "Fail" ? reason.error : undefined).toMatchObject({
          _tag: "WireDecodeError",
          reason: "InvalidJson",
          line: 0
        })
      }), 30_000)
  })
})

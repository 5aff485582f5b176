import { describe, expect, it } from "@effect/vitest"
import type { ProviderName } from "@sluice/providers"
import { fixture, recorded, type Reply, serve } from "@sluice/testing/providers"
import * as AiError from "effect/ai/AiError"
import * as Chat from "effect/ai/Chat"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { SluiceLanguageModel } from "../src/index.js"

const apiKeys: readonly [Redacted.Redacted<string>] = [Redacted.make("key-a")]

/** The model on Sluice's live client against the loopback server, which answers with `replies`. */
const served = (provider: ProviderName.ProviderName, replies: ReadonlyArray<Reply>) =>
  Effect.gen(function*() {
    const server = yield* serve(replies)
    const model = SluiceLanguageModel.layer({
      provider,
      model: "test-model",
      apiKeys,
      baseUrl: server.url,
      retry: { maxRetries: 0 }
    }).pipe(Layer.provide(FetchHttpClient.layer))
    return { server, model }
  })

const sse = (body: string): Reply => ({ _tag: "sse", body })

/** A transcript of one text turn that answers `text`, in the wire format of `provider`. */
const answering = (provider: ProviderName.ProviderName, text: string): string => {
  const quoted = JSON.stringify(text)
  switch (provider) {
    case "anthropic":
      return [
        `event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
        `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
        `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${quoted}}}`,
        `event: content_block_stop\ndata: {"type":"content_block_stop","index":0}`,
        `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`,
        `event: message_stop\ndata: {"type":"message_stop"}`
      ].map((event) => `${event}\n\n`).join("")
    case "gemini":
      return `data: {"candidates":[{"content":{"role":"model","parts":[{"text":${quoted}}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":5,"totalTokenCount":10},"modelVersion":"m"}\n\n`
    case "openai-responses": {
      // the recorded answer with its text replaced: the first delta says it all
      let first = true
      return recorded("openai-responses/text-simple.sse")
        .replace(/"delta":"(?:[^"\\]|\\.)*"/g, () => {
          const delta = first ? quoted : "\"\""
          first = false
          return `"delta":${delta}`
        })
        .replace(/"text":"(?:[^"\\]|\\.)+"/g, `"text":${quoted}`)
    }
    default:
      return [
        `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":${quoted}},"finish_reason":null}]}`,
        `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":5,"total_tokens":10}}`,
        "data: [DONE]"
      ].map((event) => `${event}\n\n`).join("")
  }
}

interface Wire {
  readonly provider: ProviderName.ProviderName
  /** A turn of text. */
  readonly text: string
  readonly expectedText: string
  /** A turn that reasons, then calls `weather` (or `add` and `multiply`). */
  readonly toolTurn: string
  /** What the second request of a tool loop must carry back of the first turn. */
  readonly carried: (body: unknown) => void
  /** Where the request carries a JSON response format's schema. */
  readonly schemaAt: ReadonlyArray<string>
  /** Where the request carries the tool choice, and how a forced `weather` reads there. */
  readonly choiceAt: string
  readonly forcedWeather: unknown
}

const textOf = (value: unknown): string => JSON.stringify(value)

/** The value at `path` in a JSON body, if every step is an object key. */
const at = (value: unknown, path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>(
    (current, key) =>
      typeof current === "object" && current !== null && !Array.isArray(current)
        ? Object.entries(current).find(([name]) => name === key)?.[1]
        : undefined,
    value
  )

const wires: ReadonlyArray<Wire> = [
  {
    provider: "anthropic",
    schemaAt: ["output_config", "format", "schema"],
    choiceAt: "tool_choice",
    forcedWeather: { type: "tool", name: "weather" },
    text: fixture("anthropic/text-cache.sse"),
    expectedText: "Hello, wörld ☂.",
    toolTurn: recorded("anthropic/thinking-then-tool.sse"),
    carried: (body) => {
      const text = textOf(body)
      expect(text).toContain("\"type\":\"thinking\"")
      expect(text).toContain("\"signature\":\"EtYDCkYICxgCKkAVHEWR")
      expect(text).toContain("\"type\":\"tool_result\"")
      expect(text).toContain("sunny in Florence, Italy")
    }
  },
  {
    provider: "openai-chat",
    schemaAt: ["response_format", "json_schema", "schema"],
    choiceAt: "tool_choice",
    forcedWeather: { type: "function", function: { name: "weather" } },
    text: recorded("openai-chat/text-simple.sse"),
    expectedText: "",
    toolTurn: recorded("openai-chat/tool-parallel.sse"),
    carried: (body) => {
      const text = textOf(body)
      expect(text).toContain("\"role\":\"tool\"")
      expect(text).toContain("\"tool_calls\"")
    }
  },
  {
    provider: "openai-responses",
    schemaAt: ["text", "format", "schema"],
    choiceAt: "tool_choice",
    forcedWeather: { type: "function", name: "weather" },
    text: recorded("openai-responses/text-simple.sse"),
    expectedText: "",
    toolTurn: recorded("openai-responses/reasoning-summary-tool.sse"),
    carried: (body) => {
      const text = textOf(body)
      expect(text).toMatch(/"encrypted_content":"gAAAAAB/)
      expect(text).toContain("\"type\":\"function_call_output\"")
      expect(text).toContain("sunny in Florence, Italy")
    }
  },
  {
    provider: "gemini",
    schemaAt: ["generationConfig", "responseJsonSchema"],
    choiceAt: "toolConfig",
    forcedWeather: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["weather"] } },
    text: fixture("gemini/text-cached-usage.sse"),
    expectedText: "The sky looks blue because of Rayleigh scattering.",
    toolTurn: recorded("gemini/thought-then-tool.sse"),
    carried: (body) => {
      const text = textOf(body)
      expect(text).toMatch(/"thoughtSignature":"CiIBvj72/)
      expect(text).toContain("\"functionResponse\"")
      expect(text).toContain("sunny in Florence, Italy")
    }
  }
]

const Weather = Tool.make("weather", {
  description: "The weather of a place",
  parameters: Schema.Struct({ location: Schema.String }),
  success: Schema.String
})
const Add = Tool.make("add", {
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  success: Schema.Number
})
const Multiply = Tool.make("multiply", {
  parameters: Schema.Struct({ a: Schema.Number, b: Schema.Number }),
  success: Schema.Number
})
const Tools = Toolkit.make(Weather, Add, Multiply)
const handlers = Tools.toLayer({
  weather: ({ location }) => Effect.succeed(`sunny in ${location}`),
  add: ({ a, b }) => Effect.succeed(a + b),
  multiply: ({ a, b }) => Effect.succeed(a * b)
})

describe("SluiceLanguageModel", () => {
  for (const wire of wires) {
    describe(wire.provider, () => {
      it.effect("generateText: the turn's text, its finish and usage", () =>
        Effect.gen(function*() {
          const { model, server } = yield* served(wire.provider, [sse(wire.text)])
          const response = yield* LanguageModel.generateText({ prompt: "Hello" }).pipe(Effect.provide(model))
          if (wire.expectedText !== "") expect(response.text).toBe(wire.expectedText)
          expect(response.text.length).toBeGreaterThan(0)
          expect(response.finishReason).toBe("stop")
          expect(response.usage.outputTokens.total).toBeGreaterThan(0)
          expect(server.requests()).toHaveLength(1)
        }), 30_000)

      it.effect(
        "streamText: text deltas that add up to generateText's text, then finish",
        () =>
          Effect.gen(function*() {
            const { model } = yield* served(wire.provider, [sse(wire.text), sse(wire.text)])
            const [whole, parts] = yield* Effect.all([
              LanguageModel.generateText({ prompt: "Hello" }),
              Stream.runCollect(LanguageModel.streamText({ prompt: "Hello" }))
            ]).pipe(Effect.provide(model))
            const streamed = parts.flatMap((part) => part.type === "text-delta" ? [part.delta] : []).join("")
            expect(streamed).toBe(whole.text)
            expect(parts[0]?.type).toBe("response-metadata")
            expect(parts[parts.length - 1]?.type).toBe("finish")
          }),
        30_000
      )

      it.effect("generateObject: the schema is asked for and the answer decoded", () =>
        Effect.gen(function*() {
          const answer = "{\"city\":\"Paris\",\"days\":3}"
          const { model, server } = yield* served(wire.provider, [sse(answering(wire.provider, answer))])
          const Forecast = Schema.Struct({ city: Schema.String, days: Schema.Number })
          const exit = yield* Effect.exit(
            LanguageModel.generateObject({ prompt: "Forecast?", schema: Forecast, objectName: "forecast" }).pipe(
              Effect.provide(model)
            )
          )
          const body = server.requests()[0]?.body
          expect(at(body, wire.schemaAt)).toMatchObject({
            type: "object",
            properties: { city: { type: "string" } },
            required: ["city", "days"]
          })
          // the schema goes as the API's response format, not as an instruction
          expect(textOf(body)).not.toContain("JSON Schema")
          expect(Exit.isSuccess(exit) ? exit.value.value : exit).toStrictEqual({ city: "Paris", days: 3 })
        }), 30_000)

      it.effect("tool choice: a forced tool is forced, none keeps the tools described", () =>
        Effect.gen(function*() {
          const { model, server } = yield* served(wire.provider, [sse(wire.toolTurn), sse(wire.text)])
          yield* LanguageModel.generateText({
            prompt: "Weather in Florence?",
            toolkit: Tools,
            toolChoice: { tool: "weather" },
            disableToolCallResolution: true
          }).pipe(Effect.provide(model))
          yield* LanguageModel.generateText({ prompt: "Hello", toolkit: Tools, toolChoice: "none" }).pipe(
            Effect.provide(Layer.merge(model, handlers))
          )
          const [forced, none] = server.requests().map((request) => request.body)
          expect(at(forced, [wire.choiceAt])).toStrictEqual(wire.forcedWeather)
          expect(textOf(at(none, [wire.choiceAt]))).toMatch(/none|NONE/)
          expect(textOf(none)).toContain("multiply")
        }), 30_000)

      it.effect(
        "streamText without a toolkit: a call is a ToolNotFoundError part, the turn streams to its finish",
        () =>
          Effect.gen(function*() {
            const { model } = yield* served(wire.provider, [sse(wire.toolTurn), sse(wire.toolTurn)])
            const parts = yield* Stream.runCollect(LanguageModel.streamText({ prompt: "Weather?" })).pipe(
              Effect.provide(model)
            )
            const calls = wire.provider === "openai-chat" ? 2 : 1
            const errors = parts.flatMap((part) =>
              part.type === "error" && AiError.isAiError(part.error) ? [part.error.reason] : []
            )
            expect(errors).toHaveLength(calls)
            expect(errors[0]).toMatchObject({ _tag: "ToolNotFoundError", availableTools: [] })
            expect(parts.map((part): string => part.type)).not.toContain("tool-call")
            expect(parts[parts.length - 1]).toMatchObject({ type: "finish", reason: "tool-calls" })
            // deferred validation takes the calls as they came
            const deferred = yield* Stream.runCollect(
              LanguageModel.streamText({
                prompt: "Weather?",
                disableToolCallResolution: true,
                toolCallValidation: "deferred"
              })
            ).pipe(Effect.provide(model))
            const taken = deferred.flatMap((part) => part.type === "tool-call" ? [part.name] : [])
            expect(taken).toHaveLength(calls)
            expect(deferred.filter((part) => part.type === "error")).toHaveLength(0)
          }),
        30_000
      )

      it.effect(
        "a two-step toolkit loop (Chat): the second request carries the first step's reasoning and tool results",
        () =>
          Effect.gen(function*() {
            const { model, server } = yield* served(wire.provider, [sse(wire.toolTurn), sse(wire.text)])
            const chat = yield* Chat.empty
            const first = yield* chat.generateText({ prompt: "Weather in Florence?", toolkit: Tools }).pipe(
              Effect.provide(Layer.merge(model, handlers))
            )
            expect(first.toolCalls.length).toBeGreaterThan(0)
            expect(first.toolResults.length).toBe(first.toolCalls.length)
            const second = yield* chat.generateText({ prompt: [], toolkit: Tools }).pipe(
              Effect.provide(Layer.merge(model, handlers))
            )
            expect(second.text.length).toBeGreaterThan(0)
            const requests = server.requests()
            expect(requests).toHaveLength(2)
            wire.carried(requests[1]?.body)
          }),
        30_000
      )
    })
  }

  it.effect(
    "errors become AiErrors with the matching reason, retryable where Sluice says so",
    () =>
      Effect.gen(function*() {
        const cases: ReadonlyArray<readonly [number, string, string, boolean]> = [
          [429, "{\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}", "RateLimitError", true],
          [
            429,
            "{\"error\":{\"type\":\"insufficient_quota\",\"code\":\"insufficient_quota\",\"message\":\"quota\"}}",
            "QuotaExhaustedError",
            false
          ],
          [
            529,
            "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
            "InternalProviderError",
            true
          ],
          [
            400,
            "{\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad field\"}}",
            "InvalidRequestError",
            false
          ],
          [
            401,
            "{\"error\":{\"type\":\"authentication_error\",\"message\":\"bad key\"}}",
            "AuthenticationError",
            false
          ],
          [
            400,
            "{\"error\":{\"code\":\"content_filter\",\"message\":\"blocked by content_policy\"}}",
            "ContentPolicyError",
            false
          ]
        ]
        for (const [status, body, reason, retryable] of cases) {
          const { model } = yield* served("openai-chat", [{ _tag: "status", status, body }])
          const exit = yield* Effect.exit(LanguageModel.generateText({ prompt: "Hello" }).pipe(Effect.provide(model)))
          expect(Exit.isFailure(exit)).toBe(true)
          const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
          const failure = error !== undefined && error._tag === "Fail" ? error.error : undefined
          expect(AiError.isAiError(failure)).toBe(true)
          if (AiError.isAiError(failure)) {
            expect([status, failure.reason._tag]).toStrictEqual([status, reason])
            expect([reason, failure.isRetryable]).toStrictEqual([reason, retryable])
          }
        }
      }),
    60_000
  )

  it.effect(
    "a bad request option fails with an InvalidRequestError naming the field, nothing sent",
    () =>
      Effect.gen(function*() {
        const server = yield* serve([])
        const model = SluiceLanguageModel.layer({
          provider: "openai-chat",
          model: "test-model",
          temperature: 7,
          apiKeys,
          baseUrl: server.url
        }).pipe(Layer.provide(FetchHttpClient.layer))
        const exit = yield* Effect.exit(LanguageModel.generateText({ prompt: "Hello" }).pipe(Effect.provide(model)))
        const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
        const failure = error !== undefined && error._tag === "Fail" ? error.error : undefined
        expect(AiError.isAiError(failure) ? failure.reason : failure).toMatchObject({
          _tag: "InvalidRequestError",
          parameter: "temperature"
        })
        expect(server.requests()).toHaveLength(0)
      }),
    30_000
  )
})

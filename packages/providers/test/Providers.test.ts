import { describe, expect, it } from "@effect/vitest"
import { Turn } from "@sluice/accumulator"
import { Sse } from "@sluice/core"
import { fixture, type Loopback, recorded, serve } from "@sluice/testing/providers"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { type LlmRequest, ProviderClient, Providers, RoundTrip } from "../src/index.js"
import type { ProviderName } from "../src/ProviderName.js"

const weatherSchema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }

/** A conversation with every kind of message: text, a tool call, its result (in history form). */
const conversation: LlmRequest.LlmRequest = {
  model: "test-model",
  system: "Be brief.",
  messages: [
    { _tag: "user", text: "Weather in Paris?" },
    {
      _tag: "assistant",
      parts: [
        { _tag: "text", text: "Checking." },
        { _tag: "tool_call", id: "call_abc", name: "weather", arguments: "{\"city\":\"Paris\"}" }
      ]
    },
    { _tag: "tool", results: [{ callId: "hist_tool_abc", name: "weather", output: "{\"temp\":21}" }] }
  ],
  tools: [{ name: "weather", description: "Current weather", parameters: weatherSchema }],
  temperature: 0.2,
  maxTokens: 256
}

const replies: Record<ProviderName, string> = {
  "openai-chat": recorded("openai-chat/text-simple.sse"),
  "openai-compatible": recorded("openai-chat/text-simple.sse"),
  "openai-responses": recorded("openai-responses/text-simple.sse"),
  anthropic: recorded("anthropic/tool-parallel.sse"),
  gemini: recorded("gemini/tool-parallel.sse")
}

/** The base URL a provider's SDK would be given for the loopback server. */
const baseFor = (provider: ProviderName, url: string): string =>
  provider === "anthropic" ? url : provider === "gemini" ? `${url}/v1beta` : `${url}/v1`

/** Sends the request through the live client; returns the finished turn and what the server received. */
const send = (provider: ProviderName, server: Loopback, request: LlmRequest.LlmRequest) =>
  Effect.gen(function*() {
    const client = yield* ProviderClient.make({
      provider,
      apiKeys: [Redacted.make("secret-key")],
      baseUrl: baseFor(provider, server.url)
    }).pipe(Effect.provide(FetchHttpClient.layer))
    const events = yield* Stream.runCollect(client.stream(request))
    const turn = Result.getOrThrow(Turn.fromEvents(events))
    const received = server.requests().at(-1)!
    return { turn, received }
  })

const ask = (provider: ProviderName, request: LlmRequest.LlmRequest) =>
  Effect.gen(function*() {
    const server = yield* serve([{ _tag: "sse", body: replies[provider] }])
    return (yield* send(provider, server, request)).received
  })

describe("streaming requests, as the providers document them", () => {
  it.effect("OpenAI Chat: POST /v1/chat/completions, Bearer key, stream with include_usage", () =>
    Effect.gen(function*() {
      const received = yield* ask("openai-chat", { ...conversation, reasoning: { effort: "low" } })
      expect(received.method).toBe("POST")
      expect(received.url).toBe("/v1/chat/completions")
      expect(received.headers.authorization).toBe("Bearer secret-key")
      expect(received.headers["content-type"]).toBe("application/json")
      expect(received.body).toStrictEqual({
        model: "test-model",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Weather in Paris?" },
          {
            role: "assistant",
            content: "Checking.",
            tool_calls: [{
              id: "call_abc",
              type: "function",
              function: { name: "weather", arguments: "{\"city\":\"Paris\"}" }
            }]
          },
          { role: "tool", tool_call_id: "call_abc", content: "{\"temp\":21}" }
        ],
        tools: [{
          type: "function",
          function: { name: "weather", description: "Current weather", parameters: weatherSchema }
        }],
        temperature: 0.2,
        max_completion_tokens: 256,
        reasoning_effort: "low",
        stream: true,
        stream_options: { include_usage: true }
      })
    }))

  it.effect("OpenAI-compatible: the same request at the configured base URL, with max_tokens", () =>
    Effect.gen(function*() {
      const received = yield* ask("openai-compatible", conversation)
      expect(received.url).toBe("/v1/chat/completions")
      expect(received.body).toMatchObject({ max_tokens: 256, stream: true, stream_options: { include_usage: true } })
      expect(received.body).not.toHaveProperty("max_completion_tokens")
    }))

  it.effect("OpenAI Responses: POST /v1/responses, instructions, input items, stateless with encrypted reasoning", () =>
    Effect.gen(function*() {
      const received = yield* ask("openai-responses", { ...conversation, reasoning: { effort: "high" } })
      expect(received.url).toBe("/v1/responses")
      expect(received.headers.authorization).toBe("Bearer secret-key")
      expect(received.body).toStrictEqual({
        model: "test-model",
        instructions: "Be brief.",
        input: [
          { type: "message", role: "user", content: "Weather in Paris?" },
          { type: "message", role: "assistant", content: "Checking." },
          { type: "function_call", call_id: "call_abc", name: "weather", arguments: "{\"city\":\"Paris\"}" },
          { type: "function_call_output", call_id: "call_abc", output: "{\"temp\":21}" }
        ],
        tools: [{ type: "function", name: "weather", description: "Current weather", parameters: weatherSchema }],
        temperature: 0.2,
        max_output_tokens: 256,
        reasoning: { effort: "high", summary: "auto" },
        include: ["reasoning.encrypted_content"],
        store: false,
        stream: true
      })
    }))

  it.effect("Anthropic: POST /v1/messages, x-api-key and anthropic-version, content blocks, thinking budget", () =>
    Effect.gen(function*() {
      const { maxTokens: _, ...withoutMaxTokens } = conversation
      const received = yield* ask("anthropic", { ...withoutMaxTokens, reasoning: { budgetTokens: 2048 } })
      expect(received.url).toBe("/v1/messages")
      expect(received.headers["x-api-key"]).toBe("secret-key")
      expect(received.headers["anthropic-version"]).toBe("2023-06-01")
      expect(received.headers.authorization).toBeUndefined()
      expect(received.body).toStrictEqual({
        model: "test-model",
        max_tokens: 2048 + 4096,
        system: "Be brief.",
        messages: [
          { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
          {
            role: "assistant",
            content: [
              { type: "text", text: "Checking." },
              { type: "tool_use", id: "call_abc", name: "weather", input: { city: "Paris" } }
            ]
          },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "call_abc", content: "{\"temp\":21}" }] }
        ],
        tools: [{ name: "weather", description: "Current weather", input_schema: weatherSchema }],
        temperature: 0.2,
        thinking: { type: "enabled", budget_tokens: 2048 },
        stream: true
      })
    }))

  it.effect("Gemini: POST /v1beta/models/{model}:streamGenerateContent?alt=sse, x-goog-api-key, contents and functionResponse", () =>
    Effect.gen(function*() {
      const received = yield* ask("gemini", {
        ...conversation,
        model: "models/test-model",
        reasoning: { budgetTokens: 1024 }
      })
      expect(received.url).toBe("/v1beta/models/test-model:streamGenerateContent?alt=sse")
      expect(received.headers["x-goog-api-key"]).toBe("secret-key")
      expect(received.body).toStrictEqual({
        contents: [
          { role: "user", parts: [{ text: "Weather in Paris?" }] },
          {
            role: "model",
            parts: [{ text: "Checking." }, { functionCall: { name: "weather", args: { city: "Paris" } } }]
          },
          { role: "user", parts: [{ functionResponse: { name: "weather", response: { temp: 21 } } }] }
        ],
        systemInstruction: { parts: [{ text: "Be brief." }] },
        tools: [{
          functionDeclarations: [{ name: "weather", description: "Current weather", parameters: weatherSchema }]
        }],
        generationConfig: {
          temperature: 0.2,
          maxOutputTokens: 256,
          thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 }
        }
      })
    }))

  it("defaults, key and base URL variables per provider", () => {
    expect(Providers.defaultBaseUrl("openai-chat")).toBe("https://api.openai.com/v1")
    expect(Providers.defaultBaseUrl("anthropic")).toBe("https://api.anthropic.com")
    expect(Providers.defaultBaseUrl("gemini")).toBe("https://generativelanguage.googleapis.com/v1beta")
    expect(Providers.apiKeyVariable("openai-compatible")).toBe("OPENAI_API_KEY")
    expect(Providers.baseUrlVariable("openai-responses")).toBe("OPENAI_BASE_URL")
    expect(Providers.baseUrlVariable("gemini")).toBe("GEMINI_BASE_URL")
    const wire = Providers.encode("anthropic", LlmRequestOf("hi"), {
      apiKey: "k",
      baseUrl: "https://proxy.example/anthropic/"
    })
    expect(wire.url).toBe("https://proxy.example/anthropic/v1/messages")
    expect(wire.body).toMatchObject({ max_tokens: 4096 })
  })

  it("one registry: each wire API's entry holds its normalizer, encoder, base URL and variables", () => {
    const options = { apiKey: "k", baseUrl: "http://x" }
    const request = { ...LlmRequestOf("hi"), streaming: true }
    expect(Providers.all.map((provider) => provider.name)).toStrictEqual([
      "openai-chat",
      "openai-compatible",
      "openai-responses",
      "anthropic",
      "gemini"
    ])
    for (const provider of Providers.all) {
      expect(Providers.get(provider.name)).toBe(provider)
      expect(provider.defaultBaseUrl).toBe(Providers.defaultBaseUrl(provider.name))
      expect(provider.apiKeyVariable).toBe(Providers.apiKeyVariable(provider.name))
      expect(provider.baseUrlVariable).toBe(Providers.baseUrlVariable(provider.name))
      expect(provider.encodeStreaming(request, options)).toStrictEqual(
        Providers.encode(provider.name, request, options)
      )
    }
    expect(Providers.get("gemini").encodeStreaming(request, options).url).toContain(":streamGenerateContent")
  })

  it("tool arguments that are not a JSON object go to Anthropic and Gemini as _invalid_arguments, never dropped", () => {
    const request: LlmRequest.LlmRequest = {
      model: "m",
      messages: [{ _tag: "assistant", parts: [{ _tag: "tool_call", id: "toolu_1", name: "f", arguments: "{\"a\":" }] }]
    }
    const anthropic = Providers.encode("anthropic", request, { apiKey: "k", baseUrl: "http://x" })
    expect(anthropic.body.messages).toStrictEqual([
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_1", name: "f", input: { _invalid_arguments: "{\"a\":" } }]
      }
    ])
    const gemini = Providers.encode("gemini", request, { apiKey: "k", baseUrl: "http://x" })
    expect(gemini.body.contents).toStrictEqual([{
      role: "model",
      parts: [{ functionCall: { name: "f", args: { _invalid_arguments: "{\"a\":" } } }]
    }])
  })
})

const LlmRequestOf = (text: string): LlmRequest.LlmRequest => ({ model: "m", messages: [{ _tag: "user", text }] })

/** Streams a turn from a transcript, then sends the next request built from it; returns that request's body. */
const roundTrip = (
  provider: ProviderName,
  transcript: string,
  results: (turn: Turn.Turn) => ReadonlyArray<RoundTrip.ToolOutput>,
  next: ProviderName = provider
) =>
  Effect.gen(function*() {
    const server = yield* serve([{ _tag: "sse", body: transcript }, { _tag: "sse", body: replies[next] }])
    const first = LlmRequestOf("go")
    const { turn } = yield* send(provider, server, first)
    expect(turn.status).toBe("complete")
    const request = Result.getOrThrow(
      RoundTrip.continueWith(
        first,
        { provider: turn.providerId ?? provider, items: Turn.finalItems(turn) },
        results(turn)
      )
    )
    const { received } = yield* send(next, server, request)
    return { turn, body: received.body as Record<string, ReadonlyArray<unknown>> }
  })

const callIds = (turn: Turn.Turn) =>
  Turn.finalItems(turn).flatMap((
    item
  ) => (item.type === "function_call" ? [{ callId: item.call_id, name: item.name }] : []))

describe("round trips keep what the provider demands back", () => {
  it.effect("Anthropic: thinking with its signature and redacted_thinking with its data, in order, then tool_use and tool_result", () =>
    Effect.gen(function*() {
      const { body, turn } = yield* roundTrip(
        "anthropic",
        fixture("anthropic/thinking-tools.sse"),
        (turn) => callIds(turn).map(({ callId }) => ({ callId, output: `result of ${callId}` }))
      )
      const [user, assistant, results] = body.messages as ReadonlyArray<
        { role: string; content: ReadonlyArray<Record<string, unknown>> }
      >
      expect(user?.role).toBe("user")
      expect(assistant?.content.slice(0, 2)).toStrictEqual([
        { type: "thinking", thinking: "Two lookups, both at once.", signature: "EqQBCkgIARABGAIiQL2sig==" },
        { type: "redacted_thinking", data: "RWRhY3RlZCBibG9i" }
      ])
      expect(assistant?.content.filter((block) => block.type === "tool_use").map((block) => block.id)).toStrictEqual([
        "toolu_weather",
        "toolu_time",
        "toolu_ping"
      ])
      expect(results?.content.map((block) => [block.type, block.tool_use_id])).toStrictEqual(
        callIds(turn).map(({ callId }) => ["tool_result", callId])
      )
    }))

  it.effect("Anthropic: a real redacted_thinking block goes back byte for byte", () =>
    Effect.gen(function*() {
      const transcript = recorded("anthropic/redacted-thinking.sse")
      const data = /"redacted_thinking","data":"([^"]+)"/.exec(transcript)?.[1]
      const { body } = yield* roundTrip("anthropic", transcript, () => [])
      const assistant = (body.messages as ReadonlyArray<{ content: ReadonlyArray<Record<string, unknown>> }>)[1]
      expect(data).toBeDefined()
      expect(assistant?.content[0]).toStrictEqual({ type: "redacted_thinking", data })
    }))

  it.effect("Gemini: thoughtSignature on the functionCall part it came on, functionResponse by name", () =>
    Effect.gen(function*() {
      const transcript = recorded("gemini/thought-then-tool.sse")
      const signature = /"thoughtSignature": "([^"]+)"/.exec(transcript)?.[1]
      const { body } = yield* roundTrip(
        "gemini",
        transcript,
        (turn) => callIds(turn).map(({ callId }) => ({ callId, output: "{\"temp\":18}" }))
      )
      const [, model, response] = body.contents as ReadonlyArray<
        { role: string; parts: ReadonlyArray<Record<string, unknown>> }
      >
      expect(signature).toBeDefined()
      expect(model?.role).toBe("model")
      expect(model?.parts[0]).toMatchObject({ thought: true })
      expect(model?.parts.at(-1)).toStrictEqual({
        functionCall: { name: "weather", args: { location: "Florence, Italy" } },
        thoughtSignature: signature
      })
      expect(response).toStrictEqual({
        role: "user",
        parts: [{ functionResponse: { name: "weather", response: { temp: 18 } } }]
      })
    }))

  it.effect("Gemini: thoughtSignature on a text part stays on that text part", () =>
    Effect.gen(function*() {
      const { body } = yield* roundTrip("gemini", fixture("gemini/thought-signature-text.sse"), () => [])
      const model = (body.contents as ReadonlyArray<{ parts: ReadonlyArray<unknown> }>)[1]
      expect(model?.parts).toStrictEqual([
        { text: "**Weighing options**\n\nThe user wants a short answer.", thought: true },
        { text: "Use a hash map.", thoughtSignature: "EsQBCsEBAdHtim9" }
      ])
    }))

  it.effect("OpenAI Responses: the reasoning item with its id and encrypted_content, before the message", () =>
    Effect.gen(function*() {
      const { body } = yield* roundTrip(
        "openai-responses",
        fixture("openai-responses/reasoning-encrypted.sse"),
        () => []
      )
      expect(body.include).toStrictEqual(["reasoning.encrypted_content"])
      expect(body.input?.slice(1)).toStrictEqual([
        {
          type: "reasoning",
          id: "rs_1",
          summary: [{
            type: "summary_text",
            text: "**Planning**\n\nCompare the two options.\n\n**Answer**\n\nOption B is cheaper."
          }],
          encrypted_content: "gAAAAABo_encrypted_reasoning_blob=="
        },
        { type: "message", role: "assistant", content: "Option B costs less over five years." }
      ])
    }))

  it.effect("OpenAI Responses: function calls and their outputs by call_id", () =>
    Effect.gen(function*() {
      const { body, turn } = yield* roundTrip(
        "openai-responses",
        fixture("openai-responses/parallel-tools.sse"),
        (turn) => callIds(turn).map(({ callId }) => ({ callId, output: "ok" }))
      )
      const calls = callIds(turn)
      expect(calls.length).toBeGreaterThan(1)
      const input = body.input as ReadonlyArray<Record<string, unknown>>
      expect(input.filter((item) => item.type === "function_call").map((item) => item.call_id)).toStrictEqual(
        calls.map((c) => c.callId)
      )
      expect(input.filter((item) => item.type === "function_call_output")).toStrictEqual(
        calls.map(({ callId }) => ({ type: "function_call_output", call_id: callId, output: "ok" }))
      )
    }))

  it.effect("another provider's reasoning and signatures are left out; text and tool calls carry over", () =>
    Effect.gen(function*() {
      const { body } = yield* roundTrip(
        "anthropic",
        fixture("anthropic/thinking-tools.sse"),
        (turn) => callIds(turn).map(({ callId }) => ({ callId: `hist_tool_${callId}`, output: "done" })),
        "openai-chat"
      )
      const messages = body.messages as ReadonlyArray<Record<string, unknown>>
      expect(JSON.stringify(messages)).not.toContain("EqQBCkgIARABGAIiQL2sig==")
      expect(JSON.stringify(messages)).not.toContain("RWRhY3RlZCBibG9i")
      expect(messages[1]).toMatchObject({
        role: "assistant",
        tool_calls: [{ id: "toolu_weather" }, { id: "toolu_time" }, { id: "toolu_ping" }]
      })
      expect(messages.slice(2).map((message) => message.tool_call_id)).toStrictEqual([
        "toolu_weather",
        "toolu_time",
        "toolu_ping"
      ])
    }))

  it.effect("hosted tool items go back to their provider as they came: Anthropic server_tool_use and its result, Responses web_search_call", () =>
    Effect.gen(function*() {
      const next = (provider: ProviderName, transcript: string) =>
        Effect.gen(function*() {
          const events = yield* Stream.make(new TextEncoder().encode(transcript)).pipe(
            Sse.decode(),
            Providers.get(provider).normalize(),
            Stream.runCollect
          )
          const turn = Result.getOrThrow(Turn.fromEvents(events))
          const request = Result.getOrThrow(
            RoundTrip.continueWith(LlmRequestOf("go"), { provider, items: Turn.finalItems(turn) })
          )
          return Providers.encode(provider, request, { apiKey: "k", baseUrl: "http://x" }).body
        })
      const anthropic = yield* next("anthropic", fixture("anthropic/server-tool.sse"))
      expect(anthropic.messages).toStrictEqual([
        { role: "user", content: [{ type: "text", text: "go" }] },
        {
          role: "assistant",
          content: [
            { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "sluice gates" } },
            {
              type: "web_search_tool_result",
              tool_use_id: "srvtoolu_1",
              content: [{
                type: "web_search_result",
                title: "Sluice",
                url: "https://example.com/sluice",
                encrypted_content: "ZW5j",
                page_age: null
              }]
            },
            { type: "text", text: "A sluice is a water channel." }
          ]
        }
      ])
      const responses = yield* next("openai-responses", fixture("openai-responses/web-search-citation.sse"))
      expect(responses.input).toStrictEqual([
        { type: "message", role: "user", content: "go" },
        { id: "ws_1", type: "web_search_call", status: "completed", action: { type: "search", query: "sluice gate" } },
        { type: "message", role: "assistant", content: "A sluice is a water channel." }
      ])
      const elsewhere = Providers.encode(
        "gemini",
        Result.getOrThrow(
          RoundTrip.continueWith(LlmRequestOf("go"), {
            provider: "anthropic",
            items: [{
              type: "function_call",
              id: "i",
              call_id: "srvtoolu_1",
              name: "web_search",
              arguments: "{}",
              provider_metadata: { server_tool: true, block_type: "server_tool_use" }
            }]
          })
        ),
        { apiKey: "k", baseUrl: "http://x" }
      )
      expect(elsewhere.body.contents).toStrictEqual([{ role: "user", parts: [{ text: "go" }] }])
    }))

  it.effect("Anthropic compaction goes back as its compaction block, before the text, and nowhere else", () =>
    Effect.gen(function*() {
      const events = yield* Stream.make(new TextEncoder().encode(fixture("anthropic/compaction.sse"))).pipe(
        Sse.decode(),
        Providers.get("anthropic").normalize(),
        Stream.runCollect
      )
      const turn = Result.getOrThrow(Turn.fromEvents(events))
      const request = Result.getOrThrow(
        RoundTrip.continueWith(LlmRequestOf("go"), { provider: "anthropic", items: Turn.finalItems(turn) })
      )
      const summary = "## Summary\nThe user asked for the capital of Peru; it is Lima. Pending: its population."
      expect(Providers.encode("anthropic", request, { apiKey: "k", baseUrl: "http://x" }).body.messages)
        .toStrictEqual([
          { role: "user", content: [{ type: "text", text: "go" }] },
          {
            role: "assistant",
            content: [
              { type: "compaction", content: summary },
              { type: "text", text: "Lima has about 10 million people." }
            ]
          }
        ])
      // another provider cannot read Anthropic's block: it is left out, as hosted tool items are
      const openai = Providers.encode("openai-chat", request, { apiKey: "k", baseUrl: "http://x" }).body.messages
      expect(JSON.stringify(openai)).not.toContain("compaction")
    }))

  it("a tool result for a call the turn did not make is a RoundTripError naming it", () => {
    const result = RoundTrip.toolResults({ provider: "anthropic", items: [] }, [{ callId: "toolu_x", output: "" }])
    expect(Result.isFailure(result) && result.failure).toMatchObject({ _tag: "RoundTripError", callId: "toolu_x" })
  })
})

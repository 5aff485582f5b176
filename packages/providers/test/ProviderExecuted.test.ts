import { describe, expect, it } from "@effect/vitest"
import { Summary, Turn } from "@sluice/accumulator"
import { OutputItem } from "@sluice/core"
import type { StreamEvent } from "@sluice/core"
import { hostedToolTranscripts } from "@sluice/testing/providers"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { type LlmRequest, Providers, RoundTrip } from "../src/index.js"
import { finals, own, recorded, runText } from "./support/normalizerHarness.js"

const turnOf = (events: ReadonlyArray<StreamEvent.StreamEvent>) => Result.getOrThrow(Turn.fromEvents(events))

describe("provider-executed tool calls", () => {
  for (const [provider, name, text, tools] of hostedToolTranscripts) {
    it.effect(`${provider} ${name}: marked provider_executed, listed apart from the calls to run, not a tool-calls finish`, () =>
      Effect.gen(function*() {
        const events = yield* runText(Providers.get(provider).normalize, text)
        const items = finals(events)
        const calls = items.filter((item) => item.type === "function_call")
        expect(calls.length).toBeGreaterThan(0)
        expect(calls.every(OutputItem.isProviderToolCall)).toBe(true)
        // results the provider reported are its own too
        for (const item of items) if (item.type === "function_call_output") expect(item.provider_executed).toBe(true)
        const summary = Summary.fromTurn(turnOf(events))
        expect(summary.toolCalls).toStrictEqual([])
        expect([...new Set(summary.providerToolCalls.map((call) => call.name))].sort()).toStrictEqual([...tools].sort())
        expect(summary.finishReason).not.toBe("tool-calls")
      }))
  }

  it.effect("Anthropic code execution: each server_tool_use is answered by its *_code_execution_tool_result", () =>
    Effect.gen(function*() {
      const items = finals(
        yield* runText(Providers.get("anthropic").normalize, recorded("anthropic", "code-execution.sse"))
      )
      const calls = items.filter(OutputItem.isProviderToolCall).map((call) => call.call_id)
      const results = items.flatMap((
        item
      ) => (item.type === "function_call_output" ? [[item.call_id, item.provider_metadata?.block_type]] : []))
      expect(results.map(([callId]) => callId)).toStrictEqual(calls)
      expect(new Set(results.map(([, type]) => type))).toStrictEqual(
        new Set(["text_editor_code_execution_tool_result", "bash_code_execution_tool_result"])
      )
    }))

  it.effect("Gemini code execution: executableCode is a code_execution call, codeExecutionResult its output, both sent back as they came", () =>
    Effect.gen(function*() {
      const events = yield* runText(Providers.get("gemini").normalize, own("gemini", "code-execution.sse"))
      const items = finals(events)
      expect(items.map((item) => item.type)).toStrictEqual([
        "message",
        "function_call",
        "function_call_output",
        "message"
      ])
      const [, call, result] = items
      expect(call).toMatchObject({
        type: "function_call",
        name: "code_execution",
        arguments: JSON.stringify({ language: "PYTHON", code: "print(sum(range(1, 101)))\n" }),
        provider_executed: true
      })
      expect(result).toMatchObject({
        type: "function_call_output",
        output: "5050\n",
        success: true,
        provider_executed: true
      })
      expect(
        call?.type === "function_call" && result?.type === "function_call_output" && result.call_id === call.call_id
      ).toBe(true)
      const first: LlmRequest.LlmRequest = { model: "m", messages: [{ _tag: "user", text: "go" }] }
      const next = Result.getOrThrow(
        RoundTrip.continueWith(first, { provider: "gemini", items: Turn.finalItems(turnOf(events)) })
      )
      expect(Providers.encode("gemini", next, { apiKey: "k", baseUrl: "http://x" }).body.contents).toStrictEqual([
        { role: "user", parts: [{ text: "go" }] },
        {
          role: "model",
          parts: [
            { text: "I'll compute it with code." },
            {
              executableCode: { language: "PYTHON", code: "print(sum(range(1, 101)))\n" },
              thoughtSignature: "c2lnLWNvZGU="
            },
            { codeExecutionResult: { outcome: "OUTCOME_OK", output: "5050\n" } },
            { text: "The sum of 1 to 100 is 5050." }
          ]
        }
      ])
    }))

  const responsesHosted = [
    ...["code-interpreter", "image-generation", "file-search", "web-search"].map((name) =>
      [`recorded ${name}`, recorded("openai-responses", `${name}.sse`)] as const
    ),
    ["hosted-tools", own("openai-responses", "hosted-tools.sse")] as const,
    ["recorded shell-container", own("openai-responses", "vercel-shell-container.sse")] as const
  ]
  for (const [name, text] of responsesHosted) {
    it.effect(`OpenAI Responses ${name}: each hosted tool item goes back whole, as the stream finished it, never as a function_call_output`, () =>
      Effect.gen(function*() {
        const events = yield* runText(Providers.get("openai-responses").normalize, text)
        const hostedItems = text
          .split("\n")
          .filter((line) => line.startsWith("data: ") && line.includes("\"type\":\"response.output_item.done\""))
          .map((line) => (JSON.parse(line.slice(6)) as { readonly item: { readonly type: string } }).item)
          .filter((item) => item.type !== "message" && item.type !== "reasoning")
        expect(hostedItems.length).toBeGreaterThan(0)
        const first: LlmRequest.LlmRequest = { model: "m", messages: [{ _tag: "user", text: "go" }] }
        const turn = { provider: "openai-responses", items: Turn.finalItems(turnOf(events)) }
        const next = Result.getOrThrow(RoundTrip.continueWith(first, turn))
        const input = Providers.encode("openai-responses", next, { apiKey: "k", baseUrl: "http://x" }).body
          .input as ReadonlyArray<{
            readonly type: string
          }>
        expect(input.filter((item) => item.type !== "message" && item.type !== "reasoning")).toStrictEqual(hostedItems)
        expect(input.some((item) => item.type === "function_call_output" || item.type === "function_call")).toBe(false)
        // the results are the provider's: no tool result may be sent for them
        const [call] = Turn.finalItems(turnOf(events)).filter(OutputItem.isProviderToolCall)
        expect(Result.isFailure(RoundTrip.toolResults(turn, [{ callId: call!.call_id, output: "x" }]))).toBe(true)
      }))
  }

  it.effect("Gemini grounding: the message keeps its sources, the search follows as a google_search call and its chunks, and neither goes back", () =>
    Effect.gen(function*() {
      const events = yield* runText(Providers.get("gemini").normalize, own("gemini", "grounding.sse"))
      const items = finals(events)
      expect(items.map((item) => item.type)).toStrictEqual(["message", "function_call", "function_call_output"])
      const [message, call, result] = items
      expect(message?.type === "message" && message.sources?.length).toBe(4)
      expect(call).toMatchObject({
        name: "google_search",
        arguments: JSON.stringify({ queries: ["who won euro 2024"] }),
        provider_executed: true
      })
      expect(result).toMatchObject({ provider_executed: true, success: true })
      expect(
        call?.type === "function_call" && result?.type === "function_call_output" && result.call_id === call.call_id
      ).toBe(true)
      const chunks = JSON.parse(result?.type === "function_call_output" ? result.output : "[]")
      expect(chunks.map((chunk: { readonly web: { readonly title: string } }) => chunk.web.title)).toStrictEqual([
        "uefa.com",
        "wikipedia.org",
        "bbc.co.uk"
      ])
      const first: LlmRequest.LlmRequest = { model: "m", messages: [{ _tag: "user", text: "go" }] }
      const next = Result.getOrThrow(
        RoundTrip.continueWith(first, { provider: "gemini", items: Turn.finalItems(turnOf(events)) })
      )
      expect(Providers.encode("gemini", next, { apiKey: "k", baseUrl: "http://x" }).body.contents).toStrictEqual([
        { role: "user", parts: [{ text: "go" }] },
        { role: "model", parts: [{ text: "Spain won Euro 2024, beating England 2-1 in the final." }] }
      ])
    }))

  it.effect("Gemini grounding without web queries is a retrieval call; grounding with no queries and no chunks adds no call", () =>
    Effect.gen(function*() {
      const body = (groundingMetadata: Record<string, unknown>) => ({
        candidates: [{
          index: 0,
          finishReason: "STOP",
          groundingMetadata,
          content: { role: "model", parts: [{ text: "From the manual." }] }
        }]
      })
      const gemini = Providers.get("gemini")
      const retrieval = finals(
        yield* gemini.normalizeResponse(
          body({ groundingChunks: [{ retrievedContext: { uri: "gs://b/manual.pdf", title: "manual" } }] })
        )
      )
      expect(retrieval.map((item) => [item.type, item.type === "function_call" ? item.name : undefined])).toStrictEqual(
        [
          ["message", undefined],
          ["function_call", "retrieval"],
          ["function_call_output", undefined]
        ]
      )
      expect(retrieval[1]).toMatchObject({ arguments: "{\"queries\":[]}", provider_executed: true })
      const empty = finals(yield* gemini.normalizeResponse(body({ searchEntryPoint: { renderedContent: "<div/>" } })))
      expect(empty.map((item) => item.type)).toStrictEqual(["message"])
    }))

  it("a provider-executed call with no provider form is left out of the next request, and takes no tool result", () => {
    const turn: RoundTrip.FinishedTurn = {
      provider: "ai-sdk",
      items: [
        {
          type: "function_call",
          id: "i0",
          call_id: "srvtoolu_1",
          name: "web_search",
          arguments: "{}",
          provider_executed: true
        },
        {
          type: "function_call_output",
          id: "i1",
          call_id: "srvtoolu_1",
          output: "[]",
          success: true,
          provider_executed: true
        },
        { type: "message", id: "i2", content: "Found it.", origin: "agent" }
      ]
    }
    expect(RoundTrip.assistantMessage(turn).parts).toStrictEqual([{
      _tag: "text",
      text: "Found it.",
      provider: "ai-sdk"
    }])
    const refused = RoundTrip.toolResults(turn, [{ callId: "srvtoolu_1", output: "x" }])
    expect(Result.isFailure(refused) && refused.failure).toMatchObject({ _tag: "RoundTripError", callId: "srvtoolu_1" })
  })

  it.effect("Anthropic code execution goes back as server_tool_use and result blocks, and asks for no tool results", () =>
    Effect.gen(function*() {
      const events = yield* runText(Providers.get("anthropic").normalize, recorded("anthropic", "code-execution.sse"))
      const first: LlmRequest.LlmRequest = { model: "m", messages: [{ _tag: "user", text: "go" }] }
      const next = Result.getOrThrow(
        RoundTrip.continueWith(first, { provider: "anthropic", items: Turn.finalItems(turnOf(events)) })
      )
      expect(next.messages).toHaveLength(2)
      const body = Providers.encode("anthropic", next, { apiKey: "k", baseUrl: "http://x" }).body
      const blocks =
        (body.messages as ReadonlyArray<{ readonly content: ReadonlyArray<{ readonly type: string }> }>)[1]!.content
      expect(blocks.map((block) => block.type).filter((type) => type !== "text")).toStrictEqual([
        "server_tool_use",
        "text_editor_code_execution_tool_result",
        "server_tool_use",
        "bash_code_execution_tool_result"
      ])
    }))
})

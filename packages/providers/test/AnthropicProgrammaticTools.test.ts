/**
 * Anthropic's programmatic tool calling: code the model runs in code execution calls a
 * client tool, and that `tool_use` block names its `caller`. The call is the client's
 * to run (not the provider's), its caller is kept, and it goes back with the call. The
 * code-execution `container` the response ran in is kept on the turn and sent with the
 * next request, so the code goes on running in it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Summary, Turn } from "@sluice/accumulator"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { Anthropic, type LlmRequest, Providers, RoundTrip } from "../src/index.js"
import { nextMessages } from "./support/chatWire.js"
import { done, finals, own, runText } from "./support/normalizerHarness.js"

const transcript = own("anthropic", "programmatic-tool-call.sse")
const caller = { type: "code_execution_20250825", tool_id: "srvtoolu_01" }

describe("Anthropic programmatic tool calling", () => {
  it.effect("a tool_use made by code execution is a client call that keeps its caller", () =>
    Effect.gen(function*() {
      const events = yield* runText(Anthropic.normalize, transcript)
      expect(finals(events)[1]).toStrictEqual({
        type: "function_call",
        id: "item_1",
        call_id: "toolu_01",
        name: "calculate_sum",
        arguments: "{\"a\":5,\"b\":3}",
        provider_metadata: { caller }
      })
      const summary = Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(events)))
      expect(summary.toolCalls.map((call) => call.id)).toStrictEqual(["toolu_01"])
      expect(summary.providerToolCalls.map((call) => call.id)).toStrictEqual(["srvtoolu_01"])
      expect(summary.finishReason).toBe("tool-calls")
    }))

  it.effect("the call goes back in the next request with its caller", () =>
    Effect.gen(function*() {
      const start: LlmRequest.LlmRequest = { model: "m", messages: [{ _tag: "user", text: "Sum 5 and 3" }] }
      const { messages } = yield* nextMessages(start, "anthropic", transcript, "8")
      const assistant = messages.find((message) => message.role === "assistant")
      expect(assistant?.content).toContainEqual({
        type: "tool_use",
        id: "toolu_01",
        name: "calculate_sum",
        input: { a: 5, b: 3 },
        caller
      })
    }))

  it.effect(
    "the response's container is kept (response_done provider_metadata) and the next request names it",
    () =>
      Effect.gen(function*() {
        const container = { id: "container_011CU6pTr2hLT47seQ5Xs4yj", expires_at: "2025-10-14T10:02:00.044495Z" }
        const events = yield* runText(Anthropic.normalize, transcript)
        expect(done(events)?.provider_metadata).toStrictEqual({ container })
        const turn = Result.getOrThrow(Turn.fromEvents(events))
        expect(turn.providerMetadata).toStrictEqual({ container })
        const start: LlmRequest.LlmRequest = { model: "m", messages: [{ _tag: "user", text: "Sum 5 and 3" }] }
        const next = Result.getOrThrow(
          RoundTrip.continueWith(
            start,
            { provider: "anthropic", items: Turn.finalItems(turn), providerMetadata: turn.providerMetadata },
            [{ callId: "toolu_01", output: "8" }]
          )
        )
        expect(next.container).toBe(container.id)
        const body = Providers.encode("anthropic", next, { apiKey: "k", baseUrl: "http://x" }).body
        expect(body.container).toBe(container.id)
        // a request without one sends none
        expect(Providers.encode("anthropic", start, { apiKey: "k", baseUrl: "http://x" }).body).not.toHaveProperty(
          "container"
        )
      }),
    30_000
  )

  it.effect("the non-streaming response's container is kept the same way", () =>
    Effect.gen(function*() {
      const container = { id: "container_1", expires_at: "2025-10-14T10:02:00Z" }
      const events = yield* Anthropic.normalizeResponse({
        type: "message",
        model: "claude-sonnet-4-5",
        content: [{ type: "text", text: "done" }],
        stop_reason: "end_turn",
        container,
        usage: { input_tokens: 3, output_tokens: 1 }
      })
      expect(done(events)?.provider_metadata).toStrictEqual({ container })
    }), 30_000)
})

/**
 * Anthropic's programmatic tool calling: code the model runs in code execution calls a
 * client tool, and that `tool_use` block names its `caller`. The call is the client's
 * to run (not the provider's), its caller is kept, and it goes back with the call.
 */
import { describe, expect, it } from "@effect/vitest"
import { Summary, Turn } from "@sluice/accumulator"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { Anthropic, type LlmRequest } from "../src/index.js"
import { nextMessages } from "./support/chatWire.js"
import { finals, own, runText } from "./support/normalizerHarness.js"

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
})

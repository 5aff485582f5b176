/**
 * OpenAI-compatible servers whose `delta.content` is an array of typed parts (Mistral's
 * `text`, `thinking` with its own array of text parts, `reference`).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { OpenAiChat } from "../src/index.js"
import * as Providers from "../src/request/Providers.js"
import { chatChunk as chunk, runChatCompatible as runCompatible } from "./support/chatWire.js"
import { done, finals, own, ownJson, payloads } from "./support/normalizerHarness.js"
import { transcriptProperties } from "./support/transcriptProperties.js"

describe("OpenAiChat content arrays (Mistral)", () => {
  it.effect("thinking parts become the reasoning item, text parts the message, a reference part stays on it", () =>
    Effect.gen(function*() {
      const events = yield* runCompatible(own("openai-chat", "mistral-thinking.sse"))
      expect(finals(events)).toStrictEqual([
        {
          type: "reasoning",
          id: "item_0",
          content: "Okay, the user asks for 12 × 7. 12 × 7 = 84. Done.",
          provider_id: "openai-compatible"
        },
        {
          type: "message",
          id: "item_1",
          content: "12 × 7 = 84.",
          origin: "agent",
          provider_metadata: { other_content: [{ type: "reference", reference_ids: [1, 2] }] }
        }
      ])
      expect(done(events)).toMatchObject({
        status: "complete",
        finish_reason: "stop",
        usage: { input: 15, output: 60, total: 75 }
      })
    }))

  it.effect("the non-streaming message with a content array gives the same items", () =>
    Effect.gen(function*() {
      const whole = yield* OpenAiChat.normalizeCompatibleResponse(ownJson("openai-chat", "mistral-thinking.json"))
      const streamed = yield* runCompatible(own("openai-chat", "mistral-thinking.sse"))
      expect(finals(whole)).toStrictEqual(finals(streamed))
    }))

  it.effect("a thinking part whose thinking is a string, and parts of unknown kinds, are accepted", () =>
    Effect.gen(function*() {
      const events = yield* runCompatible(
        chunk({ content: [{ type: "thinking", thinking: "hm" }, { type: "image_url", image_url: "x" }] }) +
          chunk({ content: [{ type: "text", text: "ok" }] }, "stop") + "data: [DONE]\n\n"
      )
      expect(finals(events)).toStrictEqual([
        { type: "reasoning", id: "item_0", content: "hm", provider_id: "openai-compatible" },
        {
          type: "message",
          id: "item_1",
          content: "ok",
          origin: "agent",
          provider_metadata: { other_content: [{ type: "image_url", image_url: "x" }] }
        }
      ])
    }))

  it.effect("a content part without a type is still a typed WireDecodeError, not a defect", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(runCompatible(chunk({ content: [{ text: "no type" }] })))
      expect(failure._tag).toBe("WireDecodeError")
    }))

  it.effect("an empty content array adds nothing", () =>
    Effect.gen(function*() {
      const events = yield* runCompatible(chunk({ content: [] }) + chunk({ content: "a" }, "stop") + "data: [DONE]\n\n")
      expect(payloads(events).filter((payload) => payload.type === "item_start")).toHaveLength(1)
    }))

  describe("properties", () => {
    transcriptProperties(Providers.get("openai-compatible"), [
      ["mistral-thinking", own("openai-chat", "mistral-thinking.sse")]
    ])
  })
})

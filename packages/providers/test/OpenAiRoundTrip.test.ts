/**
 * The first design's round trip for OpenAI-compatible chat: what a reasoning model sent must go
 * back in the next request's assistant message with the tool calls — OpenRouter's
 * `reasoning_details` (signatures and encrypted data byte for byte), DeepSeek's
 * `reasoning_content`. Each test normalizes a transcript, folds it, builds the next
 * request with the tool results and reads the request body.
 */
import { describe, expect, it } from "@effect/vitest"
import { Turn } from "@sluice/accumulator"
import { Sse } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { type LlmRequest, Providers, RoundTrip } from "../src/index.js"
import type { ProviderName } from "../src/ProviderName.js"
import { nextMessages } from "./support/chatWire.js"
import { own } from "./support/normalizerHarness.js"

const start: LlmRequest.LlmRequest = {
  model: "m",
  messages: [{ _tag: "user", text: "Weather in Paris?" }],
  tools: [{ name: "weather", parameters: { type: "object" } }]
}

/** Normalizes, folds, answers every client call with `output`, and encodes the next request. */
const nextRequest = (provider: ProviderName, transcript: string, output = "{\"temp\":21}") =>
  Effect.map(nextMessages(start, provider, transcript, output), (next) => {
    expect(next.outputs.length).toBeGreaterThan(0)
    return next.messages
  })

/** The `reasoning_details` entries of every chunk of a transcript, as JSON values. */
const streamedDetails = (transcript: string): ReadonlyArray<Record<string, unknown>> =>
  transcript.split("\n").filter((line) => line.startsWith("data: {")).flatMap((line) => {
    const chunk = JSON.parse(line.slice(6)) as { choices: ReadonlyArray<{ delta: Record<string, unknown> }> }
    const details = chunk.choices[0]?.delta.reasoning_details
    return Array.isArray(details) ? (details as ReadonlyArray<Record<string, unknown>>) : []
  })

/** Every opaque value (`signature`, `data`) of a transcript's details, as its JSON text there. */
const opaqueTexts = (transcript: string): ReadonlyArray<string> =>
  [...transcript.matchAll(/"(?:signature|data)":("(?:[^"\\]|\\.)*")/g)].map((match) => match[1]!)

describe("OpenAI-compatible round trip (docs/providers.md)", () => {
  it.effect("OpenRouter (Anthropic): reasoning.text with its signature and reasoning.encrypted go back with the tool call", () =>
    Effect.gen(function*() {
      const transcript = own("openai-chat", "openrouter-reasoning-tools.sse")
      const messages = yield* nextRequest("openai-compatible", transcript)
      const [user, assistant, tool] = messages
      expect(user).toStrictEqual({ role: "user", content: "Weather in Paris?" })
      expect(assistant).toStrictEqual({
        role: "assistant",
        content: "Checking.",
        reasoning_details: [
          {
            type: "reasoning.text",
            text: "The user wants Paris weather.",
            signature: "ErUBCkYIBxgCIkD+/x9Q==+sig",
            format: "anthropic-claude-v1",
            index: 0
          },
          { type: "reasoning.encrypted", data: "EmwKAhgBEgy3vA/r+ZW1fQ==", format: "anthropic-claude-v1", index: 1 }
        ],
        tool_calls: [{
          id: "toolu_01Paris",
          type: "function",
          function: { name: "weather", arguments: "{\"city\":\"Paris\"}" }
        }]
      })
      expect(tool).toStrictEqual({ role: "tool", tool_call_id: "toolu_01Paris", content: "{\"temp\":21}" })
      // the opaque values go back byte for byte, as their JSON text came
      const sent = JSON.stringify(assistant)
      const opaque = opaqueTexts(transcript)
      expect(opaque).toHaveLength(2)
      for (const text of opaque) expect(sent).toContain(text)
    }))

  it.effect("OpenRouter (OpenAI): reasoning.summary and reasoning.encrypted keep their ids and format", () =>
    Effect.gen(function*() {
      const transcript = own("openai-chat", "openrouter-summary-encrypted-tools.sse")
      const messages = yield* nextRequest("openai-compatible", transcript)
      const assistant = messages[1]
      expect(assistant?.reasoning_details).toStrictEqual([
        {
          type: "reasoning.summary",
          summary: "**Looking up** the weather",
          id: "rs_0a1b2c",
          format: "openai-responses-v1",
          index: 0
        },
        {
          type: "reasoning.encrypted",
          data: "gAAAAABpJ3x_Zm9vYmFy+/==",
          id: "rs_0a1b2c",
          format: "openai-responses-v1",
          index: 1
        }
      ])
      expect(assistant).not.toHaveProperty("reasoning_content")
      expect(assistant).toMatchObject({ content: null, tool_calls: [{ id: "call_Wx1" }] })
      // every streamed entry went into the one merged list: nothing dropped, nothing twice
      const merged = assistant?.reasoning_details as ReadonlyArray<Record<string, unknown>>
      for (const entry of streamedDetails(transcript)) {
        const into = merged.find((known) => known.type === entry.type && known.index === entry.index)
        expect(into).toBeDefined()
      }
      for (const text of opaqueTexts(transcript)) expect(JSON.stringify(assistant)).toContain(text)
    }))

  it.effect("OpenRouter's reasoning.summary text is stated as a summary; reasoning.text and DeepSeek's text are raw (no kind stated)", () =>
    Effect.gen(function*() {
      const kindOf = (name: string) =>
        Effect.map(
          Stream.make(new TextEncoder().encode(own("openai-chat", name))).pipe(
            Sse.decode(),
            Providers.get("openai-compatible").normalize(),
            Stream.runCollect
          ),
          (events) =>
            Turn.finalItems(Result.getOrThrow(Turn.fromEvents(events))).find((item) => item.type === "reasoning")
        )
      expect(yield* kindOf("openrouter-summary-encrypted-tools.sse")).toMatchObject({ reasoning_kind: "summary" })
      expect(yield* kindOf("openrouter-reasoning-tools.sse")).not.toHaveProperty("reasoning_kind")
      expect(yield* kindOf("deepseek-reasoning-tools.sse")).not.toHaveProperty("reasoning_kind")
    }))

  it.effect("DeepSeek: reasoning_content goes back on the assistant message with the tool call", () =>
    Effect.gen(function*() {
      const messages = yield* nextRequest("openai-compatible", own("openai-chat", "deepseek-reasoning-tools.sse"))
      expect(messages.slice(1)).toStrictEqual([
        {
          role: "assistant",
          content: null,
          reasoning_content: "Need the weather for Paris.",
          tool_calls: [{
            id: "call_00_ds1",
            type: "function",
            function: { name: "weather", arguments: "{\"city\":\"Paris\"}" }
          }]
        },
        { role: "tool", tool_call_id: "call_00_ds1", content: "{\"temp\":21}" }
      ])
    }))

  it.effect("OpenRouter's details go to no other provider, nor to OpenAI's own Chat Completions", () =>
    Effect.gen(function*() {
      const transcript = own("openai-chat", "openrouter-reasoning-tools.sse")
      const events = yield* Stream.make(new TextEncoder().encode(transcript)).pipe(
        Sse.decode(),
        Providers.get("openai-compatible").normalize(),
        Stream.runCollect
      )
      const turn = Result.getOrThrow(Turn.fromEvents(events))
      const request = Result.getOrThrow(
        RoundTrip.continueWith(start, { provider: "openai-compatible", items: Turn.finalItems(turn) })
      )
      for (const provider of ["openai-chat", "openai-responses", "anthropic", "gemini"] as const) {
        const body = JSON.stringify(
          Providers.encode(provider, request, { apiKey: "k", baseUrl: "http://x" }).body
        )
        expect(body).not.toContain("EmwKAhgBEgy3vA/r+ZW1fQ==")
        expect(body).not.toContain("reasoning_details")
      }
    }))
})

/**
 * Chat Completions shapes beyond text and function calls, as OpenAI and the servers of
 * its API send them: a custom tool's call (GPT-5 `type: "custom"`, free-text input), a
 * search model's `url_citation` annotations, Gemini's OpenAI-compatible endpoint (a
 * thought signature in `extra_content` on a call, a turn of calls ended `stop`),
 * Azure's first chunk (no choices, no model), audio output, DeepSeek's `insufficient_system_resource`
 * Groq's `x_groq.usage`, Perplexity's and xAI's citations, OpenRouter's images, and
 * the finish reasons of Together and Mistral. Nothing of them is dropped, and what the
 * next request needs goes back in it.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type LlmRequest, OpenAiChat, Providers } from "../src/index.js"
import type { ProviderName } from "../src/ProviderName.js"
import {
  chatChunk as chunk,
  nextMessages,
  runChat as run,
  runChatCompatible as runCompatible
} from "./support/chatWire.js"
import { done, finals, own, ownJson, payloads } from "./support/normalizerHarness.js"
import { transcriptProperties } from "./support/transcriptProperties.js"

const start: LlmRequest.LlmRequest = {
  model: "m",
  messages: [{ _tag: "user", text: "Go" }],
  tools: [{ name: "get_weather", parameters: { type: "object" } }]
}

/** The messages of the next request, every call answered "ok". */
const nextChatMessages = (provider: ProviderName, transcript: string) =>
  Effect.map(nextMessages(start, provider, transcript, "ok"), (next) => next.messages)

describe("OpenAiChat custom tools", () => {
  it.effect("a custom tool's call is named and its free text is the JSON arguments {\"input\": ...}", () =>
    Effect.gen(function*() {
      const events = yield* run(own("openai-chat", "custom-tool.sse"))
      const call = {
        type: "function_call",
        id: "item_0",
        call_id: "call_ct1",
        name: "code_exec",
        arguments: JSON.stringify({ input: "print(\"hello world\")" }),
        provider_metadata: { type: "custom" }
      }
      expect(finals(events)).toStrictEqual([call])
      // the streamed deltas are a prefix of the arguments, which close them
      const deltas = payloads(events).flatMap((payload) => payload.type === "item_delta" ? [payload.delta_content] : [])
      expect(`${deltas.join("")}"}`).toBe(call.arguments)
      expect(done(events)).toMatchObject({ status: "complete", finish_reason: "tool-calls" })
    }))

  it.effect("the non-streaming response gives the same call (it was refused for lacking `function`)", () =>
    Effect.gen(function*() {
      const whole = yield* OpenAiChat.normalizeResponse(ownJson("openai-chat", "custom-tool.json"))
      expect(finals(whole)).toStrictEqual(finals(yield* run(own("openai-chat", "custom-tool.sse"))))
    }))

  it.effect("a custom call with no input is {\"input\": \"\"}, and text with quotes and newlines stays valid JSON", () =>
    Effect.gen(function*() {
      const empty = yield* run(
        chunk({ tool_calls: [{ index: 0, id: "c1", type: "custom", custom: { name: "t" } }] }, "tool_calls") +
          "data: [DONE]\n\n"
      )
      expect(finals(empty)).toMatchObject([{ name: "t", arguments: "{\"input\":\"\"}" }])
      const text = "a \"b\"\nc\\d ü"
      const pieces = yield* run(
        chunk({
          tool_calls: [{ index: 0, id: "c1", type: "custom", custom: { name: "t", input: text.slice(0, 4) } }]
        }) +
          chunk({ tool_calls: [{ index: 0, custom: { input: text.slice(4) } }] }, "tool_calls") + "data: [DONE]\n\n"
      )
      const [call] = finals(pieces) as ReadonlyArray<{ readonly arguments: string }>
      expect(JSON.parse(call!.arguments)).toStrictEqual({ input: text })
    }))

  it.effect("goes back in the next request as a custom tool's call, its input the free text", () =>
    Effect.gen(function*() {
      const [, assistant, tool] = yield* nextChatMessages("openai-chat", own("openai-chat", "custom-tool.sse"))
      expect(assistant).toStrictEqual({
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_ct1", type: "custom", custom: { name: "code_exec", input: "print(\"hello world\")" } }]
      })
      expect(tool).toStrictEqual({ role: "tool", tool_call_id: "call_ct1", content: "ok" })
    }))
})

describe("OpenAiChat search annotations", () => {
  it.effect("a url_citation becomes a url source of the message, and is kept as sent", () =>
    Effect.gen(function*() {
      const events = yield* run(own("openai-chat", "search-annotations.sse"))
      const [message] = finals(events)
      expect(message).toMatchObject({
        type: "message",
        sources: [{
          kind: "url",
          url: "https://www.ft.com/content/fbf?utm_source=chatgpt.com",
          title: "FirstFT: US stock markets suffer heavy falls",
          text_start: 21,
          text_end: 84
        }],
        provider_metadata: {
          annotations: [{
            type: "url_citation",
            url_citation: { url: "https://www.ft.com/content/fbf?utm_source=chatgpt.com" }
          }]
        }
      })
      const whole = yield* OpenAiChat.normalizeResponse(ownJson("openai-chat", "search-annotations.json"))
      expect(finals(whole)).toStrictEqual(finals(events))
    }))

  it.effect("an annotation of a kind Sluice does not know is kept, without a source", () =>
    Effect.gen(function*() {
      const events = yield* run(
        chunk({ content: "x" }) + chunk({ annotations: [{ type: "file_thing", file_thing: { id: "f" } }] }, "stop") +
          "data: [DONE]\n\n"
      )
      expect(finals(events)).toStrictEqual([{
        type: "message",
        id: "item_0",
        content: "x",
        origin: "agent",
        provider_metadata: { annotations: [{ type: "file_thing", file_thing: { id: "f" } }] }
      }])
    }))
})

describe("OpenAiChat audio output", () => {
  it.effect("the transcript is the message's text; the audio's id, expiry and data are kept on it", () =>
    Effect.gen(function*() {
      const events = yield* run(own("openai-chat", "audio-output.sse"))
      expect(finals(events)).toStrictEqual([{
        type: "message",
        id: "item_0",
        content: "Hello!",
        origin: "agent",
        provider_metadata: {
          audio: { id: "audio_67b1d721fcc48190b25473a69338b9fd", expires_at: 1739707387, data: "UklGRg==" }
        }
      }])
      const whole = yield* OpenAiChat.normalizeResponse(ownJson("openai-chat", "audio-output.json"))
      expect(finals(whole)).toStrictEqual(finals(events))
    }))

  it.effect("the audio's id goes back on the assistant message, with the transcript as its content", () =>
    Effect.gen(function*() {
      const [, assistant] = yield* nextChatMessages("openai-chat", own("openai-chat", "audio-output.sse"))
      expect(assistant).toStrictEqual({
        role: "assistant",
        content: "Hello!",
        audio: { id: "audio_67b1d721fcc48190b25473a69338b9fd" }
      })
    }))
})

describe("OpenAiChat on Gemini's OpenAI-compatible endpoint", () => {
  it.effect("keeps a call's thought signature (extra_content) and ends a turn of calls tool-calls, not stop", () =>
    Effect.gen(function*() {
      const events = yield* runCompatible(own("openai-chat", "gemini-compat-tools.sse"))
      expect(finals(events)).toStrictEqual([
        {
          type: "function_call",
          id: "item_0",
          call_id: "function-call-1",
          name: "get_weather",
          arguments: "{\"location\":\"Sydney\"}",
          provider_metadata: { extra_content: { google: { thought_signature: "CrICAdHtim827fQsig==" } } }
        },
        {
          type: "function_call",
          id: "item_1",
          call_id: "function-call-2",
          name: "get_weather",
          arguments: "{\"location\":\"Perth\"}"
        }
      ])
      expect(done(events)).toMatchObject({ status: "complete", finish_reason: "tool-calls" })
    }))

  it.effect("the signature goes back on its call in the next request, and to no other provider", () =>
    Effect.gen(function*() {
      const [, assistant] = yield* nextChatMessages("openai-compatible", own("openai-chat", "gemini-compat-tools.sse"))
      expect(assistant).toMatchObject({
        tool_calls: [
          {
            id: "function-call-1",
            type: "function",
            extra_content: { google: { thought_signature: "CrICAdHtim827fQsig==" } }
          },
          { id: "function-call-2", type: "function" }
        ]
      })
      expect((assistant!.tool_calls as ReadonlyArray<object>)[1]).not.toHaveProperty("extra_content")
    }))

  it.effect("a turn that ends stop without calls stays stop", () =>
    Effect.gen(function*() {
      const events = yield* runCompatible(chunk({ content: "hi" }, "stop") + "data: [DONE]\n\n")
      expect(done(events)).toMatchObject({ finish_reason: "stop" })
    }))
})

describe("OpenAiChat on Azure OpenAI", () => {
  it.effect("the first chunk, without choices or model, does not start the turn: the model is the next chunk's", () =>
    Effect.gen(function*() {
      const events = yield* run(own("openai-chat", "azure-prompt-filter.sse"))
      expect(payloads(events)[0]).toMatchObject({ type: "response_start", model_id: "gpt-4o-2024-08-06" })
      expect(finals(events)).toMatchObject([{ type: "message", content: "Hello" }])
      expect(done(events)).toMatchObject({ status: "complete", usage: { input: 9, output: 1 } })
    }))
})

describe("OpenAiChat on other compatible servers", () => {
  it.effect("DeepSeek's insufficient_system_resource ends the turn with a retryable error, keeping the text", () =>
    Effect.gen(function*() {
      const events = yield* runCompatible(
        chunk({ content: "The answer is" }) + chunk({ content: "" }, "insufficient_system_resource") +
          "data: [DONE]\n\n"
      )
      expect(finals(events)).toMatchObject([{ type: "message", content: "The answer is" }])
      expect(payloads(events).filter((payload) => payload.type === "response_error")).toMatchObject([{
        error: { type: "provider_overloaded", code: "insufficient_system_resource", retryable: true }
      }])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "error" })
    }))

  it.effect("Perplexity's search results are the message's sources; its citations and results are kept", () =>
    Effect.gen(function*() {
      const events = yield* runCompatible(own("openai-chat", "perplexity-citations.sse"))
      expect(finals(events)).toStrictEqual([{
        type: "message",
        id: "item_0",
        content: "Finding a job [1][2].",
        origin: "agent",
        sources: [
          { kind: "url", url: "https://www.indeed.com/a", title: "A" },
          { kind: "url", url: "https://www.indeed.com/b", title: "B" }
        ],
        provider_metadata: {
          citations: ["https://www.indeed.com/a", "https://www.indeed.com/b"],
          search_results: [
            { title: "A", url: "https://www.indeed.com/a", date: "2024-01-02" },
            { title: "B", url: "https://www.indeed.com/b", date: null }
          ]
        }
      }])
    }))

  it.effect("xAI's citations alone are url sources; citations of another shape are kept, not refused", () =>
    Effect.gen(function*() {
      const urls = yield* runCompatible(
        chunk({ content: "See [1]." }) + chunk({}, "stop", { citations: ["https://x.ai/a"] }) + "data: [DONE]\n\n"
      )
      expect(finals(urls)).toMatchObject([{ sources: [{ kind: "url", url: "https://x.ai/a" }] }])
      const objects = yield* runCompatible(
        chunk({ content: "See." }) + chunk({}, "stop", { citations: [{ id: 1 }] }) + "data: [DONE]\n\n"
      )
      expect(finals(objects)).toStrictEqual([{
        type: "message",
        id: "item_0",
        content: "See.",
        origin: "agent",
        provider_metadata: { citations: [{ id: 1 }] }
      }])
    }))

  it.effect("OpenRouter's images are kept on the message", () =>
    Effect.gen(function*() {
      const events = yield* runCompatible(own("openai-chat", "openrouter-images.sse"))
      expect(finals(events)).toStrictEqual([{
        type: "message",
        id: "item_0",
        content: "Here is the image",
        origin: "agent",
        provider_metadata: {
          images: [{ type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" }, index: 0 }]
        }
      }])
    }))

  it.effect("Together's eos is stop, Mistral's model_length is length", () =>
    Effect.gen(function*() {
      for (const [wire, reason] of [["eos", "stop"], ["model_length", "length"]] as const) {
        const events = yield* runCompatible(chunk({ content: "a" }, wire) + "data: [DONE]\n\n")
        expect(done(events)).toMatchObject({ status: "complete", finish_reason: reason })
      }
    }))

  it.effect("Groq's usage in x_groq.usage is the turn's usage when the chunk has none of its own", () =>
    Effect.gen(function*() {
      const groq = { usage: { queue_time: 0.07, prompt_tokens: 23, completion_tokens: 19, total_tokens: 42 } }
      const events = yield* runCompatible(
        chunk({ content: "Hi" }) + chunk({}, "stop", { x_groq: groq }) + "data: [DONE]\n\n"
      )
      expect(done(events)).toMatchObject({ usage: { input: 23, output: 19, total: 42, raw: groq.usage } })
      // `usage` of its own, when the request asked for it, comes first
      const own = { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 }
      const both = yield* runCompatible(chunk({}, "stop", { usage: own, x_groq: groq }) + "data: [DONE]\n\n")
      expect(done(both)).toMatchObject({ usage: { input: 5, output: 1 } })
    }))
})

describe("properties", () => {
  transcriptProperties(Providers.get("openai-chat"), [
    ["custom-tool", own("openai-chat", "custom-tool.sse")],
    ["search-annotations", own("openai-chat", "search-annotations.sse")],
    ["azure-prompt-filter", own("openai-chat", "azure-prompt-filter.sse")],
    ["audio-output", own("openai-chat", "audio-output.sse")]
  ])
  transcriptProperties(Providers.get("openai-compatible"), [
    ["gemini-compat-tools", own("openai-chat", "gemini-compat-tools.sse")],
    ["perplexity-citations", own("openai-chat", "perplexity-citations.sse")],
    ["openrouter-images", own("openai-chat", "openrouter-images.sse")]
  ])
})

/**
 * Responses-compatible servers as they really stream: OpenRouter's Responses endpoint
 * ends its stream with `data: [DONE]`, and xAI's X Search runs its own tools and streams
 * them as `custom_tool_call` items before the answer (fixtures/openai-responses/FIXTURES.md).
 */
import { describe, expect, it } from "@effect/vitest"
import { Summary, Turn } from "@sluice/accumulator"
import type { StreamEvent } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { OpenAiResponses } from "../src/index.js"
import { done, finals, own, runText } from "./support/normalizerHarness.js"

const text = (name: string) => own("openai-responses", `${name}.sse`)

const turnOf = (events: ReadonlyArray<StreamEvent.StreamEvent>) => Result.getOrThrow(Turn.fromEvents(events))

/** An xAI stream whose `response.created` and `.completed` echo no tools. */
const withoutEcho = (body: string) =>
  body.replaceAll(
    "\"tools\":[{\"type\":\"x_search\",\"allowed_x_handles\":[\"xai\"],\"enable_image_understanding\":true,\"enable_video_understanding\":true}]",
    "\"tools\":[]"
  )

describe("a Responses stream that ends with data: [DONE]", () => {
  it.effect("the turn completes; the sentinel is the end, not an event that is not JSON", () =>
    Effect.gen(function*() {
      const events = yield* runText(OpenAiResponses.normalize, text("openrouter-done"))
      expect(done(events)).toMatchObject({ status: "complete", finish_reason: "stop" })
      expect(finals(events)).toMatchObject([{ type: "message", content: "Hello from the router." }])
    }), 30_000)

  it.effect("what follows the sentinel is ignored", () =>
    Effect.gen(function*() {
      const body = `${text("openrouter-done")}data: {"type":"response.created"}\n\ndata: [DONE]\n\n`
      const events = yield* runText(OpenAiResponses.normalize, body)
      expect(done(events)).toMatchObject({ status: "complete", finish_reason: "stop" })
    }), 30_000)

  it.effect(
    "a sentinel before any terminal event ends the turn as a cut-off stream, keeping the text",
    () =>
      Effect.gen(function*() {
        const cut = text("openrouter-done").split("\n").filter((line) => !line.includes("response.completed")).join(
          "\n"
        )
        const events = yield* runText(OpenAiResponses.normalize, cut)
        const turn = turnOf(events)
        expect(turn.status).toBe("error")
        expect(turn.errors.map((error) => error.code)).toStrictEqual(["stream_truncated"])
        expect(turn.items.map((item) => item.final?.type === "message" ? item.final.content : undefined))
          .toStrictEqual(["Hello from the router."])
      }),
    30_000
  )
})

describe("xAI X Search: the provider's own tools as custom_tool_call items", () => {
  it.effect(
    "calls under names the request's tools (as the response echoes them) lack are provider-executed; the finish is the answer's",
    () =>
      Effect.gen(function*() {
        const events = yield* runText(OpenAiResponses.normalize, text("xai-x-search"))
        const calls = finals(events).filter((item) => item?.type === "function_call")
        expect(calls.map((call) => call?.type === "function_call" ? [call.name, call.provider_executed] : []))
          .toStrictEqual([
            ["x_keyword_search", true],
            ["web_search_call", true],
            ["view_x_video", true]
          ])
        expect(done(events)).toMatchObject({ status: "complete", finish_reason: "stop" })
        const summary = Summary.fromTurn(turnOf(events))
        expect(summary.toolCalls).toStrictEqual([])
        expect(summary.text).toContain("xAI's official account")
      }),
    30_000
  )

  it.effect(
    "the request's tool names given as options decide when the response echoes none",
    () =>
      Effect.gen(function*() {
        const body = withoutEcho(text("xai-x-search"))
        const unknown = yield* runText(OpenAiResponses.normalize, body)
        // nothing says whose they are: the calls stay the client's
        expect(done(unknown)).toMatchObject({ finish_reason: "tool-calls" })
        const known = yield* runText(
          (options) => OpenAiResponses.normalize({ ...options, toolNames: ["lookup"] }),
          body
        )
        expect(done(known)).toMatchObject({ finish_reason: "stop" })
        const declared = yield* runText(
          (options) => OpenAiResponses.normalize({ ...options, toolNames: ["x_keyword_search"] }),
          body
        )
        // a declared name is the client's to run, the other the provider's
        expect(done(declared)).toMatchObject({ finish_reason: "tool-calls" })
        expect(
          finals(declared).flatMap((item) =>
            item?.type === "function_call" && item.provider_executed !== true ? [item.name] : []
          )
        ).toStrictEqual(["x_keyword_search"])
      }),
    30_000
  )

  it.effect("the non-streaming response gives the same calls and finish", () =>
    Effect.gen(function*() {
      const events = yield* OpenAiResponses.normalizeResponse(
        JSON.parse(own("openai-responses", "xai-x-search.json")),
        {}
      )
      expect(done(events)).toMatchObject({ finish_reason: "stop" })
      expect(Summary.fromTurn(turnOf(events)).toolCalls).toStrictEqual([])
    }), 30_000)
})

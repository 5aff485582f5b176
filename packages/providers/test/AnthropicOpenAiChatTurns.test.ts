/**
 * For every Anthropic and OpenAI Chat transcript that has a non-streaming twin, the
 * streamed turn equals the non-streaming turn: the same final items, usage (without
 * the provider's raw object), finish reason, status and errors.
 */
import { describe, expect, it } from "@effect/vitest"
import { Turn } from "@sluice/accumulator"
import { Json, type StreamEvent } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { Anthropic, OpenAiChat } from "../src/index.js"
import type { Normalize, NormalizeResponse } from "../src/Normalizer.js"
import { options, own, ownJson, runText } from "./support/normalizerHarness.js"

/**
 * What a turn's consumer sees. Tool arguments are compared parsed: a stream carries
 * the argument text as the model wrote it (Anthropic's `{"query": "x"}`), while a
 * non-streaming Anthropic response carries an object, which has no spacing.
 */
const view = (events: ReadonlyArray<StreamEvent.StreamEvent>) => {
  const turn = Result.getOrThrow(Turn.fromEvents(events))
  const { raw: _raw, ...usage } = turn.usage
  return {
    items: turn.items.map((item) =>
      item.final?.type === "function_call"
        ? { ...item.final, arguments: Json.parseArguments(item.final.arguments) }
        : item.final
    ),
    usage,
    finishReason: turn.finishReason,
    status: turn.status,
    errors: turn.errors
  }
}

const pairs: ReadonlyArray<readonly [string, Normalize, NormalizeResponse, string]> = [
  ...["text-cache", "thinking-tools", "server-tool", "refusal"].map(
    (name) => [`anthropic ${name}`, Anthropic.normalize, Anthropic.normalizeResponse, `anthropic/${name}`] as const
  ),
  ...["text-usage", "tools-interleaved", "content-filter", "refusal"].map(
    (name) =>
      [`openai-chat ${name}`, OpenAiChat.normalize, OpenAiChat.normalizeResponse, `openai-chat/${name}`] as const
  ),
  [
    "openai-compatible reasoning-details",
    OpenAiChat.normalizeCompatible,
    OpenAiChat.normalizeCompatibleResponse,
    "openai-chat/reasoning-details"
  ]
]

describe("streamed turn equals the non-streaming turn of the same content", () => {
  for (const [name, normalize, normalizeResponse, path] of pairs) {
    const [provider, file] = path.split("/") as [string, string]
    it.effect(name, () =>
      Effect.gen(function*() {
        const streamed = view(yield* runText(normalize, own(provider, `${file}.sse`)))
        const whole = view(yield* normalizeResponse(ownJson(provider, `${file}.json`), options))
        expect(whole).toStrictEqual(streamed)
        expect(streamed.items.length).toBeGreaterThan(0)
        expect(streamed.status === "complete" || streamed.errors.length > 0).toBe(true)
      }))
  }
})

/**
 * A paused turn through the AI SDK: the unified reason says `stop` or `other`, the raw
 * one Anthropic's `pause_turn`; Sluice's finish reason is `paused`
 * (docs/events.md#usage-and-finish-reasons).
 */
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider"
import { describe, expect, it } from "@effect/vitest"
import type { StreamEvent } from "@sluice/core"
import { simulateReadableStream } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { AiSdkStream } from "../src/index.js"

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 }
}

const finishReasonOf = (finishReason: { readonly unified: "stop" | "other"; readonly raw: string | undefined }) =>
  Effect.gen(function*() {
    const chunks: Array<LanguageModelV4StreamPart> = [
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Searching" },
      { type: "text-end", id: "t" },
      { type: "finish", usage, finishReason }
    ]
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: simulateReadableStream({ chunks, initialDelayInMs: null, chunkDelayInMs: null })
      })
    })
    const result = yield* Effect.promise(() => model.doStream({ prompt: [] }))
    const events: Array<StreamEvent.StreamEvent> = [...yield* Stream.runCollect(AiSdkStream.fromDoStream(result))]
    return events.flatMap((event) => (event.payload.type === "response_done" ? [event.payload.finish_reason] : []))
  })

describe("AiSdkStream finish reasons", () => {
  it.effect("a raw pause_turn is paused, whatever the unified reason", () =>
    Effect.gen(function*() {
      expect(yield* finishReasonOf({ unified: "stop", raw: "pause_turn" })).toStrictEqual(["paused"])
      expect(yield* finishReasonOf({ unified: "other", raw: "pause_turn" })).toStrictEqual(["paused"])
      expect(yield* finishReasonOf({ unified: "stop", raw: "end_turn" })).toStrictEqual(["stop"])
    }), 10_000)
})

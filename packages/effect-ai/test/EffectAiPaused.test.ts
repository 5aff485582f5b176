/**
 * Effect AI's `pause` finish reason (a provider paused the turn, to be continued) is
 * Sluice's `paused` (docs/events.md#usage-and-finish-reasons).
 */
import { describe, expect, it } from "@effect/vitest"
import * as LanguageModel from "effect/ai/LanguageModel"
import type * as Response from "effect/ai/Response"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { EffectAiStream } from "../src/index.js"

const usage = { inputTokens: { total: 10 }, outputTokens: { total: 5 } }

const finishReasonOf = (reason: Response.FinishReason) =>
  Effect.gen(function*() {
    const parts: ReadonlyArray<Response.StreamPartEncoded> = [
      { type: "text-start", id: "1" },
      { type: "text-delta", id: "1", delta: "Searching" },
      { type: "text-end", id: "1" },
      { type: "finish", reason, usage }
    ]
    const service = yield* LanguageModel.make({
      generateText: () => Effect.succeed([]),
      streamText: () => Stream.fromIterable(parts)
    })
    const events = yield* LanguageModel.streamText({ prompt: "hi" }).pipe(
      EffectAiStream.fromParts({ providerId: "mock" }),
      Stream.runCollect,
      Effect.provideService(LanguageModel.LanguageModel, service)
    )
    return [...events].flatMap((event) => event.payload.type === "response_done" ? [event.payload.finish_reason] : [])
  })

describe("EffectAiStream finish reasons", () => {
  it.effect("pause is paused; unknown is other", () =>
    Effect.gen(function*() {
      expect(yield* finishReasonOf("pause")).toStrictEqual(["paused"])
      expect(yield* finishReasonOf("unknown")).toStrictEqual(["other"])
      expect(yield* finishReasonOf("stop")).toStrictEqual(["stop"])
    }), 10_000)
})

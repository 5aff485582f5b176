/**
 * Anthropic thinking as summary or raw (docs/events.md#output-items: Claude 4 and later
 * models' thinking comes back summarized), and an in-stream `event: error` keeping the
 * wire's error object as `raw` (`@sluice/views`' `ProcessedChunk` gives it back as
 * `originalError`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Summary, Turn } from "@sluice/accumulator"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { Anthropic } from "../src/index.js"
import { ofType, own, ownJson, runText } from "./support/normalizerHarness.js"

const run = (text: string) => runText(Anthropic.normalize, text)

describe("Anthropic thinking kinds", () => {
  it("tells the models whose thinking comes back summarized", () => {
    const cases: Array<[string, boolean]> = [
      ["claude-opus-4-1", true],
      ["claude-sonnet-4-5-20250929", true],
      ["claude-haiku-4-5", true],
      ["claude-sonnet-5", true],
      ["claude-opus-5", true],
      ["anthropic/claude-sonnet-4.5", true],
      ["claude-3-7-sonnet-20250219", false],
      ["claude-3-5-haiku-latest", false],
      ["claude-4-opus", true],
      ["deepseek-reasoner", false],
      ["unknown", false]
    ]
    expect(cases.map(([model]) => [model, Anthropic.summarizesThinking(model)])).toStrictEqual(cases)
  })

  it.effect("Claude 4+ thinking is a summary, on the start and the final item (streamed and not)", () =>
    Effect.gen(function*() {
      const streamed = yield* run(own("anthropic", "thinking-usage.sse"))
      expect(ofType(streamed, "item_start")[0]).toMatchObject({ item_type: "reasoning", reasoning_kind: "summary" })
      const whole = yield* Anthropic.normalizeResponse(ownJson("anthropic", "recorded-thinking-tokens.json"))
      for (const events of [streamed, whole]) {
        const summary = Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(events)))
        expect(summary.reasoningRaw).toBe("")
        expect(summary.reasoningSummary).toBe(summary.reasoning)
        expect(summary.reasoning.length).toBeGreaterThan(0)
      }
    }))

  it.effect("Claude 3.7's and other servers' models' thinking is raw", () =>
    Effect.gen(function*() {
      for (const model of ["claude-3-7-sonnet-20250219", "deepseek-reasoner"]) {
        const body = own("anthropic", "thinking-usage.sse").replace(
          "\"model\":\"claude-sonnet-5\"",
          `"model":"${model}"`
        )
        const events = yield* run(body)
        expect(ofType(events, "response_start")[0]?.model_id).toBe(model)
        const summary = Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(events)))
        expect(summary.reasoningSummary).toBe("")
        expect(summary.reasoningRaw).toBe("Working through the Euclidean algorithm: the GCD of 1071 and 462 is 21.")
      }
    }))
})

describe("Anthropic in-stream errors", () => {
  it.effect("keep every field of the error object (request ids and the like)", () =>
    Effect.gen(function*() {
      const body = own("anthropic", "overloaded.sse").replace(
        "\"message\":\"Overloaded\"}",
        "\"message\":\"Overloaded\",\"details\":{\"retry\":true}}"
      )
      const events = yield* run(body)
      expect(ofType(events, "response_error")[0]?.error.raw).toStrictEqual({
        type: "overloaded_error",
        message: "Overloaded",
        details: { retry: true }
      })
    }))
})

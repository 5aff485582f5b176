/**
 * Anthropic usage forms and `pause_turn` (docs/events.md#usage-and-finish-reasons):
 * `output_tokens_details.thinking_tokens` is `reasoning`, a part of `output`; usage with
 * `iterations` keeps the top-level figures and lists every pass with its type and model;
 * `pause_turn` is the finish reason `paused`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Summary, Turn } from "@sluice/accumulator"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { Anthropic } from "../src/index.js"
import { done, finals, own, ownJson, runText } from "./support/normalizerHarness.js"

const run = (text: string) => runText(Anthropic.normalize, text)

describe("Anthropic usage", () => {
  it.effect("reads thinking_tokens as reasoning, a part of output (streamed)", () =>
    Effect.gen(function*() {
      const usage = done(yield* run(own("anthropic", "thinking-usage.sse")))?.usage
      expect(usage).toMatchObject({ input: 47, output: 373, reasoning: 62, total: 420 })
    }))

  it.effect("reads thinking_tokens as reasoning, a part of output (recorded, non-streaming)", () =>
    Effect.gen(function*() {
      const events = yield* Anthropic.normalizeResponse(ownJson("anthropic", "recorded-thinking-tokens.json"))
      expect(done(events)?.usage).toMatchObject({ input: 51, output: 1699, reasoning: 139, total: 1750 })
      expect(done(events)?.usage?.iterations).toBeUndefined()
    }))

  it("never counts more reasoning than output, and none when the details are missing", () => {
    expect(Anthropic.usage({ output_tokens: 10, output_tokens_details: { thinking_tokens: 25 } })).toMatchObject({
      output: 10,
      reasoning: 10,
      total: 10
    })
    expect(Anthropic.usage({ output_tokens: 10, output_tokens_details: null })).toMatchObject({ reasoning: 0 })
    expect(Anthropic.usage({ output_tokens: 10 })).toMatchObject({ reasoning: 0 })
  })

  it.effect("keeps the top-level figures and lists the advisor's pass on its own model (recorded)", () =>
    Effect.gen(function*() {
      const events = yield* Anthropic.normalizeResponse(ownJson("anthropic", "recorded-advisor.json"))
      const usage = done(events)?.usage
      // the top level is the executor's two message passes (1051 + 1363 in, 35 + 3165 out)
      expect(usage).toMatchObject({ input: 2414, output: 3200, cacheRead: 0, cacheWrite: 0, total: 5614 })
      expect(usage?.iterations).toStrictEqual([
        { type: "message", input: 1051, output: 35, cacheRead: 0, cacheWrite: 0 },
        { type: "advisor_message", model: "claude-opus-4-7", input: 2728, output: 874, cacheRead: 0, cacheWrite: 0 },
        { type: "message", input: 1363, output: 3165, cacheRead: 0, cacheWrite: 0 }
      ])
      // the advisor call is a tool the provider ran, not one for the caller
      const summary = Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(events)))
      expect(summary.toolCalls).toStrictEqual([])
      expect(summary.providerToolCalls.map((call) => call.name)).toStrictEqual(["advisor"])
    }))

  it("skips iteration entries that are not objects and names an untyped one unknown", () => {
    const usage = Anthropic.usage({
      input_tokens: 3,
      output_tokens: 4,
      iterations: [null, 7, { input_tokens: 3, output_tokens: 4 }, { type: "compaction", input_tokens: -1 }]
    })
    expect(usage.iterations).toStrictEqual([
      { type: "unknown", input: 3, output: 4, cacheRead: 0, cacheWrite: 0 },
      { type: "compaction", input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
    ])
    expect(usage).toMatchObject({ input: 3, output: 4, total: 7 })
  })
})

describe("Anthropic pause_turn", () => {
  it.effect("ends the turn complete with finish reason paused, the paused server call kept (streamed and not)", () =>
    Effect.gen(function*() {
      const streamed = yield* run(own("anthropic", "pause-turn.sse"))
      const whole = yield* Anthropic.normalizeResponse(ownJson("anthropic", "pause-turn.json"))
      for (const events of [streamed, whole]) {
        expect(done(events)).toMatchObject({ status: "complete", finish_reason: "paused" })
        const summary = Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(events)))
        expect(summary.finishReason).toBe("paused")
        expect(summary.text).toBe("Let me look that up.")
        expect(summary.toolCalls).toStrictEqual([])
        expect(summary.providerToolCalls).toStrictEqual([
          { id: "srvtoolu_pause_1", name: "web_search", arguments: { query: "postgres 18 release date" } }
        ])
      }
      expect(finals(whole).map((item) => item.type)).toStrictEqual(finals(streamed).map((item) => item.type))
    }))
})

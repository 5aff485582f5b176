/**
 * A body cut at any byte, as a file that was copied short or a connection that dropped
 * mid-event leaves it: the turn is complete (the cut came after its terminal event) or
 * ends with status `error` and a `stream_truncated` error, keeping every event that
 * arrived whole before the cut. Never "invalid input".
 */
import { describe, expect, it } from "@effect/vitest"
import { Summary, Turn } from "@sluice/accumulator"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { ProviderName } from "../src/ProviderName.js"
import * as Providers from "../src/request/Providers.js"
import { bytes, errors, own, runReads } from "./support/normalizerHarness.js"

const samples: ReadonlyArray<readonly [ProviderName, string]> = [
  ["anthropic", "text-cache.sse"],
  ["openai-chat", "tools-interleaved.sse"],
  ["openai-responses", "parallel-tools.sse"],
  ["gemini", "text-cached-usage.sse"]
]

/** The end of the last event completed (blank line seen) at or before `cut`. */
const lastBoundary = (body: Uint8Array, cut: number): number => {
  for (let i = cut; i >= 2; i--) if (body[i - 1] === 10 && body[i - 2] === 10) return i
  return 0
}

const summaryOf = (provider: ProviderName, reads: ReadonlyArray<Uint8Array>) =>
  Effect.map(runReads(Providers.get(provider).normalize, reads), (events) => ({
    events,
    summary: Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(events)))
  }))

describe("a body cut at any byte", () => {
  for (const [provider, name] of samples) {
    it.effect(
      `${provider}/${name}: a complete turn, or a truncated one that keeps what arrived`,
      () =>
        Effect.gen(function*() {
          const body = bytes(own(provider, name))
          const whole = yield* summaryOf(provider, [body])
          expect(whole.summary.status).toBe("complete")
          const boundaries = new Map<number, Summary.Summary>()
          for (let cut = 0; cut <= body.length; cut++) {
            const at = `cut at byte ${cut}`
            const { events, summary } = yield* summaryOf(provider, [body.subarray(0, cut)])
            expect([at, summary.status === "complete" || summary.status === "error"]).toStrictEqual([at, true])
            if (summary.status === "error") {
              expect([at, errors(events).map((error) => error.code)]).toStrictEqual([at, ["stream_truncated"]])
            }
            // nothing past the cut, nothing before it lost
            const boundary = lastBoundary(body, cut)
            const before = boundaries.get(boundary) ??
              (yield* summaryOf(provider, [body.subarray(0, boundary)])).summary
            boundaries.set(boundary, before)
            expect([at, whole.summary.text.startsWith(summary.text), summary.text.startsWith(before.text)])
              .toStrictEqual([at, true, true])
            expect([at, whole.summary.reasoning.startsWith(summary.reasoning)]).toStrictEqual([at, true])
            expect(summary.toolCalls.length).toBeGreaterThanOrEqual(before.toolCalls.length)
          }
        }),
      120_000
    )
  }
})

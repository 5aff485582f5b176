/**
 * The properties every streaming normalizer keeps, over a set of transcripts: any
 * split of the bytes into reads gives the same events, corrupted bytes give a typed
 * failure or a turn that ends, never a defect, and the provider's `decodeSse` (framing
 * and normalizing in one step) gives what the two stages give, events and failures.
 */
import { expect, it } from "@effect/vitest"
import { checkEffect } from "@sluice/testing/property"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as FastCheck from "fast-check"
import type { Provider } from "../../src/request/Providers.js"
import * as Arbitraries from "./arbitraries.js"
import { bytes, corrupt, decodeSseOutcome, payloads, runReads, splitAt, stagesOutcome } from "./normalizerHarness.js"

export const transcriptProperties = (
  provider: Pick<Provider, "normalize" | "decodeSse">,
  transcripts: ReadonlyArray<readonly [string, string]>
): void => {
  const normalize = provider.normalize
  const bodies = transcripts.map(([name, text]) => [name, bytes(text)] as const)
  const pick = FastCheck.integer({ min: 0, max: bodies.length - 1 })

  it.effect(
    "any split of a transcript's bytes into reads gives the same events",
    () =>
      checkEffect(
        FastCheck.tuple(pick, Arbitraries.cuts),
        ([which, cuts]) =>
          Effect.gen(function*() {
            const [, body] = bodies[which]!
            const whole = yield* runReads(normalize, [body])
            const split = yield* runReads(normalize, splitAt(body, cuts))
            expect(payloads(split)).toStrictEqual(payloads(whole))
          }),
        { numRuns: 60 }
      ),
    120_000
  )

  it.effect(
    "corrupted bytes give a typed error or a turn that ends, never a defect",
    () =>
      checkEffect(
        FastCheck.tuple(pick, Arbitraries.edits, Arbitraries.cuts),
        ([which, edits, cuts]) =>
          Effect.gen(function*() {
            const [, body] = bodies[which]!
            const exit = yield* Effect.exit(runReads(normalize, splitAt(corrupt(body, edits), cuts)))
            if (Exit.isFailure(exit)) {
              expect(Cause.hasDies(exit.cause)).toBe(false)
              const failure = Option.getOrThrow(Cause.findErrorOption(exit.cause))
              expect(["WireDecodeError", "SseError"]).toContain(failure._tag)
              expect(failure.message.length).toBeGreaterThan(0)
            } else {
              const events = exit.value
              expect(events[events.length - 1]?.payload.type).toBe("response_done")
            }
          }),
        { numRuns: 150 }
      ),
    120_000
  )

  it.effect(
    "decodeSse (framing and normalizing in one step) gives the events and the failure the two stages give",
    () =>
      checkEffect(
        FastCheck.tuple(pick, FastCheck.option(Arbitraries.edits), Arbitraries.cuts, FastCheck.boolean()),
        ([which, edits, cuts, oneByOne]) =>
          Effect.gen(function*() {
            const [, body] = bodies[which]!
            const reads = splitAt(edits === null ? body : corrupt(body, edits), cuts)
            const stages = yield* stagesOutcome(normalize, reads, oneByOne)
            const fused = yield* decodeSseOutcome(provider.decodeSse, reads, oneByOne)
            expect(fused).toStrictEqual(stages)
          }),
        { numRuns: 150 }
      ),
    120_000
  )

  it.effect("decodeSse gives what the two stages give when the body ends inside an event on a byte that is not UTF-8", () =>
    Effect.gen(function*() {
      for (const [, body] of bodies) {
        // the first half of the body, cut inside an event, then a byte no character starts with
        const cut = new Uint8Array([...body.subarray(0, body.length >> 1), 0xff])
        for (const oneByOne of [false, true]) {
          const stages = yield* stagesOutcome(normalize, splitAt(cut, [cut.length >> 1]), oneByOne)
          expect(stages.failure?.[0]).toBe("SseError")
          expect(yield* decodeSseOutcome(provider.decodeSse, splitAt(cut, [cut.length >> 1]), oneByOne))
            .toStrictEqual(stages)
        }
      }
    }))
}

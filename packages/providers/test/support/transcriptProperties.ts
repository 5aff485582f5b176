/**
 * The properties every streaming normalizer keeps, over a set of transcripts: any
 * split of the bytes into reads gives the same events, and corrupted bytes give a
 * typed failure or a turn that ends, never a defect.
 */
import { expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as FastCheck from "fast-check"
import { checkEffect } from "../../../../scripts/effectProperty.js"
import type { Normalize } from "../../src/Normalizer.js"
import * as Arbitraries from "./arbitraries.js"
import { bytes, corrupt, payloads, runReads, splitAt } from "./normalizerHarness.js"

export const transcriptProperties = (
  normalize: Normalize,
  transcripts: ReadonlyArray<readonly [string, string]>
): void => {
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
}

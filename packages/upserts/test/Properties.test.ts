import { describe, expect, it } from "@effect/vitest"
import type { StreamBMessage, UIUpsert } from "@sluice/core"
import { Tokens } from "@sluice/core"
import * as F from "@sluice/testing/fixtures"
import { turnArb } from "@sluice/testing/fixtures"
import { checkEffect } from "@sluice/testing/property"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as FastCheck from "fast-check"
import * as Gradient from "../src/Gradient.js"
import * as UpsertStream from "../src/UpsertStream.js"

const upsertsOf = (out: ReadonlyArray<StreamBMessage.UIPayload>, itemId: string) =>
  out.filter((p): p is UIUpsert.UIUpsert => p.type === "item_upsert" && p.itemId === itemId)

describe("UpsertStream.upserts: properties (clock not advancing)", () => {
  it.effect("the last upsert of each item is completed, with the concatenated deltas", () =>
    checkEffect(
      FastCheck.record({ turn: turnArb }),
      ({ turn }) =>
        Effect.gen(function*() {
          const out = yield* F.runStage(turn.events, { batchGradient: turn.gradient })
          for (const item of turn.items) {
            const upserts = upsertsOf(out, item.id)
            const last = upserts[upserts.length - 1]
            expect(last?.changeType).toBe("completed")
            expect(last?.content).toBe(item.deltas.join(""))
            expect(upserts.filter((u) => u.changeType === "completed").length).toBe(1)
          }
          expect(out[0]?.type).toBe("turn_started")
          expect(out[out.length - 1]?.type).toBe("turn_completed")
        }),
      { numRuns: 150 }
    ), 120_000)

  it.effect("each upsert's content is a prefix of the next, and only completed repeats content", () =>
    checkEffect(
      FastCheck.record({ turn: turnArb }),
      ({ turn }) =>
        Effect.gen(function*() {
          const out = yield* F.runStage(turn.events, { batchGradient: turn.gradient })
          for (const item of turn.items) {
            const upserts = upsertsOf(out, item.id)
            for (let i = 1; i < upserts.length; i++) {
              expect(upserts[i]!.content.startsWith(upserts[i - 1]!.content)).toBe(true)
              if (upserts[i]!.changeType !== "completed") expect(upserts[i]!.content).not.toBe(upserts[i - 1]!.content)
            }
            if (upserts.length > 1) expect(upserts[0]!.changeType).toBe("created")
          }
        }),
      { numRuns: 150 }
    ), 120_000)

  it.effect("at most one upsert per cumulative threshold crossed, plus created and completed", () =>
    checkEffect(
      FastCheck.record({ turn: turnArb }),
      ({ turn }) =>
        Effect.gen(function*() {
          const gradient = Gradient.make([turn.gradient[0]!, ...turn.gradient.slice(1)])
          const out = yield* F.runStage(turn.events, { batchGradient: turn.gradient })
          for (const item of turn.items) {
            const tokens = Tokens.estimateTokenCount(item.deltas.join(""))
            const upserts = upsertsOf(out, item.id)
            expect(upserts.length).toBeLessThanOrEqual(Gradient.crossedBy(gradient, tokens) + 2)
          }
        }),
      { numRuns: 150 }
    ), 120_000)

  it.effect("no timers or fibers remain after the stream ends or is interrupted", () =>
    checkEffect(
      FastCheck.record({
        turn: turnArb,
        cut: FastCheck.double({ min: 0, max: 1, noNaN: true }),
        how: FastCheck.constantFrom("end", "interrupt-input", "interrupt-output", "take")
      }),
      ({ cut, how, turn }) =>
        Effect.gen(function*() {
          const fibers = yield* F.trackFibers
          const events = turn.events.slice(0, Math.floor(cut * turn.events.length))
          const stop = yield* Deferred.make<void>()
          const input = how === "end" || how === "take"
            ? Stream.fromIterable(events)
            // An input that never ends by itself: it stalls after the events until stopped.
            : Stream.concat(Stream.fromIterable(events), Stream.never).pipe(
              Stream.interruptWhen(how === "interrupt-input" ? Deferred.await(stop) : Effect.never)
            )
          const staged = input.pipe(UpsertStream.upserts({ batchGradient: turn.gradient }))
          const run = how === "take" ? Stream.runCollect(Stream.take(staged, 2)) : Stream.runCollect(staged)
          const fiber = yield* Effect.forkChild(fibers.track(run))
          yield* Effect.repeat(Effect.yieldNow, { times: 20 })
          // While the input stalls, the stage's fibers are alive and tracked.
          if (how !== "end" && how !== "take") expect(yield* fibers.active).toBeGreaterThan(0)
          if (how === "interrupt-input") yield* Deferred.succeed(stop, undefined)
          if (how === "interrupt-output") yield* Fiber.interrupt(fiber)
          else {
            const out = yield* Fiber.join(fiber)
            // When the turn started and the input ended early, the turn is closed as aborted.
            if (how !== "take" && events.length > 0 && events[events.length - 1]?.payload.type !== "response_done") {
              expect(out[out.length - 1]).toStrictEqual(F.turnCompleted("aborted"))
            }
          }
          expect(yield* fibers.active).toBe(0)
        }),
      { numRuns: 100 }
    ), 120_000)
})

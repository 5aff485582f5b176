/**
 * The accumulator and the upsert stage read the event protocol the same way: for any
 * sequence of events, valid or not, both accept it or both refuse the same event for
 * the same rule, and that is what core's `EventOrder` decides.
 */
import { describe, expect, it } from "@effect/vitest"
import { Turn } from "@sluice/accumulator"
import { EventOrder, type StreamEvent } from "@sluice/core"
import * as F from "@sluice/testing/fixtures"
import { checkEffect } from "@sluice/testing/property"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"

// The accumulator's names for two of the rules.
const accumulatorReason = (rule: string): string =>
  rule === "TurnEnded" ? "EventAfterResponseDone" : rule === "ItemEnded" ? "ItemAlreadyDone" : rule

type Verdict = "accepted" | { readonly rule: string; readonly eventType: string; readonly itemId: string | undefined }

const ids = ["user-1", "msg-1", "fc-1"] as const

// One event from a small alphabet: a few item ids (a held user message among them),
// every event type.
const anyEvent: FastCheck.Arbitrary<() => StreamEvent.StreamEvent> = FastCheck.constantFrom(...ids).chain((id) =>
  FastCheck.constantFrom(
    () => F.responseStart(),
    () => F.responseDone(),
    () => F.responseError("E", "boom"),
    () => F.itemStart(id, id === "fc-1" ? "function_call" : "message", id === "fc-1" ? { name: "search" } : {}),
    () => F.delta(id, "x"),
    () => (id === "fc-1"
      ? F.callDone(id, "search", "{}", "call-1")
      : F.messageDone(id, "x", id === "user-1" ? "user" : "agent")),
    () => F.itemError(id, "E", "bad"),
    () => F.cancelled(id)
  )
)

// A well-formed turn: its items started, streamed and ended in some interleaving.
const wellFormed: FastCheck.Arbitrary<Array<() => StreamEvent.StreamEvent>> = FastCheck.shuffledSubarray([...ids])
  .chain((chosen) =>
    FastCheck.tuple(
      ...chosen.map((id) =>
        FastCheck.tuple(FastCheck.nat({ max: 3 }), FastCheck.constantFrom("done", "error", "cancelled")).map((
          [deltas, end]
        ) => [
          () => F.itemStart(id, "message"),
          ...Array.from({ length: deltas }, () => () => F.delta(id, "x")),
          end === "done"
            ? () => F.messageDone(id, "x".repeat(deltas))
            : end === "error"
            ? () => F.itemError(id, "E", "bad")
            : () => F.cancelled(id)
        ])
      )
    ).map((items) => [() => F.responseStart(), ...items.flat(), () => F.responseDone()])
  )

// A well-formed turn with a few events moved, repeated or dropped, or just random
// events: invalid orders of every kind, and valid ones.
const sequences: FastCheck.Arbitrary<Array<StreamEvent.StreamEvent>> = FastCheck.oneof(
  wellFormed,
  FastCheck.tuple(
    wellFormed,
    FastCheck.array(
      FastCheck.tuple(FastCheck.nat(), FastCheck.nat(), FastCheck.constantFrom("move", "repeat", "drop")),
      { minLength: 1, maxLength: 3 }
    )
  )
    .map(([makers, edits]) => {
      const out = [...makers]
      for (const [from, to, edit] of edits) {
        if (out.length === 0) break
        const i = from % out.length
        const maker = out[i]!
        if (edit !== "repeat") out.splice(i, 1)
        if (edit !== "drop") out.splice(to % (out.length + 1), 0, maker)
      }
      return out
    }),
  FastCheck.array(anyEvent, { maxLength: 12 }).map((makers) => [() => F.responseStart(), ...makers])
).map((makers) => makers.map((make) => make()))

const ofCore = (events: ReadonlyArray<StreamEvent.StreamEvent>): Verdict => {
  const result = EventOrder.fromEvents(events)
  return Result.isSuccess(result)
    ? "accepted"
    : { rule: result.failure.rule, eventType: result.failure.eventType, itemId: result.failure.itemId }
}

const ofAccumulator = (events: ReadonlyArray<StreamEvent.StreamEvent>): Verdict => {
  const result = Turn.fromEvents(events)
  return Result.isSuccess(result)
    ? "accepted"
    : { rule: result.failure.reason, eventType: result.failure.eventType, itemId: result.failure.itemId }
}

const ofUpserts = (events: ReadonlyArray<StreamEvent.StreamEvent>): Effect.Effect<Verdict> =>
  F.runStage(events).pipe(
    Effect.result,
    Effect.map((result): Verdict =>
      Result.isSuccess(result)
        ? "accepted"
        : result.failure._tag === "UnexpectedEvent"
        ? { rule: result.failure.reason, eventType: result.failure.eventType, itemId: result.failure.itemId }
        : { rule: result.failure._tag, eventType: "", itemId: undefined }
    )
  )

describe("the order rules of the accumulator and the upsert stage", () => {
  it.effect("accept and refuse exactly the same event sequences, as core's EventOrder does", () =>
    checkEffect(
      FastCheck.tuple(sequences),
      ([events]) =>
        Effect.gen(function*() {
          const core = ofCore(events)
          const upserts = yield* ofUpserts(events)
          const accumulator = ofAccumulator(events)
          expect(upserts).toStrictEqual(core)
          expect(accumulator).toStrictEqual(
            core === "accepted" ? core : { ...core, rule: accumulatorReason(core.rule) }
          )
        }),
      { numRuns: 300 }
    ), 120_000)

  it.effect("refuse an event for an item that already ended, in both folds", () =>
    Effect.gen(function*() {
      const events = [
        F.responseStart(),
        F.itemStart("msg-1", "message"),
        F.messageDone("msg-1", "x"),
        F.delta("msg-1", "y")
      ]
      expect(yield* ofUpserts(events)).toStrictEqual({ rule: "ItemEnded", eventType: "item_delta", itemId: "msg-1" })
      expect(ofAccumulator(events)).toStrictEqual({ rule: "ItemAlreadyDone", eventType: "item_delta", itemId: "msg-1" })
    }))
})

import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"
import { EventOrder, StreamEvent } from "../src/index.js"

const runId = "5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69"
let counter = 0
const event = (payload: StreamEvent.Payload): StreamEvent.StreamEvent =>
  StreamEvent.envelope({ runId }, payload, `00000000-0000-4000-8000-${String(counter++).padStart(12, "0")}`, 0)

const start = () =>
  event({
    type: "response_start",
    response_id: runId,
    turn_id: runId,
    thread_id: runId,
    model_id: "m",
    provider_id: "p",
    created_at: 0
  })
const done = () => event({ type: "response_done", response_id: runId, status: "complete", finish_reason: "stop" })
const failed = () => event({ type: "response_error", response_id: runId, error: { code: "E", message: "boom" } })
const itemStart = (id: string) => event({ type: "item_start", item_id: id, item_type: "message" })
const delta = (id: string) => event({ type: "item_delta", item_id: id, delta_content: "x" })
const itemDone = (id: string) =>
  event({ type: "item_done", item_id: id, final_item: { type: "message", id, content: "x", origin: "agent" } })
const itemError = (id: string) => event({ type: "item_error", item_id: id, error: { code: "E", message: "bad" } })
const itemCancelled = (id: string) => event({ type: "item_cancelled", item_id: id })

const ruleOf = (events: ReadonlyArray<StreamEvent.StreamEvent>) => {
  const result = EventOrder.fromEvents(events)
  return Result.isFailure(result) ? result.failure.rule : "accepted"
}

// The rules again, said another way: from the events accepted so far, not from a state.
const oracle = (
  accepted: ReadonlyArray<StreamEvent.StreamEvent>,
  next: StreamEvent.StreamEvent
): EventOrder.Rule | undefined => {
  const types = accepted.map((e) => e.type)
  if (types.includes("response_done")) return "TurnEnded"
  if (next.type === "response_start") return types.includes("response_start") ? "AlreadyStarted" : undefined
  if (!types.includes("response_start")) return "NotStarted"
  const id = EventOrder.itemIdOf(next.payload)
  if (id === undefined) return undefined
  const last = accepted.filter((e) => EventOrder.itemIdOf(e.payload) === id).at(-1)?.type
  const open = last === "item_start" || last === "item_delta"
  if (next.type === "item_start") return last === undefined ? undefined : "DuplicateItem"
  if (next.type === "item_done") return last === undefined || open ? undefined : "ItemEnded"
  return open ? undefined : last === undefined ? "UnknownItem" : "ItemEnded"
}

const anyEvent = FastCheck.constantFrom("a", "b").chain((id) =>
  FastCheck.constantFrom(
    start,
    done,
    failed,
    () => itemStart(id),
    () => delta(id),
    () => itemDone(id),
    () => itemError(id),
    () => itemCancelled(id)
  )
)
const sequences = FastCheck.array(anyEvent, { maxLength: 14 }).map((
  makers
) => [start(), ...makers.map((make) => make())])

describe("EventOrder", () => {
  it("accepts a well-formed turn, item_done without item_start, and repeated response_error", () => {
    expect(
      ruleOf([
        start(),
        itemStart("a"),
        delta("a"),
        failed(),
        itemDone("a"),
        itemDone("u"),
        failed(),
        itemStart("b"),
        done()
      ])
    ).toBe("accepted")
  })

  it("names each rule an event breaks", () => {
    expect(ruleOf([delta("a")])).toBe("NotStarted")
    expect(ruleOf([done()])).toBe("NotStarted")
    expect(ruleOf([start(), start()])).toBe("AlreadyStarted")
    expect(ruleOf([start(), done(), failed()])).toBe("TurnEnded")
    expect(ruleOf([start(), done(), start()])).toBe("TurnEnded")
    expect(ruleOf([start(), delta("a")])).toBe("UnknownItem")
    expect(ruleOf([start(), itemCancelled("a")])).toBe("UnknownItem")
    expect(ruleOf([start(), itemStart("a"), itemStart("a")])).toBe("DuplicateItem")
    expect(ruleOf([start(), itemDone("a"), itemStart("a")])).toBe("DuplicateItem")
    expect(ruleOf([start(), itemStart("a"), itemError("a"), delta("a")])).toBe("ItemEnded")
    expect(ruleOf([start(), itemStart("a"), itemCancelled("a"), itemDone("a")])).toBe("ItemEnded")
  })

  it("names the event, its item and the item's state in the refusal", () => {
    const late = delta("a")
    const result = EventOrder.fromEvents([start(), itemStart("a"), itemDone("a"), late])
    expect(Result.isFailure(result)).toBe(true)
    if (Result.isFailure(result)) {
      expect(result.failure).toBeInstanceOf(EventOrder.OrderViolation)
      expect(result.failure).toMatchObject({
        rule: "ItemEnded",
        eventId: late.event_id,
        eventType: "item_delta",
        itemId: "a",
        itemState: "done",
        detail: "the item is already done",
        message: `item_delta ${late.event_id} for item "a": the item is already done`
      })
    }
  })

  it("accepts with the one shared verdict", () => {
    expect(EventOrder.check("started", "open", delta("a"))).toBe(EventOrder.accepted)
  })

  it("step refuses exactly the events the rules, read from the events before, refuse", () => {
    FastCheck.assert(
      FastCheck.property(sequences, (events) => {
        let state = EventOrder.initial
        const accepted: Array<StreamEvent.StreamEvent> = []
        for (const next of events) {
          const expected = oracle(accepted, next)
          const before = { phase: state.phase, items: new Map(state.items) }
          const result = EventOrder.step(state, next)
          expect(state).toStrictEqual(before)
          if (Result.isFailure(result)) {
            expect(result.failure.rule).toBe(expected)
            expect(result.failure.eventId).toBe(next.event_id)
            return
          }
          expect(expected).toBeUndefined()
          accepted.push(next)
          state = result.success
        }
      }),
      { numRuns: 300 }
    )
  }, 60_000)

  it("a refusal stops nothing before it: the accepted prefix folds to a state", () => {
    FastCheck.assert(
      FastCheck.property(sequences, (events) => {
        const result = EventOrder.fromEvents(events)
        if (Result.isSuccess(result)) {
          expect(result.success.phase).not.toBe("before_start")
          return
        }
        const at = events.findIndex((e) => e.event_id === result.failure.eventId)
        expect(at).toBeGreaterThan(0)
        expect(Result.isSuccess(EventOrder.fromEvents(events.slice(0, at)))).toBe(true)
      }),
      { numRuns: 200 }
    )
  }, 60_000)
})

import { describe, expect, it } from "@effect/vitest"
import { event, itemsArbitrary, script, turnEvents } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as FastCheck from "fast-check"
import { Accumulator, Summary, Turn } from "../src/index.js"

const cuts = FastCheck.array(FastCheck.nat({ max: 80 }), { maxLength: 12 })

const fold = (events: Parameters<typeof Turn.fromEvents>[0]) => Result.getOrThrow(Turn.fromEvents(events))

describe("Turn", () => {
  it("folds a turn into ordered items with content indexes, usage and finish reason", () => {
    const events = turnEvents(
      script(
        [
          { type: "reasoning", id: "item_0", content: "think", signature: "sig" },
          { type: "message", id: "item_1", content: "Hello there", origin: "agent" },
          { type: "function_call", id: "item_2", call_id: "call_1", name: "add", arguments: "{\"a\":1}" }
        ],
        [2, 5]
      )
    )
    const turn = fold(events)
    expect(turn.status).toBe("complete")
    expect(turn.items.map((item) => [item.id, item.contentIndex, item.status, item.content])).toStrictEqual([
      ["item_0", 0, "done", "think"],
      ["item_1", 1, "done", "Hello there"],
      ["item_2", 2, "done", "{\"a\":1}"]
    ])
    expect(turn.finishReason).toBe("stop")
    expect(turn.usage.total).toBe(7)
    expect(Summary.fromTurn(turn)).toStrictEqual({
      provider: "test",
      status: "complete",
      text: "Hello there",
      reasoning: "think",
      reasoningSummary: "",
      reasoningRaw: "think",
      toolCalls: [{ id: "call_1", name: "add", arguments: { a: 1 } }],
      providerToolCalls: [],
      approvalRequests: [],
      finishReason: "stop",
      usage: { input: 3, output: 4, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 7 },
      errors: []
    })
  })

  it("keeps malformed tool arguments as _invalid_arguments in the summary", () => {
    const events = turnEvents(
      script([{ type: "function_call", id: "item_0", call_id: "c", name: "f", arguments: "{\"a\":" }], [])
    )
    // and marked `invalid` (test/InvalidArguments.test.ts)
    expect(Summary.fromTurn(fold(events)).toolCalls).toMatchObject([
      { id: "c", name: "f", arguments: { _invalid_arguments: "{\"a\":" } }
    ])
  })

  it("refuses a delta for an item that never started, naming the event and item", () => {
    const [start] = turnEvents([])
    const delta = event({ type: "item_delta", item_id: "ghost", delta_content: "x" })
    const result = Turn.fromEvents([start!, delta])
    expect(Result.isFailure(result)).toBe(true)
    if (Result.isFailure(result)) {
      expect(result.failure.reason).toBe("UnknownItem")
      expect(result.failure.itemId).toBe("ghost")
      expect(result.failure.eventId).toBe(delta.event_id)
      expect(result.failure.message).toContain(delta.event_id)
    }
  })

  it("refuses a second item_done, a duplicate item_start and events after response_done", () => {
    const events = turnEvents(script([{ type: "message", id: "item_0", content: "hi", origin: "agent" }], []))
    const done = events.find((e) => e.type === "item_done")!
    const start = events.find((e) => e.type === "item_start")!
    const beforeEnd = events.slice(0, -1)
    const reasonOf = (
      result: ReturnType<typeof Turn.fromEvents>
    ) => (Result.isFailure(result) ? result.failure.reason : "accepted")
    expect(reasonOf(Turn.fromEvents([...beforeEnd, done]))).toBe("ItemAlreadyDone")
    expect(reasonOf(Turn.fromEvents([...beforeEnd, start]))).toBe("DuplicateItem")
    expect(reasonOf(Turn.fromEvents([...events, event({ type: "item_delta", item_id: "item_0", delta_content: "x" })])))
      .toBe(
        "EventAfterResponseDone"
      )
  })

  it("refuses item events before response_start and a second response_start", () => {
    const [start] = turnEvents([])
    const item = event({ type: "item_start", item_id: "a", item_type: "message" })
    const reasonOf = (
      result: ReturnType<typeof Turn.fromEvents>
    ) => (Result.isFailure(result) ? result.failure.reason : "accepted")
    expect(reasonOf(Turn.fromEvents([item]))).toBe("NotStarted")
    expect(reasonOf(Turn.fromEvents([start!, start!]))).toBe("AlreadyStarted")
  })

  it("records item errors and cancellations", () => {
    const [start] = turnEvents([])
    const turn = fold([
      start!,
      event({ type: "item_start", item_id: "a", item_type: "message" }),
      event({ type: "item_delta", item_id: "a", delta_content: "partial" }),
      event({ type: "item_error", item_id: "a", error: { code: "CONTENT_FILTER", message: "blocked" } }),
      event({ type: "item_start", item_id: "b", item_type: "message" }),
      event({ type: "item_cancelled", item_id: "b" })
    ])
    expect(turn.items.map((item) => item.status)).toStrictEqual(["error", "cancelled"])
    expect(turn.errors).toStrictEqual([{ code: "CONTENT_FILTER", message: "blocked" }])
    expect(Summary.fromTurn(turn).errors).toStrictEqual([
      { type: "api_error", code: "CONTENT_FILTER", message: "blocked", retryable: false }
    ])
  })

  it("accepts an item_done for an item that never started, adding it whole", () => {
    const [start] = turnEvents([])
    const turn = fold([
      start!,
      event({
        type: "item_done",
        item_id: "u",
        final_item: { type: "message", id: "u", content: "hi", origin: "user" }
      })
    ])
    expect(turn.items.map((item) => [item.id, item.status, item.content])).toStrictEqual([["u", "done", "hi"]])
  })

  it("the final turn does not depend on how deltas are split", () => {
    FastCheck.assert(
      FastCheck.property(itemsArbitrary, cuts, cuts, (items, a, b) => {
        const one = fold(turnEvents(script(items, a)))
        const two = fold(turnEvents(script(items, b)))
        expect(two.items).toStrictEqual(one.items)
        expect(Summary.fromTurn(two)).toStrictEqual(Summary.fromTurn(one))
      }),
      { numRuns: 100 }
    )
  }, 60_000)

  it("every partial turn is a prefix of the final one", () => {
    FastCheck.assert(
      FastCheck.property(itemsArbitrary, cuts, (items, c) => {
        const events = turnEvents(script(items, c))
        const final = fold(events)
        let turn = Turn.empty
        for (const e of events) {
          turn = Result.getOrThrow(Turn.step(turn, e))
          expect(turn.items.length).toBeLessThanOrEqual(final.items.length)
          turn.items.forEach((item, i) => {
            const last = final.items[i]!
            expect(item.id).toBe(last.id)
            expect(item.contentIndex).toBe(last.contentIndex)
            expect(last.content.startsWith(item.content)).toBe(true)
          })
        }
      }),
      { numRuns: 100 }
    )
  }, 60_000)
})

describe("Accumulator", () => {
  it.effect("emits each event with the partial turn, and runTurn gives the final turn", () =>
    Effect.gen(function*() {
      const events = turnEvents(script([{ type: "message", id: "item_0", content: "abcdef", origin: "agent" }], [2, 4]))
      const steps = yield* Stream.fromIterable(events).pipe(Accumulator.accumulate, Stream.runCollect)
      expect([...steps].map((s) => s.event)).toStrictEqual(events)
      expect([...steps].map((s) => s.turn.items[0]?.content ?? null)).toStrictEqual([
        null,
        "",
        "ab",
        "abcd",
        "abcdef",
        "abcdef",
        "abcdef"
      ])
      const turn = yield* Accumulator.runTurn(Stream.fromIterable(events))
      expect(turn).toStrictEqual([...steps].at(-1)!.turn)
    }))

  it.effect("fails with AccumulatorError after emitting the steps before the refused event", () =>
    Effect.gen(function*() {
      const [start] = turnEvents([])
      const bad = event({ type: "item_delta", item_id: "ghost", delta_content: "x" })
      const seen: Array<string> = []
      const result = yield* Stream.make(start!, bad).pipe(
        Accumulator.accumulate,
        Stream.runForEach((s) => Effect.sync(() => seen.push(s.event.type))),
        Effect.flip
      )
      expect(seen).toStrictEqual(["response_start"])
      expect(result.reason).toBe("UnknownItem")
      const viaRun = yield* Effect.flip(Accumulator.runTurn(Stream.make(start!, bad)))
      expect(viaRun.eventId).toBe(bad.event_id)
    }))

  it("foldEvents takes the events before a refused one, with the turn after them", () => {
    const events = turnEvents(script([{ type: "message", id: "item_0", content: "abc", origin: "agent" }], [1]))
    const bad = event({ type: "item_delta", item_id: "ghost", delta_content: "x" })
    const seen: Array<string> = []
    const whole = Accumulator.foldEvents(Turn.empty, events)
    expect(whole.taken).toBe(events.length)
    expect(whole.refused).toBeUndefined()
    const cut = Accumulator.foldEvents(Turn.empty, [...events.slice(0, 3), bad, ...events.slice(3)], (e) => {
      seen.push(e.event_id)
    })
    expect(cut.taken).toBe(3)
    expect(cut.refused?.reason).toBe("UnknownItem")
    expect(seen).toStrictEqual(events.slice(0, 3).map((e) => e.event_id))
    expect(cut.turn).toStrictEqual(Accumulator.foldEvents(Turn.empty, events.slice(0, 3)).turn)
  })
})

import { describe, expect, it } from "@effect/vitest"
import { Usage } from "@sluice/core"
import * as F from "@sluice/testing/fixtures"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { InvalidUpsertOptions, UnexpectedEvent } from "../src/UpsertErrors.js"
import type { UpsertOptionsInput } from "../src/UpsertOptions.js"
import * as UpsertStream from "../src/UpsertStream.js"

const agent = { origin: "agent" } as const

const stamped = (received: ReadonlyArray<F.Received>) => received.map((r) => [r.at, F.contents([r])[0]] as const)

describe("UpsertStream.upserts: timers", () => {
  it.effect("each item's timer is its own and restarts with every delta", () =>
    Effect.gen(function*() {
      const stage = yield* F.startStage({ batchTimeoutMs: 1000 })
      yield* stage.send(F.responseStart(), F.itemStart("a", "message"), F.delta("a", "A1"), F.delta("a", "A2"))
      yield* TestClock.adjust(400)
      yield* stage.send(F.itemStart("b", "reasoning"), F.delta("b", "B1"), F.delta("b", "B2"))
      yield* TestClock.adjust(500)
      yield* stage.send(F.delta("a", "A3")) // a's timer is now due at 1900
      yield* TestClock.adjust(500) // 1400: b is due
      yield* stage.settle
      yield* TestClock.adjust(500) // 1900: a is due
      expect(stamped(yield* stage.take(5))).toStrictEqual([
        [0, "turn_started"],
        [0, "created:A1"],
        [400, "created:B1"],
        [1400, "updated:B1B2"],
        [1900, "updated:A1A2A3"]
      ])
      yield* stage.end
      expect(F.contents(yield* stage.drain)).toStrictEqual(["turn_completed"])
    }))

  it.effect("a timer with nothing unemitted emits nothing; held items never time out", () =>
    Effect.gen(function*() {
      const stage = yield* F.startStage({ batchTimeoutMs: 100 })
      yield* stage.send(
        F.responseStart(),
        F.itemStart("msg-1", "message"),
        F.delta("msg-1", "Hello"),
        F.itemStart("user-1", "message"),
        F.delta("user-1", "What is"),
        F.itemStart("fc-1", "function_call", { name: "search" }),
        F.delta("fc-1", "{\"q\":")
      )
      for (let i = 0; i < 10; i++) yield* TestClock.adjust(100)
      expect(F.contents(yield* stage.drain)).toStrictEqual(["turn_started", "created:Hello"])
      yield* stage.send(F.messageDone("user-1", "What is the weather?", "user"))
      expect((yield* stage.drain).map((r) => r.payload)).toStrictEqual([
        F.upsert("user-1", "message", "completed", "What is the weather?", { origin: "user" })
      ])
    }))

  it.effect("item_cancelled drops the item and its timer without emitting", () =>
    Effect.gen(function*() {
      const stage = yield* F.startStage({ batchTimeoutMs: 100 })
      yield* stage.send(
        F.responseStart(),
        F.itemStart("msg-1", "message"),
        F.delta("msg-1", "Hel"),
        F.delta("msg-1", "lo")
      )
      yield* stage.send(F.cancelled("msg-1"))
      yield* TestClock.adjust(1000)
      yield* stage.send(F.responseDone())
      yield* stage.end
      expect(F.contents(yield* stage.drain)).toStrictEqual(["turn_started", "created:Hel", "turn_completed"])
    }))
})

describe("UpsertStream.upserts: items and turns", () => {
  it.effect("initial content is emitted at once; function_call deltas are held; bad arguments stay raw", () =>
    Effect.gen(function*() {
      const out = yield* F.runStage([
        F.responseStart("openai"),
        F.itemStart("msg-1", "message", { initial_content: "Sure" }),
        F.itemStart("fc-1", "function_call", { name: "search", arguments: "{\"q\":" }),
        F.delta("fc-1", " oops"),
        F.callDone("fc-1", "search", "{\"q\": oops", "call-9"),
        F.itemStart("script-1", "script_execution", { code: "print(1)" }),
        F.done("script-1", { type: "script_execution", id: "script-1", code: "print(1)", output: "1" }),
        F.itemStart("err-1", "error"),
        F.done("err-1", { type: "error", id: "err-1", code: "E1", message: "broken" }),
        F.messageDone("msg-1", "Sure"),
        F.responseDone("complete", Usage.make({ input: 10, cacheRead: 5, output: 7, reasoning: 2 }))
      ])
      expect(out).toStrictEqual([
        F.turnStarted("openai"),
        F.upsert("msg-1", "message", "created", "Sure", agent),
        F.upsert("fc-1", "tool_call", "completed", "{\"q\": oops", {
          toolName: "search",
          toolArguments: "{\"q\": oops",
          callId: "call-9"
        }),
        F.upsert("script-1", "tool_call", "completed", "print(1)", {
          toolName: "script_execution",
          toolArguments: { code: "print(1)" },
          toolOutput: 1
        }),
        F.upsert("err-1", "error", "completed", "broken", { errorCode: "E1", errorMessage: "broken" }),
        F.upsert("msg-1", "message", "completed", "Sure", agent),
        {
          ...F.turnCompleted(),
          usage: {
            promptTokens: 15,
            completionTokens: 7,
            totalTokens: 22,
            inputTokens: 10,
            cacheReadTokens: 5,
            cacheWriteTokens: 0,
            reasoningTokens: 2
          }
        }
      ])
    }))

  it.effect("response_error flushes and emits turn_error; a later response_done completes the turn", () =>
    Effect.gen(function*() {
      const out = yield* F.runStage([
        F.responseStart(),
        F.itemStart("msg-1", "message"),
        F.delta("msg-1", "Par"),
        F.delta("msg-1", "tial"),
        F.responseError("overloaded", "Overloaded"),
        F.responseDone("error")
      ])
      expect(out).toStrictEqual([
        F.turnStarted(),
        F.upsert("msg-1", "message", "created", "Par", agent),
        F.upsert("msg-1", "message", "updated", "Partial", agent),
        F.turnError("overloaded", "Overloaded"),
        F.turnCompleted("error")
      ])
    }))

  it.effect("an input that ends before response_done flushes, including held items, and ends as aborted", () =>
    Effect.gen(function*() {
      const out = yield* F.runStage([
        F.responseStart(),
        F.itemStart("run-1-user-prompt", "message"),
        F.delta("run-1-user-prompt", "Hi"),
        F.itemStart("msg-1", "message"),
        F.delta("msg-1", "Hel"),
        F.delta("msg-1", "lo")
      ])
      expect(out).toStrictEqual([
        F.turnStarted(),
        F.upsert("msg-1", "message", "created", "Hel", agent),
        F.upsert("run-1-user-prompt", "message", "created", "Hi", { origin: "user" }),
        F.upsert("msg-1", "message", "updated", "Hello", agent),
        F.turnCompleted("aborted")
      ])
    }))

  it.effect("a user message is held by its origin as well as by its id: one completed upsert, origin user", () =>
    Effect.gen(function*() {
      const out = yield* F.runStage([
        F.responseStart(),
        F.itemStart("msg-7", "message", { origin: "user", initial_content: "What is" }),
        F.delta("msg-7", " the weather?"),
        F.messageDone("msg-7", "What is the weather?", "user"),
        F.itemStart("msg-8", "message", { origin: "system", initial_content: "Be brief." }),
        F.messageDone("msg-8", "Be brief.", "system"),
        F.responseDone()
      ])
      expect(out).toStrictEqual([
        F.turnStarted(),
        F.upsert("msg-7", "message", "completed", "What is the weather?", { origin: "user" }),
        F.upsert("msg-8", "message", "created", "Be brief.", { origin: "system" }),
        F.upsert("msg-8", "message", "completed", "Be brief.", { origin: "system" }),
        F.turnCompleted()
      ])
    }))

  it.effect("a compaction item streams like reasoning and completes as itemType compaction with its provider", () =>
    Effect.gen(function*() {
      const out = yield* F.runStage([
        F.responseStart(),
        F.itemStart("c", "compaction"),
        F.delta("c", "## Summary"),
        F.done("c", { type: "compaction", id: "c", content: "## Summary" }),
        F.responseDone()
      ])
      const upserts = out.flatMap((
        payload
      ) => (payload.type === "item_upsert"
        ? [[payload.itemType, payload.changeType, payload.content, payload.providerId]]
        : [])
      )
      expect(upserts).toStrictEqual([
        ["compaction", "created", "## Summary", upserts[0]![3]],
        ["compaction", "completed", "## Summary", upserts[0]![3]]
      ])
      expect(typeof upserts[0]![3]).toBe("string")
    }))

  it.effect("a tool the provider ran: its call and output upserts say providerExecuted; a client call does not", () =>
    Effect.gen(function*() {
      const out = yield* F.runStage([
        F.responseStart(),
        F.itemStart("s", "function_call", { name: "web_search" }),
        F.done("s", {
          type: "function_call",
          id: "s",
          call_id: "srvtoolu_1",
          name: "web_search",
          arguments: "{\"query\":\"x\"}",
          provider_executed: true
        }),
        F.itemStart("r", "function_call_output"),
        F.done("r", {
          type: "function_call_output",
          id: "r",
          call_id: "srvtoolu_1",
          output: "[]",
          success: true,
          provider_executed: true
        }),
        F.itemStart("c", "function_call", { name: "lookup" }),
        F.done("c", { type: "function_call", id: "c", call_id: "call_1", name: "lookup", arguments: "{}" }),
        F.responseDone()
      ])
      const upserts = out.flatMap((
        payload
      ) => (payload.type === "item_upsert" ? [[payload.itemId, payload.itemType, payload.providerExecuted]] : []))
      expect(upserts).toStrictEqual([
        ["s", "tool_call", true],
        ["r", "tool_output", true],
        ["c", "tool_call", undefined]
      ])
    }))

  it.effect("a message's sources ride on its completed upsert", () =>
    Effect.gen(function*() {
      const sources = [{ kind: "url", url: "https://a.example", title: "A", cited_text: "q" }] as const
      const out = yield* F.runStage([
        F.responseStart(),
        F.itemStart("m", "message", { initial_content: "Hi" }),
        F.done("m", { type: "message", id: "m", content: "Hi", origin: "agent", sources }),
        F.responseDone()
      ])
      const upserts = out.flatMap((
        payload
      ) => (payload.type === "item_upsert" ? [[payload.changeType, payload.sources]] : []))
      expect(upserts).toStrictEqual([["created", undefined], ["completed", sources]])
    }))

  it.effect("an empty input gives an empty output", () =>
    Effect.gen(function*() {
      expect(yield* F.runStage([])).toStrictEqual([])
    }))
})

describe("UpsertStream.upserts: faults", () => {
  const failing = (events: Parameters<typeof F.runStage>[0]) =>
    Stream.fromIterable(events).pipe(
      UpsertStream.upserts(),
      Stream.runFold(() => [] as Array<string>, (acc, p) => [...acc, F.contents([{ at: 0, payload: p }])[0]!]),
      Effect.result
    )

  const cases = [
    [
      "an item event before response_start",
      [F.delta("m", "x")],
      "NotStarted",
      "item_delta for item \"m\": no response_start before it"
    ],
    [
      "a second response_start",
      [F.responseStart(), F.responseStart()],
      "AlreadyStarted",
      "response_start: the turn has already started"
    ],
    [
      "a delta for an unknown item",
      [F.responseStart(), F.delta("m", "x")],
      "UnknownItem",
      "item_delta for item \"m\": no open item with this id"
    ],
    [
      "a duplicate item_start",
      [F.responseStart(), F.itemStart("m", "message"), F.itemStart("m", "message")],
      "DuplicateItem",
      "item_start for item \"m\": the item is already open"
    ],
    [
      "an event after response_done",
      [F.responseStart(), F.responseDone(), F.itemStart("m", "message")],
      "TurnEnded",
      "item_start for item \"m\": the turn already ended with response_done"
    ],
    [
      "a second item_done",
      [F.responseStart(), F.itemStart("m", "message"), F.messageDone("m", "x"), F.messageDone("m", "x")],
      "ItemEnded",
      "item_done for item \"m\": the item is already done"
    ],
    [
      "an item_start for an item that ended",
      [F.responseStart(), F.itemStart("m", "message"), F.cancelled("m"), F.itemStart("m", "message")],
      "DuplicateItem",
      "item_start for item \"m\": the item is already cancelled"
    ]
  ] as const

  for (const [name, events, reason, message] of cases) {
    it.effect(`fails with UnexpectedEvent on ${name}`, () =>
      Effect.gen(function*() {
        const result = yield* failing(events)
        expect(result._tag).toBe("Failure")
        if (result._tag === "Failure") {
          expect(result.failure).toBeInstanceOf(UnexpectedEvent)
          expect(result.failure).toMatchObject({ reason, message })
        }
      }))
  }

  it.effect("flushes and aborts the turn before failing on a bad event", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const result = yield* Stream.fromIterable([
        F.responseStart(),
        F.itemStart("m", "message"),
        F.delta("m", "ab"),
        F.delta("m", "cd"),
        F.delta("other", "x")
      ]).pipe(
        UpsertStream.upserts(),
        Stream.runForEach((p) => Effect.sync(() => seen.push(F.contents([{ at: 0, payload: p }])[0]!))),
        Effect.result
      )
      expect(result._tag).toBe("Failure")
      expect(seen).toStrictEqual(["turn_started", "created:ab", "updated:abcd", "turn_completed"])
    }))

  it.effect("an upstream failure flushes, aborts the turn, then passes the failure on", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const error = yield* Stream.fromIterable([F.responseStart(), F.itemStart("m", "message"), F.delta("m", "x")])
        .pipe(
          Stream.concat(Stream.fail("connection reset" as const)),
          UpsertStream.upserts(),
          Stream.runForEach((p) => Effect.sync(() => seen.push(F.contents([{ at: 0, payload: p }])[0]!))),
          Effect.flip
        )
      expect(error).toBe("connection reset")
      expect(seen).toStrictEqual(["turn_started", "created:x", "turn_completed"])
    }))

  it.effect("invalid options fail with InvalidUpsertOptions before any input is read", () =>
    Effect.gen(function*() {
      const untouched = Stream.fromEffect(Effect.die(new Error("the input was read")))
      const cases: ReadonlyArray<readonly [UpsertOptionsInput, string]> = [
        [{ batchGradient: [] }, "batchGradient: must have at least one step"],
        [{ batchGradient: [10, -5] }, "batchGradient[1]: must be a positive integer"],
        [{ batchTimeoutMs: -1 }, "batchTimeoutMs: must be a non-negative integer"],
        [{ turnId: "t-1" }, "turnId: must be a UUID"]
      ]
      for (const [options, message] of cases) {
        const error = yield* untouched.pipe(UpsertStream.upserts(options), Stream.runDrain, Effect.flip)
        expect(error).toBeInstanceOf(InvalidUpsertOptions)
        expect(error.message).toBe(`invalid options: ${message}`)
      }
    }))

  it.effect("turnId and threadId options override those of response_start", () =>
    Effect.gen(function*() {
      const turnId = "11111111-2222-4333-8444-555555555555"
      const threadId = "66666666-7777-4888-9999-000000000000"
      const out = yield* F.runStage([F.responseStart(), F.responseDone()], { turnId, threadId })
      expect(out.map((p) => [p.turnId, p.threadId])).toStrictEqual([[turnId, threadId], [turnId, threadId]])
    }))
})

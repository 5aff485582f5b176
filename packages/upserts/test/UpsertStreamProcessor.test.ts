import { describe, expect, it } from "@effect/vitest"
import { StreamBMessage, type StreamEvent } from "@sluice/core"
import * as F from "@sluice/testing/fixtures"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
import { sleep } from "../src/index.js"
import { EmitFailed, InvalidUpsertOptions, ProcessorDestroyed, UnexpectedEvent } from "../src/UpsertErrors.js"
import { UpsertStreamProcessor, type UpsertStreamProcessorOptions } from "../src/UpsertStreamProcessor.js"
import { seedCases } from "./SeedCases.js"

const decodePayload = Schema.decodeUnknownSync(Schema.fromJsonString(StreamBMessage.UIPayload))
const decodeMessage = Schema.decodeUnknownSync(StreamBMessage.StreamBMessage)
const settle = Effect.repeat(Effect.yieldNow, { times: 50 })
const agent = { origin: "agent" } as const

/** A processor on the test's services (so on its TestClock) that records what it emits. */
const makeProcessor = (
  options: Partial<UpsertStreamProcessorOptions> = {},
  fail: (attempt: number) => boolean = () => false
) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.context<never>()
    const now = () => Effect.runSyncWith(runtime)(Clock.currentTimeMillis)
    const delivered: Array<StreamBMessage.StreamBMessage> = []
    const attemptsAt: Array<number> = []
    const processor = new UpsertStreamProcessor({
      turnId: F.turnId,
      threadId: F.threadId,
      runtime,
      onEmit: async (message) => {
        attemptsAt.push(now())
        if (fail(attemptsAt.length)) throw new Error("redis down")
        delivered.push(decodeMessage(message))
      },
      ...options
    })
    const run = (promise: () => Promise<void>) => Effect.tryPromise({ try: promise, catch: (error) => error })
    return {
      processor,
      delivered,
      attemptsAt,
      payloads: () => delivered.map((message) => decodePayload(message.payload)),
      process: (...events: ReadonlyArray<StreamEvent.StreamEvent>) =>
        Effect.forEach(events, (event) => run(() => processor.processEvent(event)), { discard: true }),
      run
    }
  })

describe("UpsertStreamProcessor: the behaviour cases of docs/upserts.md through the facade", () => {
  for (const seedCase of seedCases) {
    it.effect(seedCase.name, () =>
      Effect.gen(function*() {
        const p = yield* makeProcessor()
        yield* p.process(...seedCase.events)
        yield* p.run(() => p.processor.destroy())
        expect(p.payloads()).toStrictEqual(seedCase.expected)
      }))
  }

  it.effect("TC-09: Batch Timeout (Safety Fallback)", () =>
    Effect.gen(function*() {
      // batchTimeoutMs left at its default, 1000 ms, which this case also holds
      const p = yield* makeProcessor()
      yield* p.process(F.responseStart(), F.itemStart("msg-1", "message"), F.delta("msg-1", "0123456789"))
      yield* TestClock.adjust(500)
      yield* p.process(F.delta("msg-1", "abcdefghij"))
      // The timer restarted with the second delta: due at 1500, not 1000.
      yield* TestClock.adjust(999)
      yield* settle
      expect(p.payloads().length).toBe(2)
      yield* TestClock.adjust(1)
      yield* settle
      expect(p.payloads()[2]).toStrictEqual(F.upsert("msg-1", "message", "updated", "0123456789abcdefghij", agent))
      expect(p.delivered[2]!.timestamp).toBe(1500)
      yield* p.process(F.delta("msg-1", "KL"), F.messageDone("msg-1", "0123456789abcdefghijKL"), F.responseDone())
      expect(p.payloads().slice(3)).toStrictEqual([
        F.upsert("msg-1", "message", "completed", "0123456789abcdefghijKL", agent),
        F.turnCompleted()
      ])
    }))

  it.effect("TC-12: Flush on Destroy", () =>
    Effect.gen(function*() {
      const fibers = yield* F.trackFibers
      const p = yield* fibers.track(makeProcessor())
      yield* p.process(
        F.responseStart(),
        F.itemStart("msg-1", "message"),
        F.delta("msg-1", "Hello"),
        F.delta("msg-1", " world")
      )
      expect(p.processor.getBufferState().get("msg-1")).toStrictEqual({
        itemId: "msg-1",
        itemType: "message",
        tokenCount: 3,
        contentLength: 11,
        batchIndex: 0,
        isHeld: false,
        isComplete: false
      })
      // The unemitted " world" has a timer waiting.
      expect(yield* fibers.active).toBeGreaterThan(0)
      yield* p.run(() => p.processor.destroy())
      expect(p.payloads()).toStrictEqual([
        F.turnStarted(),
        F.upsert("msg-1", "message", "created", "Hello", agent),
        F.upsert("msg-1", "message", "updated", "Hello world", agent),
        F.turnCompleted("aborted")
      ])
      expect(p.processor.getBufferState().size).toBe(0)
      expect(yield* fibers.active).toBe(0)
      yield* TestClock.adjust(60_000)
      expect(p.delivered.length).toBe(4)
      const error = yield* Effect.flip(p.process(F.delta("msg-1", "late")))
      expect(error).toBeInstanceOf(ProcessorDestroyed)
      // A second destroy does nothing.
      yield* p.run(() => p.processor.destroy())
      expect(p.delivered.length).toBe(4)
    }))

  it.effect("TC-13: Redis Emit Retry", () =>
    Effect.gen(function*() {
      const p = yield* makeProcessor({}, (attempt) => attempt === 1)
      const fiber = yield* Effect.forkChild(p.process(F.responseStart()))
      yield* settle
      yield* TestClock.adjust(999)
      yield* settle
      expect(p.attemptsAt).toStrictEqual([0])
      yield* TestClock.adjust(1)
      yield* Fiber.join(fiber)
      expect(p.attemptsAt).toStrictEqual([0, 1000])
      expect(p.payloads()).toStrictEqual([F.turnStarted()])
    }))

  it.effect("TC-14: Redis Emit Retry Exhausted", () =>
    Effect.gen(function*() {
      const p = yield* makeProcessor({ retryAttempts: 3 }, () => true)
      const fiber = yield* Effect.forkChild(Effect.flip(p.process(F.responseStart())))
      yield* settle
      for (let i = 0; i < 8; i++) yield* TestClock.adjust(1000)
      const error = yield* Fiber.join(fiber)
      expect(error).toBeInstanceOf(EmitFailed)
      expect(error).toMatchObject({ attempts: 4, payloadType: "turn_event" })
      expect(String((error as EmitFailed).message)).toMatch(/onEmit failed 4 times .*redis down/)
      expect(p.attemptsAt).toStrictEqual([0, 1000, 3000, 7000])
    }))
})

describe("UpsertStreamProcessor", () => {
  it.effect("caps the retry delay at retryMaxMs", () =>
    Effect.gen(function*() {
      const p = yield* makeProcessor({ retryAttempts: 4, retryBaseMs: 1000, retryMaxMs: 1500 }, () => true)
      const fiber = yield* Effect.forkChild(Effect.flip(p.process(F.responseStart())))
      yield* settle
      for (let i = 0; i < 12; i++) yield* TestClock.adjust(500)
      yield* Fiber.join(fiber)
      expect(p.attemptsAt).toStrictEqual([0, 1000, 2500, 4000, 5500])
    }))

  it.effect("a failed processEvent leaves the state as it was, so the event can be offered again", () =>
    Effect.gen(function*() {
      const p = yield* makeProcessor({ retryAttempts: 0 }, (attempt) => attempt === 1)
      expect(yield* Effect.flip(p.process(F.responseStart()))).toBeInstanceOf(EmitFailed)
      yield* p.process(F.responseStart(), F.responseDone())
      expect(p.payloads()).toStrictEqual([F.turnStarted(), F.turnCompleted()])
    }))

  it.effect("an event that emits nothing waits for a transition in flight, and is not lost when it commits", () =>
    Effect.gen(function*() {
      // the second message (msg-1's first upsert) fails once and is retried after 1000 ms
      const p = yield* makeProcessor({}, (attempt) => attempt === 2)
      yield* p.process(F.responseStart(), F.itemStart("msg-1", "message"))
      const retrying = yield* Effect.forkChild(p.process(F.delta("msg-1", "Hi")))
      yield* settle
      const quiet = yield* Effect.forkChild(p.process(F.itemStart("msg-2", "message")))
      yield* settle
      expect([...p.processor.getBufferState().keys()]).toStrictEqual(["msg-1"])
      yield* TestClock.adjust(1000)
      yield* Fiber.join(retrying)
      yield* Fiber.join(quiet)
      expect([...p.processor.getBufferState().keys()]).toStrictEqual(["msg-1", "msg-2"])
      yield* p.process(
        F.delta("msg-2", "Yo"),
        F.messageDone("msg-1", "Hi"),
        F.messageDone("msg-2", "Yo"),
        F.responseDone()
      )
      expect(p.attemptsAt.length).toBe(p.payloads().length + 1)
    }))

  it.effect("flush() emits buffered content mid-turn; the item still completes", () =>
    Effect.gen(function*() {
      const p = yield* makeProcessor()
      yield* p.process(
        F.responseStart(),
        F.itemStart("msg-1", "message"),
        F.delta("msg-1", "Hi"),
        F.delta("msg-1", " you")
      )
      yield* p.run(() => p.processor.flush())
      yield* p.run(() => p.processor.flush())
      yield* p.process(F.messageDone("msg-1", "Hi you"), F.responseDone())
      expect(F.contents(p.payloads().map((payload) => ({ at: 0, payload })))).toStrictEqual([
        "turn_started",
        "created:Hi",
        "updated:Hi you",
        "completed:Hi you",
        "turn_completed"
      ])
    }))

  it.effect("rejects a malformed event with a SchemaError naming the field", () =>
    Effect.gen(function*() {
      const p = yield* makeProcessor()
      const bad = { ...F.responseStart(), event_id: "not-a-uuid" }
      const error = yield* Effect.flip(p.process(bad))
      expect(error).toMatchObject({ _tag: "SchemaError" })
      expect(String(error)).toMatch(/event_id/)
    }))

  it.effect("rejects an event out of sequence with UnexpectedEvent", () =>
    Effect.gen(function*() {
      const p = yield* makeProcessor()
      const error = yield* Effect.flip(p.process(F.delta("msg-1", "x")))
      expect(error).toBeInstanceOf(UnexpectedEvent)
      expect(error).toMatchObject({ reason: "NotStarted", eventType: "item_delta", itemId: "msg-1" })
    }))

  it("throws InvalidUpsertOptions naming every bad option", () => {
    const construct = (options: Record<string, unknown>) => () =>
      new UpsertStreamProcessor({ turnId: F.turnId, threadId: F.threadId, onEmit: async () => {}, ...options })
    expect(construct({ batchGradient: [] })).toThrow(InvalidUpsertOptions)
    expect(construct({ batchGradient: [] })).toThrow("batchGradient: must have at least one step")
    expect(construct({ batchGradient: [10, 0] })).toThrow("batchGradient[1]: must be a positive integer")
    expect(construct({ batchTimeoutMs: -1 })).toThrow("batchTimeoutMs: must be a non-negative integer")
    expect(construct({ retryAttempts: 1.5, retryMaxMs: -2 })).toThrow(
      "retryAttempts: must be a non-negative integer; retryMaxMs: must be a non-negative integer"
    )
    expect(construct({ turnId: "turn-1" })).toThrow("turnId: must be a UUID")
    expect(construct({ onEmit: "redis" })).toThrow("onEmit: must be a function")
    expect(construct({ threadId: undefined })).toThrow("threadId: is missing")
  })
})

describe("UpsertStreamProcessor: the defaults and rules of docs/upserts.md", () => {
  it.effect(
    "retryAttempts defaults to 3 and retryBaseMs to 1000: four attempts at 0, 1, 3, 7 s",
    () =>
      Effect.gen(function*() {
        const p = yield* makeProcessor({}, () => true)
        const fiber = yield* Effect.forkChild(Effect.flip(p.process(F.responseStart())))
        yield* settle
        for (let i = 0; i < 20; i++) yield* TestClock.adjust(1000)
        const error = yield* Fiber.join(fiber)
        expect(error).toMatchObject({ attempts: 4 })
        expect(p.attemptsAt).toStrictEqual([0, 1000, 3000, 7000])
      }),
    30_000
  )

  it.effect("retryMaxMs defaults to 10000: the fifth retry waits 10 s, not 16 s", () =>
    Effect.gen(function*() {
      const p = yield* makeProcessor({ retryAttempts: 5 }, () => true)
      const fiber = yield* Effect.forkChild(Effect.flip(p.process(F.responseStart())))
      yield* settle
      for (let i = 0; i < 40; i++) yield* TestClock.adjust(1000)
      yield* Fiber.join(fiber)
      expect(p.attemptsAt).toStrictEqual([0, 1000, 3000, 7000, 15000, 25000])
    }), 30_000)

  it.effect("an item's buffer is released once the item is done, and once it errs", () =>
    Effect.gen(function*() {
      const p = yield* makeProcessor()
      yield* p.process(
        F.responseStart(),
        F.itemStart("msg-1", "message"),
        F.delta("msg-1", "Hello"),
        F.itemStart("msg-2", "message"),
        F.delta("msg-2", "Hi")
      )
      expect([...p.processor.getBufferState().keys()]).toStrictEqual(["msg-1", "msg-2"])
      yield* p.process(F.messageDone("msg-1", "Hello"))
      expect([...p.processor.getBufferState().keys()]).toStrictEqual(["msg-2"])
      yield* p.process(F.itemError("msg-2", "boom", "it broke"))
      expect(p.processor.getBufferState().size).toBe(0)
      // and no timer is left to emit either of them later
      const emitted = p.payloads().length
      yield* TestClock.adjust(5000)
      yield* settle
      expect(p.payloads().length).toBe(emitted)
    }), 30_000)

  it.effect(
    "TC-09 in docs/upserts.md's order: created with the first delta, a stall with nothing new, more, done",
    () =>
      Effect.gen(function*() {
        const p = yield* makeProcessor({ batchTimeoutMs: 1000 })
        yield* p.process(F.responseStart(), F.itemStart("msg-1", "message"), F.delta("msg-1", "0123456789"))
        expect(p.payloads()).toStrictEqual([
          F.turnStarted(),
          F.upsert("msg-1", "message", "created", "0123456789", agent)
        ])
        // the stall: the timer is due, but everything buffered was emitted with `created`,
        // so it emits nothing (an `updated` would repeat the same content)
        yield* TestClock.adjust(1000)
        yield* settle
        expect(p.payloads().length).toBe(2)
        yield* p.process(F.delta("msg-1", "abcdefghij"), F.messageDone("msg-1", "0123456789abcdefghij"))
        yield* p.process(F.responseDone())
        expect(p.payloads().slice(2)).toStrictEqual([
          F.upsert("msg-1", "message", "completed", "0123456789abcdefghij", agent),
          F.turnCompleted()
        ])
      }),
    30_000
  )
})

describe("sleep", () => {
  it.effect("waits on Effect's Clock: done when the clock has moved by ms, not before", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(sleep(1500))
      yield* TestClock.adjust(1499)
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust(1)
      yield* Fiber.join(fiber)
      const negative = yield* Effect.forkChild(sleep(-5))
      yield* Fiber.join(negative)
    }), 30_000)
})

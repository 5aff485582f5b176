import { describe, expect, it } from "@effect/vitest"
import type { StreamBMessage, StreamEvent } from "@sluice/core"
import * as F from "@sluice/testing/fixtures"
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as RetryPolicy from "../src/RetryPolicy.js"
import * as StreamBMessages from "../src/StreamBMessages.js"
import * as UpsertStream from "../src/UpsertStream.js"
import { seedCases } from "./SeedCases.js"

const agent = { origin: "agent" } as const

describe("UpsertStream.upserts: the behaviour cases of docs/upserts.md", () => {
  for (const seedCase of seedCases) {
    it.effect(seedCase.name, () =>
      Effect.gen(function*() {
        expect(yield* F.runStage(seedCase.events)).toStrictEqual(seedCase.expected)
      }))
  }

  it.effect("TC-09: Batch Timeout (Safety Fallback)", () =>
    Effect.gen(function*() {
      const stage = yield* F.startStage({ batchTimeoutMs: 1000 })
      yield* stage.send(F.responseStart(), F.itemStart("msg-1", "message"), F.delta("msg-1", "0123456789"))
      yield* stage.send(F.delta("msg-1", "abcdefghij"))
      expect(F.contents(yield* stage.drain)).toStrictEqual(["turn_started", "created:0123456789"])
      // The stream stalls: nothing until the item's timer is due, then the unemitted content.
      yield* TestClock.adjust(999)
      expect(yield* stage.drain).toStrictEqual([])
      yield* TestClock.adjust(1)
      const [timedOut] = yield* stage.take(1)
      expect(timedOut).toStrictEqual({
        at: 1000,
        payload: F.upsert("msg-1", "message", "updated", "0123456789abcdefghij", agent)
      })
      // The next delta is merged into the completed upsert.
      yield* stage.send(
        F.delta("msg-1", "KLMNOPQRST"),
        F.messageDone("msg-1", "0123456789abcdefghijKLMNOPQRST"),
        F.responseDone()
      )
      yield* stage.end
      expect(F.contents(yield* stage.drain)).toStrictEqual([
        "completed:0123456789abcdefghijKLMNOPQRST",
        "turn_completed"
      ])
    }))

  it.effect("TC-12: Flush on Destroy (the input is interrupted mid-item)", () =>
    Effect.gen(function*() {
      const stop = yield* Deferred.make<void>()
      const input = yield* Queue.make<StreamEvent.StreamEvent, Cause.Done>()
      const fiber = yield* Stream.fromQueue(input).pipe(
        Stream.interruptWhen(Deferred.await(stop)),
        UpsertStream.upserts(),
        Stream.runCollect,
        Effect.forkChild
      )
      yield* Queue.offerAll(input, [
        F.responseStart(),
        F.itemStart("msg-1", "message"),
        F.delta("msg-1", "Hello"),
        F.delta("msg-1", " world")
      ])
      yield* Effect.repeat(Effect.yieldNow, { times: 20 })
      yield* Deferred.succeed(stop, undefined)
      const out = yield* Fiber.join(fiber)
      expect(out).toStrictEqual([
        F.turnStarted(),
        F.upsert("msg-1", "message", "created", "Hello", agent),
        F.upsert("msg-1", "message", "updated", "Hello world", agent),
        F.turnCompleted("aborted")
      ])
    }))

  // Through the stage, retrying is the publisher's business: the messages of the stage
  // go to a sink that retries with RetryPolicy's schedule.
  const publish = (
    events: ReadonlyArray<StreamEvent.StreamEvent>,
    failures: number,
    attempts: Ref.Ref<ReadonlyArray<readonly [number, string]>>
  ) =>
    Stream.fromIterable(events).pipe(
      UpsertStream.upserts(),
      StreamBMessages.wrap,
      Stream.runForEach((message: StreamBMessage.StreamBMessage) =>
        Clock.currentTimeMillis.pipe(
          Effect.flatMap((now) =>
            Ref.updateAndGet(
              attempts,
              (all) => [...all, [now, (JSON.parse(message.payload) as { type: string }).type] as const]
            )
          ),
          Effect.flatMap((
            all
          ) => (all.length <= failures ? Effect.fail(`redis down (${message.payloadType})`) : Effect.void)),
          Effect.retry(RetryPolicy.schedule(RetryPolicy.defaultPolicy))
        )
      )
    )

  it.effect("TC-13: Redis Emit Retry", () =>
    Effect.gen(function*() {
      const attempts = yield* Ref.make<ReadonlyArray<readonly [number, string]>>([])
      const fiber = yield* Effect.forkChild(publish([F.responseStart(), F.responseDone()], 1, attempts))
      yield* Effect.repeat(Effect.yieldNow, { times: 20 })
      yield* TestClock.adjust(999)
      expect(yield* Ref.get(attempts)).toStrictEqual([[0, "turn_started"]])
      yield* TestClock.adjust(1)
      yield* Fiber.join(fiber)
      expect(yield* Ref.get(attempts)).toStrictEqual([[0, "turn_started"], [1000, "turn_started"], [
        1000,
        "turn_completed"
      ]])
    }))

  it.effect("TC-14: Redis Emit Retry Exhausted", () =>
    Effect.gen(function*() {
      const attempts = yield* Ref.make<ReadonlyArray<readonly [number, string]>>([])
      const fiber = yield* Effect.forkChild(
        Effect.flip(publish([F.responseStart(), F.responseDone()], Infinity, attempts))
      )
      yield* Effect.repeat(Effect.yieldNow, { times: 20 })
      for (let i = 0; i < 8; i++) yield* TestClock.adjust(1000)
      expect(yield* Fiber.join(fiber)).toBe("redis down (turn_event)")
      expect((yield* Ref.get(attempts)).map(([at]) => at)).toStrictEqual([0, 1000, 3000, 7000])
    }))
})

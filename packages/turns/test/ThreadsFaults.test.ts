/**
 * A thread never keeps its running slot for a turn that is over (docs/threads.md#faults),
 * on every `RedisStreams` layer: a turn whose streams ended while the thread still holds
 * it running (its producer died and `TurnEnding` ended it `producer_lost`, or its end
 * could not be recorded while Redis was down) is ended in the thread by the next `get`
 * or `beginTurn`, with its status and the items Stream A holds (a partial answer kept);
 * a turn whose lease lapsed and that nobody ended yet is ended `producer_lost` there and
 * then; a turn still running (its lease held) keeps the slot; a turn that shows
 * nothing in Redis (its server died before its pipeline wrote) is ended `failed`
 * (`not_started`) once its start grace is over, on Effect's Clock.
 *
 * (Before: `TurnRunning` for every later turn, the thread stuck.)
 */
import { describe, expect, layer } from "@effect/vitest"
import type { StreamEvent } from "@sluice/core"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as RedisStreamsLive from "@sluice/redis/RedisStreamsLive"
import * as RedisStreamsMemory from "@sluice/redis/RedisStreamsMemory"
import * as Events from "@sluice/testing/fixtures"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as TestClock from "effect/testing/TestClock"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"
import * as Threads from "../src/Threads.js"
import * as TurnEnding from "../src/TurnEnding.js"
import * as TurnEntry from "../src/TurnEntry.js"
import * as TurnKeys from "../src/TurnKeys.js"

const prefix = `threads-faults-${randomUUID().slice(0, 8)}`

/** Writes the turn's Stream A entries as a producer would (ids `0-1`, `0-2`, ...). */
const published = (turnId: string, events: ReadonlyArray<StreamEvent.StreamEvent>) =>
  RedisStreams.use((redis) =>
    Effect.forEach(events, (event, i) =>
      redis.xadd(TurnKeys.eventsKey(prefix, turnId), {
        id: `0-${i + 1}`,
        fields: Result.getOrThrow(TurnEntry.fromStreamEvent(turnId, event))
      }), { discard: true })
  )

// a producer that said "Hel" + "lo" and a finished reasoning item, then died mid-message
const partial = [
  Events.responseStart("anthropic"),
  Events.itemStart("r1", "reasoning"),
  Events.reasoningDone("r1", "think"),
  Events.itemStart("m1", "message"),
  Events.delta("m1", "Hel"),
  Events.delta("m1", "lo")
]

const suite = (name: string, streams: Layer.Layer<RedisStreams, unknown>) =>
  layer(Layer.provideMerge(Threads.layer({ prefix }), streams), { timeout: 60_000 })(name, (it) => {
    describe("a turn over in its streams, running in its thread", () => {
      it.effect("ended producer_lost by TurnEnding: get ends it in the thread, the partial answer kept", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const { threadId } = yield* threads.create()
          const turn = yield* threads.beginTurn(threadId, { message: { role: "user", content: "hi" } })
          yield* published(turn.turnId, partial)
          // still running in its streams: the slot stays taken
          expect(yield* Effect.flip(threads.beginTurn(threadId, { message: { role: "user", content: "again" } })))
            .toMatchObject({ _tag: "TurnRunning", turnId: turn.turnId })
          // its producer's lease lapsed; the sweeper ends it
          yield* TurnEnding.end(prefix, turn.turnId, TurnEnding.producerLost)
          const info = yield* threads.get(threadId)
          expect(Option.isNone(info.running)).toBe(true)
          const ended = yield* threads.turn(threadId, turn.turnId)
          expect(Option.getOrThrow(ended.end)).toStrictEqual({
            status: "producer_lost",
            provider: "anthropic",
            responseId: Events.runId,
            items: [
              { type: "reasoning", id: "r1", content: "think" },
              { type: "message", id: "m1", content: "Hello", origin: "agent" }
            ],
            error: { code: "producer_lost", message: TurnEnding.producerLost.message }
          })
          const messages = yield* threads.uiMessages(threadId)
          expect(messages.at(-1)).toMatchObject({
            role: "assistant",
            parts: [{ type: "step-start" }, { type: "reasoning", text: "think" }, { type: "text", text: "Hello" }]
          })
          // the next turn starts, and its request holds the partial answer
          const next = yield* threads.beginTurn(threadId, { message: { role: "user", content: "go on" } })
          expect(next.parentId).toBe(turn.turnId)
          expect(next.messages.map((message) => message._tag)).toStrictEqual(["user", "assistant", "user"])
          // the log holds one end of the turn
          expect((yield* threads.turns(threadId)).filter((t) => Option.isSome(t.end)).length).toBe(1)
        }))

      it.effect("completed in its streams, its end never recorded (Redis down): beginTurn records it, then starts", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const { threadId } = yield* threads.create()
          const turn = yield* threads.beginTurn(threadId, { message: { role: "user", content: "hi" } })
          yield* published(turn.turnId, [
            Events.responseStart("openai-responses"),
            Events.itemStart("m1", "message"),
            Events.delta("m1", "Hi!"),
            Events.messageDone("m1", "Hi!"),
            Events.responseDone("complete")
          ])
          const next = yield* threads.beginTurn(threadId, { message: { role: "user", content: "more" } })
          expect(next.messages).toMatchObject([
            { _tag: "user", text: "hi" },
            { _tag: "assistant", parts: [{ _tag: "text", text: "Hi!" }] },
            { _tag: "user", text: "more" }
          ])
          expect(Option.getOrThrow((yield* threads.turn(threadId, turn.turnId)).end)).toMatchObject({
            status: "completed",
            provider: "openai-responses",
            items: [{ type: "message", id: "m1", content: "Hi!" }]
          })
          // the producer's own end, late, finds the turn ended
          expect(
            yield* Effect.flip(threads.endTurn(threadId, turn.turnId, { status: "completed", items: [] }))
          ).toMatchObject({ _tag: "TurnNotRunning" })
        }))

      it.effect("cancelled and failed endings keep their status", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const { threadId } = yield* threads.create()
          const cancelled = yield* threads.beginTurn(threadId, { message: { role: "user", content: "a" } })
          yield* published(cancelled.turnId, [Events.responseStart(), Events.responseDone("cancelled")])
          const failed = yield* threads.beginTurn(threadId, { message: { role: "user", content: "b" } })
          yield* published(failed.turnId, [
            Events.responseStart(),
            Events.responseError("overloaded", "try later"),
            Events.responseDone("error")
          ])
          expect(Option.isNone((yield* threads.get(threadId)).running)).toBe(true)
          const ends = (yield* threads.turns(threadId)).map((t) => Option.getOrThrow(t.end))
          expect(ends.map((end) => [end.status, end.error?.code])).toStrictEqual([
            ["cancelled", undefined],
            ["failed", "overloaded"]
          ])
        }))
    })

    describe("a turn whose lease lapsed, ended by no one", () => {
      it.effect("beginTurn ends it producer_lost in its streams and in the thread", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const redis = yield* RedisStreams
          const { threadId } = yield* threads.create()
          const turn = yield* threads.beginTurn(threadId, { message: { role: "user", content: "hi" } })
          yield* published(turn.turnId, partial)
          // the lease held: the turn runs
          yield* redis.setPx(TurnKeys.leaseKey(prefix, turn.turnId), "producer", 60_000)
          yield* redis.setPx(TurnKeys.leasedKey(prefix, turn.turnId), "1", 60_000)
          expect(Option.isSome((yield* threads.get(threadId)).running)).toBe(true)
          expect(yield* Effect.flip(threads.beginTurn(threadId, { message: { role: "user", content: "x" } })))
            .toMatchObject({ _tag: "TurnRunning" })
          // the lease gone (the producer was killed), its marker left
          yield* redis.pexpire(TurnKeys.leaseKey(prefix, turn.turnId), 0)
          const next = yield* threads.beginTurn(threadId, { message: { role: "user", content: "again" } })
          expect(next.parentId).toBe(turn.turnId)
          const last = Option.getOrThrow(yield* redis.xlast(TurnKeys.eventsKey(prefix, turn.turnId)))
          expect(TurnEntry.isFinal(last)).toBe(true)
          expect(Option.getOrThrow((yield* threads.turn(threadId, turn.turnId)).end)).toMatchObject({
            status: "producer_lost",
            items: [{ type: "reasoning", content: "think" }, { type: "message", content: "Hello" }]
          })
        }))
    })

    describe("a turn that never reached Redis (no entry, no lease)", () => {
      it.effect("keeps the slot within its start grace, then get ends it failed not_started", () =>
        Effect.gen(function*() {
          const threads = yield* Threads.Threads
          const { threadId } = yield* threads.create()
          const turn = yield* threads.beginTurn(threadId, { message: { role: "user", content: "hi" } })
          yield* TestClock.adjust(Duration.millis(Threads.defaultStartGraceMs - 1))
          expect(Option.map((yield* threads.get(threadId)).running, (running) => running.turnId))
            .toStrictEqual(Option.some(turn.turnId))
          yield* TestClock.adjust(Duration.millis(1))
          expect(Option.isNone((yield* threads.get(threadId)).running)).toBe(true)
          expect(Option.getOrThrow((yield* threads.turn(threadId, turn.turnId)).end)).toMatchObject({
            status: "failed",
            items: [],
            error: { code: "not_started" }
          })
          // the next turn is taken
          yield* threads.beginTurn(threadId, { message: { role: "user", content: "again" } })
        }))
    })
  })

suite("Threads under faults on RedisStreamsMemory", RedisStreamsMemory.layer)
suite("Threads under faults on RedisStreamsLive", RedisStreamsLive.layer({ url: inject("redisUrl") }))

/**
 * `TurnEnding.end` writes a whole ending or none, on the in-memory store and on
 * redis-server: the caller that started it going away (a reader whose stream closed,
 * interrupting its producer watcher) cannot cut it halfway, and an ending that was cut
 * halfway before (a stream left at its error entry) is completed with the turn's last
 * entry alone, never a second error.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { StreamBMessage, type UITurnEvent } from "@sluice/core"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as RedisStreamsLive from "@sluice/redis/RedisStreamsLive"
import * as RedisStreamsMemory from "@sluice/redis/RedisStreamsMemory"
import { field, type StreamEntry } from "@sluice/redis/StreamEntry"
import { gatedEnding, streamEvents, upsertMessages } from "@sluice/testing/turns"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"
import * as TurnEnding from "../src/TurnEnding.js"
import * as TurnEntry from "../src/TurnEntry.js"
import * as TurnKeys from "../src/TurnKeys.js"
import * as TurnPublisher from "../src/TurnPublisher.js"

const prefix = `sluice-ending-${randomUUID().slice(0, 8)}`
const publisher = TurnPublisher.layer({ prefix, retryBaseMs: 0, retryMaxMs: 0, retryAttempts: 2 })

const entries = (key: string) => RedisStreams.use((redis) => redis.xrange(key, "-", "+"))
const payloadTypeOf = (entry: StreamEntry) => Option.getOrUndefined(field(entry, "payloadType"))
const turnEventTypeOf = (entry: StreamEntry) =>
  Effect.map(TurnEntry.toStreamBMessage(entry), (message) => (JSON.parse(message.payload) as { type: string }).type)

/** A turn cut off mid-message: Stream A's first 7 events, Stream B's first 3 messages. */
const publishPartial = (turnId: string) =>
  Effect.gen(function*() {
    const events = streamEvents(turnId, 8).slice(0, -1)
    yield* Stream.runDrain(TurnPublisher.publishEvents(turnId)(Stream.fromIterable(events)))
    const messages = upsertMessages(turnId, 6).slice(0, 3)
    yield* Stream.runDrain(TurnPublisher.publishUpserts(turnId)(Stream.fromIterable(messages)))
    return { events, messages }
  }).pipe(Effect.provide(publisher))

/** The ending of both streams as types: Stream A's last two payload types, Stream B's last two turn events. */
const endingOf = (turnId: string) =>
  Effect.gen(function*() {
    const a = yield* entries(TurnKeys.eventsKey(prefix, turnId))
    const b = yield* entries(TurnKeys.upsertsKey(prefix, turnId))
    return {
      a: a.slice(-2).map(payloadTypeOf),
      b: yield* Effect.forEach(b.slice(-2), turnEventTypeOf),
      lastA: a.filter(TurnEnding.isLast).length,
      lastB: b.filter(TurnEnding.isLast).length,
      errorsA: a.filter((entry) => payloadTypeOf(entry) === "response_error").length,
      errorsB: (yield* Effect.forEach(b, (entry) => Effect.option(turnEventTypeOf(entry)))).filter((type) =>
        Option.contains(type, "turn_error")
      ).length,
      sizes: [a.length, b.length]
    }
  })

const whole = { a: ["response_error", "response_done"], b: ["turn_error", "turn_completed"], lastA: 1, lastB: 1 }

const suite = (name: string, streams: Layer.Layer<RedisStreams, unknown>) =>
  layer(streams, { timeout: 60_000 })(name, (it) => {
    describe("TurnEnding.end", () => {
      it.effect("is not cut halfway when whoever started it is interrupted: both streams end whole", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          yield* publishPartial(turnId)
          const started = yield* Deferred.make<void>()
          const gate = yield* Deferred.make<void>()
          const context = yield* Layer.build(gatedEnding(started, gate))
          const ending = yield* TurnEnding.end(prefix, turnId, TurnEnding.producerLost).pipe(
            Effect.provideContext(context),
            Effect.forkChild
          )
          yield* Deferred.await(started)
          // the reader whose watcher started the ending goes away now
          const interrupting = yield* Effect.forkChild(Fiber.interrupt(ending))
          // the interruption reaches the ending while its first write waits; then the write goes on
          for (let i = 0; i < 8; i++) yield* Effect.yieldNow
          yield* Deferred.succeed(gate, undefined)
          yield* Fiber.join(interrupting)
          expect(yield* endingOf(turnId)).toMatchObject({ ...whole, errorsA: 1, errorsB: 1, sizes: [9, 4] })
          // and nobody ends it again
          expect(yield* TurnEnding.end(prefix, turnId, TurnEnding.producerLost)).toBe("already_ended")
          expect((yield* endingOf(turnId)).sizes).toStrictEqual([9, 4])
        }))

      it.effect("completes an ending cut short at its error entry with the last entry alone", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          const { events, messages } = yield* publishPartial(turnId)
          const redis = yield* RedisStreams
          // what the interrupted ending left: Stream A at response_error (0-8), Stream B at turn_error (0-4)
          const responseId = events[0]!.payload.type === "response_start" ? events[0]!.payload.response_id : ""
          const error = {
            ...events[0]!,
            event_id: randomUUID(),
            type: "response_error" as const,
            payload: {
              type: "response_error" as const,
              response_id: responseId,
              error: { code: "producer_lost", message: "gone", type: "api_error" as const, retryable: false }
            }
          }
          const started = JSON.parse(messages[0]!.payload) as UITurnEvent.UITurnEvent
          const turnError = StreamBMessage.wrap(
            {
              type: "turn_error",
              turnId,
              threadId: started.threadId,
              error: { code: "producer_lost", message: "gone" }
            },
            randomUUID(),
            1_700_000_000_100
          )
          yield* Stream.runDrain(
            TurnPublisher.publishEvents(turnId)(Stream.fromIterable([...events, error]))
          ).pipe(Effect.provide(publisher))
          yield* redis.xadd(TurnKeys.upsertsKey(prefix, turnId), {
            id: "0-4",
            fields: TurnEntry.fromStreamBMessage(turnError)
          })
          expect(yield* TurnEnding.end(prefix, turnId, TurnEnding.producerLost)).toBe("ended")
          expect(yield* endingOf(turnId)).toMatchObject({ ...whole, errorsA: 1, errorsB: 1, sizes: [9, 4] })
        }))

      it.effect("four enders at once: one error and one last entry per stream, the last entry last", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          yield* publishPartial(turnId)
          const outcomes = yield* Effect.all(
            Array.from({ length: 4 }, () => TurnEnding.end(prefix, turnId, TurnEnding.producerLost)),
            { concurrency: "unbounded" }
          )
          expect(outcomes.filter((outcome) => outcome === "ended").length).toBeGreaterThanOrEqual(1)
          expect(yield* endingOf(turnId)).toMatchObject({ ...whole, errorsA: 1, errorsB: 1, sizes: [9, 4] })
        }))
    })
  })

suite("a whole ending on RedisStreamsMemory", RedisStreamsMemory.layer)
suite("a whole ending on RedisStreamsLive", RedisStreamsLive.layer({ url: inject("redisUrl") }))

describe("TurnEnding's closing payloads, the one home of a turn's ending", () => {
  it("builds Stream A's and Stream B's [error, last] from one ending", () => {
    const ending = TurnEnding.producerLost
    expect(ending.code).toBe("producer_lost")
    expect(TurnEnding.streamAEnding("r1", ending)).toStrictEqual([
      {
        type: "response_error",
        response_id: "r1",
        error: { code: "producer_lost", message: ending.message, type: "api_error", retryable: false }
      },
      { type: "response_done", response_id: "r1", status: "error", finish_reason: "error" }
    ])
    expect(TurnEnding.streamBEnding({ turnId: "t", threadId: "h" }, ending)).toStrictEqual([
      { type: "turn_error", turnId: "t", threadId: "h", error: { code: "producer_lost", message: ending.message } },
      { type: "turn_completed", turnId: "t", threadId: "h", status: "error" }
    ])
    expect(TurnEnding.lastPayload("r1", "aborted")).toStrictEqual({
      type: "response_done",
      response_id: "r1",
      status: "aborted",
      finish_reason: null
    })
  })
})

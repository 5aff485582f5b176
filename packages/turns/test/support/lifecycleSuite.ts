/**
 * A turn whose producer is gone, and requests to producers, run on every
 * `RedisStreams` layer: `TurnEnding.end` writes the ending once, whoever calls it
 * first, with the turn's last entry last in each stream; a producer that comes back cannot write past them; cancel requests
 * reach a follower of the control stream.
 */
import { describe, expect, layer } from "@effect/vitest"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import type { StreamEntry } from "@sluice/redis/StreamEntry"
import { streamEvents, upsertMessages } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import * as TurnControl from "../../src/TurnControl.js"
import * as TurnEnding from "../../src/TurnEnding.js"
import * as TurnEntry from "../../src/TurnEntry.js"
import * as TurnKeys from "../../src/TurnKeys.js"
import * as TurnPublisher from "../../src/TurnPublisher.js"

const prefix = `sluice-test-${randomUUID().slice(0, 8)}`
const fast = { prefix, retryBaseMs: 0, retryMaxMs: 0, retryAttempts: 2 }

/** A turn cut off mid-message: every entry but the terminal one, in both streams. */
const publishPartial = (turnId: string) =>
  Effect.gen(function*() {
    const events = streamEvents(turnId, 8).slice(0, -1)
    yield* Stream.runDrain(TurnPublisher.publishEvents(turnId)(Stream.fromIterable(events)))
    yield* Stream.runDrain(
      TurnPublisher.publishUpserts(turnId)(Stream.fromIterable(upsertMessages(turnId, 6).slice(0, 3)))
    )
    return events
  })

const entries = (key: string) => RedisStreams.use((redis) => redis.xrange(key, "-", "+"))

export const lifecycleSuite = (name: string, streams: Layer.Layer<RedisStreams, unknown>) =>
  layer(streams, { timeout: 60_000 })(name, (it) => {
    describe("TurnEnding.end", () => {
      it.effect("ends both streams once: response_error and response_done in A, turn_error and turn_completed in B", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          yield* publishPartial(turnId)
          expect(yield* TurnEnding.end(prefix, turnId, TurnEnding.producerLost)).toBe("ended")
          const a = yield* entries(TurnKeys.eventsKey(prefix, turnId))
          const events = yield* Effect.forEach(a, TurnEntry.toStreamEvent)
          // the ending takes the sealed ids after the last entry: 1-<n>, above the producer's 0-<n>
          expect(a.map((entry) => entry.id).slice(-3)).toStrictEqual(["0-7", "1-8", "1-9"])
          expect(events.slice(-2).map((event) => event.payload)).toMatchObject([
            { type: "response_error", error: { code: "producer_lost", retryable: false } },
            { type: "response_done", status: "error" }
          ])
          const b = yield* entries(TurnKeys.upsertsKey(prefix, turnId))
          const ending = yield* Effect.forEach(b.slice(-2), TurnEntry.toStreamBMessage)
          expect([b.at(-2)!.id, JSON.parse(ending[0]!.payload)]).toMatchObject(["1-4", {
            type: "turn_error",
            turnId,
            error: { code: "producer_lost" }
          }])
          // the turn's last entry, as a producer writes it after a turn_error
          expect([b.at(-1)!.id, JSON.parse(ending[1]!.payload)]).toMatchObject(["1-5", {
            type: "turn_completed",
            turnId,
            status: "error"
          }])
          expect([a.filter(TurnEnding.isLast).length, b.filter(TurnEnding.isLast).length]).toStrictEqual([1, 1])
          expect([TurnEnding.isLast(a.at(-1)!), TurnEnding.isLast(b.at(-1)!)]).toStrictEqual([true, true])
          // a second server that noticed the same turn finds it ended (0-2 was superseded by 0-3)
          expect(yield* TurnEnding.end(prefix, turnId, TurnEnding.producerLost)).toBe("already_ended")
          expect((yield* entries(TurnKeys.upsertsKey(prefix, turnId))).map((entry) => entry.id)).toStrictEqual([
            "0-1",
            "0-3",
            "1-4",
            "1-5"
          ])
        }).pipe(Effect.provide(TurnPublisher.layer(fast))))

      it.effect("two servers at once: exactly one terminal entry in each stream", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          yield* publishPartial(turnId)
          const outcomes = yield* Effect.all(
            Array.from({ length: 4 }, () => TurnEnding.end(prefix, turnId, TurnEnding.producerLost)),
            { concurrency: "unbounded" }
          )
          expect(outcomes.filter((outcome) => outcome === "ended")).toHaveLength(1)
          const b = yield* entries(TurnKeys.upsertsKey(prefix, turnId))
          const a = yield* entries(TurnKeys.eventsKey(prefix, turnId))
          // one error and one last entry in each stream, the last entry last
          const payloadTypes = (stream: ReadonlyArray<StreamEntry>) =>
            stream.slice(-2).map((entry) => entry.fields.find(([field]) => field === "payloadType")?.[1])
          expect([a.filter(TurnEnding.isLast).length, b.filter(TurnEnding.isLast).length]).toStrictEqual([1, 1])
          expect([TurnEnding.isLast(a.at(-1)!), TurnEnding.isLast(b.at(-1)!)]).toStrictEqual([true, true])
          expect(payloadTypes(a)).toStrictEqual(["response_error", "response_done"])
          expect(payloadTypes(b)).toStrictEqual(["turn_event", "turn_event"])
          expect([a.length, b.length]).toStrictEqual([9, 4])
        }).pipe(Effect.provide(TurnPublisher.layer(fast))))

      it.effect("a producer that comes back after its turn was ended cannot write past the end", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          const events = yield* publishPartial(turnId)
          yield* TurnEnding.end(prefix, turnId, TurnEnding.producerLost)
          const late = streamEvents(turnId, 8).slice(-1).map((event) => ({ ...event, run_id: events[0]!.run_id }))
          // the producer's publisher starts again at the next id it believes free
          const resumed = yield* Effect.result(
            Stream.runDrain(TurnPublisher.publishEvents(turnId)(Stream.fromIterable([...events, ...late])))
          )
          expect(Result.isFailure(resumed)).toBe(true)
          const a = yield* entries(TurnKeys.eventsKey(prefix, turnId))
          expect(a).toHaveLength(9)
          expect(TurnEnding.isLast(a.at(-1)!)).toBe(true)
        }).pipe(Effect.provide(TurnPublisher.layer(fast))))

      it.effect("a finished turn is left alone, and a turn with no entries is empty", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          yield* Stream.runDrain(TurnPublisher.publishEvents(turnId)(Stream.fromIterable(streamEvents(turnId, 5))))
          yield* Stream.runDrain(TurnPublisher.publishUpserts(turnId)(Stream.fromIterable(upsertMessages(turnId, 4))))
          expect(yield* TurnEnding.end(prefix, turnId, TurnEnding.producerLost)).toBe("already_ended")
          expect((yield* entries(TurnKeys.upsertsKey(prefix, turnId))).map((entry) => entry.id)).toStrictEqual([
            "0-1",
            "0-3",
            "0-4"
          ])
          expect(yield* TurnEnding.end(prefix, randomUUID(), TurnEnding.producerLost)).toBe("empty")
        }).pipe(Effect.provide(TurnPublisher.layer(fast))))
    })

    describe("TurnControl", () => {
      it.effect("a cancel request reaches a follower of the control stream; requests before its position do not", () =>
        Effect.gen(function*() {
          const controlPrefix = `${prefix}-${randomUUID().slice(0, 4)}`
          yield* TurnControl.requestCancel(controlPrefix, randomUUID())
          const at = yield* TurnControl.position(controlPrefix)
          const [first, second] = [randomUUID(), randomUUID()]
          yield* TurnControl.requestCancel(controlPrefix, first)
          yield* TurnControl.requestCancel(controlPrefix, second)
          const seen = yield* TurnControl.requests(controlPrefix, at).pipe(Stream.take(2), Stream.runCollect)
          expect(seen).toStrictEqual([{ type: "cancel", turnId: first }, {
            type: "cancel",
            turnId: second
          }])
          // a follower that starts now waits for the next request
          const follower = yield* TurnControl.requests(controlPrefix).pipe(
            Stream.take(1),
            Stream.runCollect,
            Effect.forkChild
          )
          const third = randomUUID()
          // ask until the follower, whenever it has found where the stream ends, sees it
          let exit = follower.pollUnsafe()
          while (exit === undefined) {
            yield* TurnControl.requestCancel(controlPrefix, third)
            yield* Effect.yieldNow
            exit = follower.pollUnsafe()
          }
          expect(Exit.isSuccess(exit) && exit.value).toStrictEqual([{
            type: "cancel",
            turnId: third
          }])
        }))
    })
  })

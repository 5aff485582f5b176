/**
 * The turn publisher's behaviour, run on every `RedisStreams` layer.
 */
import { describe, expect, layer } from "@effect/vitest"
import { StreamBMessage, StreamEvent } from "@sluice/core"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import { type Fault, faulty } from "@sluice/testing/redis"
import { kept, messageUpsert, streamEvents, upsertMessages } from "@sluice/testing/turns"
import * as Arbitrary from "effect/Arbitrary"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { randomUUID } from "node:crypto"
import { PublishError } from "../../src/PublishError.js"
import * as TurnEntry from "../../src/TurnEntry.js"
import * as TurnKeys from "../../src/TurnKeys.js"
import * as TurnPublisher from "../../src/TurnPublisher.js"

const prefix = `sluice-test-${randomUUID().slice(0, 8)}`
const fast = { prefix, retryBaseMs: 0, retryMaxMs: 0, retryAttempts: 5 }

const publishB = (turnId: string, messages: ReadonlyArray<StreamBMessage.StreamBMessage>) =>
  Stream.fromIterable(messages).pipe(
    TurnPublisher.publishUpserts(turnId),
    Stream.runCollect
  )

const storedB = (turnId: string) =>
  RedisStreams.use((redis) => redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")).pipe(
    Effect.flatMap(
      Effect.forEach((entry) => Effect.map(TurnEntry.toStreamBMessage(entry), (message) => ({ id: entry.id, message })))
    )
  )

const ids = (n: number) => Array.from({ length: n }, (_, i) => `0-${i + 1}`)

export const publisherSuite = (name: string, streams: Layer.Layer<RedisStreams, unknown>) =>
  layer(streams, { timeout: 60_000 })(name, (it) => {
    describe("Stream B", () => {
      it.effect("writes every message once, in order, as entries of docs/redis.md#entries, keeps each item's last upsert, and passes each on", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          const messages = upsertMessages(turnId, 50)
          expect(yield* publishB(turnId, messages)).toStrictEqual(messages)
          const redis = yield* RedisStreams
          const raw = yield* redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")
          // the superseded upserts are deleted: the turn events and the item's last upsert stay
          expect(raw.map((entry) => entry.id)).toStrictEqual(["0-1", "0-49", "0-50"])
          expect(raw[0]!.fields).toStrictEqual([
            ["eventId", messages[0]!.eventId],
            ["timestamp", String(messages[0]!.timestamp)],
            ["turnId", turnId],
            ["payloadType", "turn_event"],
            ["payload", messages[0]!.payload]
          ])
          expect(yield* storedB(turnId)).toStrictEqual(kept(messages))
          expect(TurnEntry.isFinal(raw[2]!)).toBe(true)
          expect(raw.slice(0, 2).some(TurnEntry.isFinal)).toBe(false)
        }).pipe(Effect.provide(TurnPublisher.layer(fast))))

      it.effect("sets the retention on both the stream and the index of turns", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          yield* publishB(turnId, upsertMessages(turnId, 5))
          const redis = yield* RedisStreams
          const ttl = yield* redis.pttl(TurnKeys.upsertsKey(prefix, turnId))
          expect(ttl).toBeGreaterThan(0)
          expect(ttl).toBeLessThanOrEqual(3_600_000)
          const turns = yield* redis.zrangeByScore(TurnKeys.turnsKey(prefix), -Infinity, Infinity)
          expect(turns.map((turn) => turn.member)).toContain(turnId)
          expect(yield* redis.pttl(TurnKeys.turnsKey(prefix))).toBeGreaterThan(0)
        }).pipe(Effect.provide(TurnPublisher.layer({ ...fast, retentionMs: 3_600_000 }))))

      it.effect("caps the stream with MAXLEN and still writes every message", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          const messages = upsertMessages(turnId, 400)
          expect((yield* publishB(turnId, messages)).length).toBe(400)
          const stored = yield* storedB(turnId)
          expect(stored.length).toBeGreaterThanOrEqual(2)
          expect(stored.length).toBeLessThan(400)
          expect(stored).toStrictEqual(kept(messages).slice(-stored.length))
        }).pipe(Effect.provide(TurnPublisher.layer({ ...fast, maxLen: 10, maxInFlight: 4 }))))

      it.effect("publishing the same messages again changes nothing; other content under the turn is a Conflict", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          const messages = upsertMessages(turnId, 20)
          yield* publishB(turnId, messages)
          expect(yield* publishB(turnId, messages)).toStrictEqual(messages)
          const other = upsertMessages(turnId, 20)
          const error = yield* Effect.flip(publishB(turnId, other))
          expect(error).toBeInstanceOf(PublishError)
          expect(error.reason).toBe("Conflict")
          expect(error.entryId).toBe("0-1")
          expect(error.written).toBe(0)
          expect(yield* storedB(turnId)).toStrictEqual(kept(messages))
        }).pipe(Effect.provide(TurnPublisher.layer(fast))))

      it.effect("a reader resuming after any id it saw, deleted since or not, ends with every item's full content once", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          const threadId = randomUUID()
          const payload = (itemId: string, content: string, changeType: "created" | "updated" | "completed") =>
            messageUpsert(turnId, threadId, itemId, content, changeType)
          const payloads: Array<StreamBMessage.UIPayload> = [{ type: "turn_started", turnId, threadId }]
          let a = ""
          let b = ""
          for (let i = 0; i < 12; i++) {
            a += `a${i} `
            payloads.push(payload("a", a, i === 0 ? "created" : i === 11 ? "completed" : "updated"))
            if (i % 3 === 0) {
              b += `b${i} `
              payloads.push(payload("b", b, i === 0 ? "created" : i === 9 ? "completed" : "updated"))
            }
          }
          payloads.push({ type: "turn_completed", turnId, threadId, status: "complete" })
          const messages = payloads.map((p, i) => StreamBMessage.wrap(p, randomUUID(), 1_700_000_000_000 + i))
          yield* publishB(turnId, messages)
          const redis = yield* RedisStreams
          const key = TurnKeys.upsertsKey(prefix, turnId)
          // the stream keeps each item's last upsert only
          expect(yield* storedB(turnId)).toStrictEqual(kept(messages))
          for (let seen = 0; seen < messages.length; seen++) {
            // what the reader had: the first `seen` entries as they were published
            const items = new Map<string, string>()
            const fold = (message: StreamBMessage.StreamBMessage) => {
              const parsed = JSON.parse(message.payload) as { readonly itemId?: string; readonly content?: string }
              if (parsed.itemId !== undefined && parsed.content !== undefined) items.set(parsed.itemId, parsed.content)
            }
            messages.slice(0, seen).forEach(fold)
            const resumed = yield* redis.tail(key, { after: `0-${seen}`, until: TurnEntry.isFinal }).pipe(
              Stream.runCollect
            )
            const ids = resumed.map((entry) => Number(entry.id.slice(2)))
            expect(ids.every((id) => id > seen)).toBe(true)
            for (const entry of resumed) fold(yield* TurnEntry.toStreamBMessage(entry))
            expect(resumed.at(-1)?.id).toBe(`0-${messages.length}`)
            expect(Object.fromEntries(items)).toStrictEqual({ a, b })
          }
        }).pipe(Effect.provide(TurnPublisher.layer(fast))))

      it.effect("a message of another turn, a turn id that is not a UUID and bad options are typed errors", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          const stray = upsertMessages(randomUUID(), 3)
          const wrongTurn = yield* Effect.flip(publishB(turnId, stray))
          expect(wrongTurn.reason).toBe("InvalidInput")
          expect(wrongTurn.detail).toContain(stray[0]!.turnId)
          const notUuid = yield* Effect.flip(publishB("../../etc", upsertMessages(turnId, 3)))
          expect(notUuid.reason).toBe("InvalidInput")
          expect(notUuid.detail).toContain("not a UUID")
          const redis = yield* RedisStreams
          expect(yield* redis.xlen(TurnKeys.upsertsKey(prefix, turnId))).toBe(0)
          const options = yield* Effect.flip(TurnPublisher.make({ maxInFlight: 0, prefix: "a b", retryBaseMs: -1 }))
          expect(options._tag).toBe("InvalidPublisherOptions")
          expect(options.detail).toContain("maxInFlight")
          expect(options.detail).toContain("prefix")
          expect(options.detail).toContain("retryBaseMs")
        }).pipe(Effect.provide(TurnPublisher.layer(fast))))
    })

    describe("Stream A", () => {
      it.effect("each StreamEvent is an entry with its id, time and type, and the event as JSON", () =>
        Effect.gen(function*() {
          const arbitrary = Arbitrary.array(Arbitrary.schema(StreamEvent.StreamEvent), { minLength: 1, maxLength: 30 })
          const samples = yield* Arbitrary.sampleEffect(arbitrary, { count: 15, seed: 6, maxDiscards: 100_000 })
          // Effect's arbitraries make objects without a prototype; the events a reader decodes are plain objects
          for (const events of samples.map((sample) => structuredClone(sample))) {
            const turnId = randomUUID()
            const passed = yield* Stream.fromIterable(events).pipe(
              TurnPublisher.publishEvents(turnId),
              Stream.runCollect
            )
            expect(passed).toStrictEqual(events)
            const redis = yield* RedisStreams
            const raw = yield* redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+")
            expect(raw.map((entry) => entry.id)).toStrictEqual(ids(events.length))
            for (const [i, entry] of raw.entries()) {
              const fields = yield* TurnEntry.decode(entry)
              expect(fields).toStrictEqual({
                id: `0-${i + 1}`,
                eventId: events[i]!.event_id,
                timestamp: events[i]!.timestamp,
                turnId,
                payloadType: events[i]!.type,
                payload: fields.payload
              })
              expect(yield* TurnEntry.toStreamEvent(entry)).toStrictEqual(events[i])
            }
          }
        }).pipe(Effect.provide(TurnPublisher.layer(fast))))

      it.effect("an event that breaks its schema ends the stage after the events before it are written", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          const events = streamEvents(turnId, 6)
          const broken: StreamEvent.StreamEvent = { ...events[2]!, type: "response_done" }
          const passed: Array<StreamEvent.StreamEvent> = []
          const error = yield* Stream.fromIterable([events[0]!, events[1]!, broken, events[3]!]).pipe(
            TurnPublisher.publishEvents(turnId),
            Stream.runForEach((event) => Effect.sync(() => passed.push(event))),
            Effect.flip
          )
          expect(error.reason).toBe("InvalidInput")
          expect(error.detail).toContain(broken.event_id)
          expect(error.written).toBe(2)
          expect(passed).toStrictEqual(events.slice(0, 2))
          const redis = yield* RedisStreams
          expect(yield* redis.xlen(TurnKeys.eventsKey(prefix, turnId))).toBe(2)
        }).pipe(Effect.provide(TurnPublisher.layer(fast))))

      it.effect("the final event ends a follower of the turn", () =>
        Effect.gen(function*() {
          const turnId = randomUUID()
          const events = streamEvents(turnId, 30)
          const redis = yield* RedisStreams
          const follower = yield* redis.tail(TurnKeys.eventsKey(prefix, turnId), { until: TurnEntry.isFinal }).pipe(
            Stream.mapEffect(TurnEntry.toStreamEvent),
            Stream.runCollect,
            Effect.forkChild
          )
          yield* Stream.fromIterable(events).pipe(TurnPublisher.publishEvents(turnId), Stream.runDrain)
          expect(yield* Fiber.join(follower)).toStrictEqual(events)
        }).pipe(Effect.provide(TurnPublisher.layer(fast))))
    })

    describe("retries", () => {
      const withFaults = (faults: ReadonlyArray<Fault>, maxInFlight: number) => {
        const injected = faulty((call) => faults[call] ?? "pass")
        return { injected, layer: TurnPublisher.layer({ ...fast, maxInFlight, retryAttempts: faults.length }) }
      }

      for (const fault of ["drop", "lose-reply", "half-lands"] as const) {
        it.effect(`${fault}: every message lands exactly once, in order`, () => {
          const { injected, layer: publisher } = withFaults([fault, "pass", fault, fault, "pass", fault], 8)
          const turnId = randomUUID()
          const messages = upsertMessages(turnId, 60)
          return Effect.gen(function*() {
            expect(yield* publishB(turnId, messages)).toStrictEqual(messages)
            expect(yield* storedB(turnId)).toStrictEqual(kept(messages))
            expect(injected.log.faults).toContain(fault)
          }).pipe(Effect.provide(publisher), Effect.provide(injected.layer))
        })
      }

      it.effect("after the last retry the stage fails with RetriesExhausted, having passed on only what landed", () => {
        const injected = faulty((call) => (call === 0 ? "pass" : "drop"))
        const turnId = randomUUID()
        const messages = upsertMessages(turnId, 30)
        return Effect.gen(function*() {
          const passed: Array<StreamBMessage.StreamBMessage> = []
          const run = yield* Stream.fromIterable(messages).pipe(
            TurnPublisher.publishUpserts(turnId),
            Stream.runForEach((message) => Effect.sync(() => passed.push(message))),
            Effect.flip,
            Effect.forkChild
          )
          // docs/upserts.md#retries-the-promise-facade: retries after 1 s, 2 s and 4 s (capped at 10 s), then the error.
          yield* injected.reached(2)
          yield* TestClock.adjust(999)
          expect(injected.log.faults.length).toBe(2)
          yield* TestClock.adjust(1 + 2_000 + 4_000)
          const error = yield* Fiber.join(run)
          expect(error.reason).toBe("RetriesExhausted")
          expect(error.attempts).toBe(4)
          expect(injected.log.faults).toStrictEqual(["pass", "drop", "drop", "drop", "drop"])
          const first = injected.log.batchSizes[0]!
          expect(passed).toStrictEqual(messages.slice(0, first))
          expect(error.written).toBe(first)
          expect(error.entryId).toBe(`0-${first + 1}`)
          expect(yield* storedB(turnId)).toStrictEqual(kept(passed))
        }).pipe(
          Effect.provide(TurnPublisher.layer({ prefix, maxInFlight: 4 })),
          Effect.provide(injected.layer)
        )
      })
    })

    describe("back-pressure", () => {
      it.effect("at most maxInFlight writes per batch, and the producer waits while a batch is out", () =>
        Effect.gen(function*() {
          const gate = yield* Deferred.make<void>()
          const injected = faulty(() => "pass", { gate })
          const turnId = randomUUID()
          const messages = upsertMessages(turnId, 100)
          let produced = 0
          const source = Stream.unfold(0, (i) =>
            Effect.sync(() => {
              if (i >= messages.length) return undefined
              produced++
              return [messages[i]!, i + 1] as const
            }))
          const run = yield* source.pipe(
            TurnPublisher.publishUpserts(turnId),
            Stream.runCollect,
            Effect.provide(TurnPublisher.layer({ ...fast, maxInFlight: 4 })),
            Effect.provide(injected.layer),
            Effect.forkChild
          )
          for (let i = 0; i < 500; i++) yield* Effect.yieldNow
          // One batch held at the gate, one being gathered, one element in hand.
          expect(produced).toBeLessThanOrEqual(4 + 4 + 1)
          yield* Deferred.succeed(gate, undefined)
          expect(yield* Fiber.join(run)).toStrictEqual(messages)
          expect(Math.max(...injected.log.batchSizes)).toBeLessThanOrEqual(4)
          expect(yield* storedB(turnId)).toStrictEqual(kept(messages))
        }))
    })
  })

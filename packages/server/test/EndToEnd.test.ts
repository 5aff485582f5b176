/**
 * End to end on a real redis-server (started by the global setup, or REDIS_URL): a
 * turn goes through Stream A, the upsert stage and Stream B with the TurnPublisher,
 * and is read back over HTTP, after the fact, live, across a reconnect, and across a
 * Redis connection that is cut under the reader.
 */
import { describe, expect, layer } from "@effect/vitest"
import { RedisStreamsLive } from "@sluice/redis"
import { admin, clients } from "@sluice/testing/redis"
import {
  bearer,
  expectedFrames,
  open,
  producer,
  publishTurn,
  readAll,
  request,
  serve,
  takeEvents,
  tokens
} from "@sluice/testing/server"
import { streamEvents, upsertMessages } from "@sluice/testing/turns"
import { UpsertStream } from "@sluice/upserts"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"
import type * as TurnSnapshot from "../src/TurnSnapshot.js"
import { watchedTails } from "./support/tails.js"

// A database of its own, so that this file's connections can be told apart.
const url = (() => {
  const base = new URL(inject("redisUrl"))
  base.pathname = "/9"
  return base.toString()
})()
const live = RedisStreamsLive.layer({ url })
const auth = bearer(tokens[0])

const tailConnections = Effect.map(clients(url), (all) => all.filter((c) => c.name === "sluice-tail" && c.db === "9"))

// Polls Redis until this file holds `n` tail connections (Redis sees a close a moment
// after the client makes it).
const untilTails = (n: number) =>
  Effect.retry(
    Effect.filterOrFail(tailConnections, (found) =>
      found.length === n, (found) =>
      `${found.length} tail connections, not ${n}`),
    Schedule.max([Schedule.spaced("20 millis"), Schedule.recurs(250)])
  )

layer(live, { timeout: 60_000, excludeTestServices: true })("end to end on redis-server", (it) => {
  describe("a turn through the whole pipeline", () => {
    it.effect("read back over SSE after the producer finished: exactly what the stage emitted, and every StreamEvent", () =>
      Effect.gen(function*() {
        const base = yield* serve()
        const turnId = randomUUID()
        const events = streamEvents(turnId, 200)
        const emitted = yield* publishTurn(turnId, events)
        expect(emitted.length).toBeGreaterThan(3)
        const upserts = yield* readAll(`${base}/v1/turns/${turnId}/upserts`, auth)
        expect(upserts).toStrictEqual(expectedFrames(emitted))
        const stage = yield* Stream.fromIterable(events).pipe(UpsertStream.upserts(), Stream.runCollect)
        expect(upserts.map((frame) => JSON.parse(frame.data))).toStrictEqual(
          stage.map((payload) => JSON.parse(JSON.stringify(payload)))
        )
        const streamA = yield* readAll(`${base}/v1/turns/${turnId}/events`, auth)
        expect(streamA.map((frame) => [frame.id, frame.event])).toStrictEqual(
          events.map((event, i) => [`0-${i + 1}`, event.type])
        )
        expect(streamA.map((frame) => JSON.parse(frame.data))).toStrictEqual(
          events.map((event) => JSON.parse(JSON.stringify(event)))
        )
        // The snapshot agrees with the stream.
        const snapshot = (yield* request(`${base}/v1/turns/${turnId}`, auth)).body as TurnSnapshot.TurnSnapshot
        const lastUpsert = emitted.filter((message) => message.payloadType === "item_upsert").at(-1)!
        expect(snapshot).toMatchObject({
          status: "complete",
          lastEventId: `0-${emitted.length}`,
          entries: emitted.length
        })
        expect(snapshot.items).toStrictEqual([JSON.parse(lastUpsert.payload)])
        yield* untilTails(0)
      }))
  })

  describe("connections", () => {
    it.effect("a client that goes away: its tail ends and its Redis connection is closed", () => {
      const watched = watchedTails()
      return Effect.gen(function*() {
        yield* untilTails(0)
        const base = yield* serve()
        const turnId = randomUUID()
        const produce = yield* producer(turnId, upsertMessages(turnId, 10))
        yield* produce.release(3)
        const opened = yield* open(`${base}/v1/turns/${turnId}/upserts`, auth)
        yield* takeEvents(yield* Stream.toPull(opened.events), 3)
        expect((yield* tailConnections).length).toBe(1)
        yield* opened.abort
        yield* watched.released(1)
        yield* untilTails(0)
      }).pipe(Effect.provide(watched.layer.pipe(Layer.provideMerge(live))))
    })

    it.effect("a tail connection cut by Redis mid-turn is reopened after the last entry sent: nothing lost or repeated", () =>
      Effect.gen(function*() {
        const base = yield* serve({ resumeBaseMs: 10, resumeMaxMs: 100 })
        const turnId = randomUUID()
        const messages = upsertMessages(turnId, 60)
        const produce = yield* producer(turnId, messages)
        yield* produce.release(20)
        const opened = yield* open(`${base}/v1/turns/${turnId}/upserts`, auth)
        const pull = yield* Stream.toPull(opened.events)
        const seen = yield* takeEvents(pull, 20)
        for (const cut of [0, 1]) {
          const [tail] = yield* untilTails(1)
          yield* admin(url, ["CLIENT", "KILL", "ID", tail!.id])
          // A new tail connection takes over once the old one is gone.
          yield* Effect.retry(
            Effect.filterOrFail(
              tailConnections,
              (found) => found.length === 1 && found[0]!.id !== tail!.id,
              () => "not yet"
            ),
            Schedule.max([Schedule.spaced("20 millis"), Schedule.recurs(250)])
          )
          yield* produce.release(20)
          seen.push(...(yield* takeEvents(pull, 20)))
          expect(seen.length).toBe(40 + cut * 20)
        }
        expect(seen).toStrictEqual(expectedFrames(messages))
        expect(Cause.isDone(yield* Effect.flip(pull))).toBe(true)
      }))
  })
})

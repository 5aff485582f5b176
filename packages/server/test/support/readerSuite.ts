/**
 * What a reader of the SSE endpoints sees, run on every `RedisStreams` layer: replay,
 * resume by `?after=` and `Last-Event-ID`, live following, a reconnect mid-turn,
 * Stream A.
 */
import { describe, expect, layer } from "@effect/vitest"
import type { RedisStreams } from "@sluice/redis"
import {
  bearer,
  expectedFrames,
  open,
  producer,
  publishEvents,
  publishUpserts,
  readAll,
  type Received,
  received,
  serve,
  takeEvents,
  tokens
} from "@sluice/testing/server"
import { streamEvents, upsertMessages } from "@sluice/testing/turns"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"

const auth = bearer(tokens[0])

export const readerSuite = (name: string, streams: Layer.Layer<RedisStreams.RedisStreams, unknown>) =>
  layer(streams, { timeout: 60_000, excludeTestServices: true })(name, (it) => {
    describe("GET /v1/turns/:turnId/upserts", () => {
      it.effect("replays a finished turn from its start, then closes", () =>
        Effect.gen(function*() {
          const base = yield* serve()
          const turnId = randomUUID()
          const messages = upsertMessages(turnId, 40)
          yield* publishUpserts(turnId, messages)
          const opened = yield* open(`${base}/v1/turns/${turnId}/upserts`, auth)
          expect(opened.status).toBe(200)
          expect(opened.headers.get("content-type")).toBe("text/event-stream; charset=utf-8")
          expect(opened.headers.get("cache-control")).toBe("no-cache, no-transform")
          const events = Array.from(yield* Stream.runCollect(opened.events), received)
          expect(events).toStrictEqual(expectedFrames(messages))
        }))

      it.effect("?after= and Last-Event-ID resume after the given entry; the header wins", () =>
        Effect.gen(function*() {
          const base = yield* serve()
          const turnId = randomUUID()
          const messages = upsertMessages(turnId, 30)
          yield* publishUpserts(turnId, messages)
          const url = `${base}/v1/turns/${turnId}/upserts`
          expect(yield* readAll(`${url}?after=0-10`, auth)).toStrictEqual(expectedFrames(messages, 10))
          expect(yield* readAll(url, { ...auth, "last-event-id": "0-25" })).toStrictEqual(expectedFrames(messages, 25))
          expect(yield* readAll(`${url}?after=0-3`, { ...auth, "last-event-id": "0-20" })).toStrictEqual(
            expectedFrames(messages, 20)
          )
          expect(yield* readAll(`${url}?after=0-0`, auth)).toStrictEqual(expectedFrames(messages))
        }))

      it.effect("resuming after the entry that ended the turn closes at once with nothing", () =>
        Effect.gen(function*() {
          const base = yield* serve()
          const turnId = randomUUID()
          yield* publishUpserts(turnId, upsertMessages(turnId, 12))
          expect(yield* readAll(`${base}/v1/turns/${turnId}/upserts`, { ...auth, "last-event-id": "0-12" }))
            .toStrictEqual([])
        }))

      it.effect("follows a running turn live: each entry arrives after it is appended, and the stream ends with the turn", () =>
        Effect.gen(function*() {
          const base = yield* serve()
          const turnId = randomUUID()
          const messages = upsertMessages(turnId, 20)
          const produce = yield* producer(turnId, messages)
          yield* produce.release(5)
          const opened = yield* open(`${base}/v1/turns/${turnId}/upserts`, auth)
          const pull = yield* Stream.toPull(opened.events)
          const next = Effect.map(pull, (chunk) => Array.from(chunk, received))
          const seen = yield* takeEvents(pull, 5)
          expect(seen).toStrictEqual(expectedFrames(messages.slice(0, 5)))
          // The rest arrives one entry at a time, each once the producer has written it.
          for (let i = 5; i < messages.length; i++) {
            yield* produce.release(1)
            expect(yield* next).toStrictEqual(expectedFrames(messages, i).slice(0, 1))
          }
          // The turn is over: the server ends the stream.
          expect(Cause.isDone(yield* Effect.flip(pull))).toBe(true)
        }))

      it.effect("a reader that disconnects mid-turn and resumes with Last-Event-ID misses nothing and sees nothing twice", () =>
        Effect.gen(function*() {
          const base = yield* serve()
          const turnId = randomUUID()
          const messages = upsertMessages(turnId, 120)
          const produce = yield* producer(turnId, messages)
          yield* produce.release(50)
          const urlB = `${base}/v1/turns/${turnId}/upserts`
          const first = yield* Effect.scoped(
            Effect.flatMap(open(urlB, auth), (opened) =>
              opened.events.pipe(
                Stream.take(33),
                Stream.runCollect,
                Effect.map((events) => Array.from(events, received))
              ))
          )
          // The producer carries on while the reader is away.
          yield* produce.release(40)
          const again = yield* open(urlB, { ...auth, "last-event-id": first.at(-1)!.id! })
          const pull = yield* Stream.toPull(again.events)
          const second = yield* takeEvents(pull, 57)
          yield* produce.release(30)
          const rest: Array<Received> = []
          yield* Stream.runForEach(
            Stream.fromPull(Effect.succeed(pull)),
            (event) => Effect.sync(() => rest.push(received(event)))
          )
          expect([...first, ...second, ...rest]).toStrictEqual(expectedFrames(messages))
        }))
    })

    describe("GET /v1/turns/:turnId/events", () => {
      it.effect("sends Stream A: each event's data is the StreamEvent's JSON", () =>
        Effect.gen(function*() {
          const base = yield* serve()
          const turnId = randomUUID()
          const events = streamEvents(turnId, 25)
          yield* publishEvents(turnId, events)
          const frames = yield* readAll(`${base}/v1/turns/${turnId}/events`, auth)
          expect(frames.map((frame) => frame.id)).toStrictEqual(events.map((_, i) => `0-${i + 1}`))
          expect(frames.map((frame) => frame.event)).toStrictEqual(events.map((event) => event.type))
          expect(frames.map((frame) => JSON.parse(frame.data))).toStrictEqual(
            events.map((event) => JSON.parse(JSON.stringify(event)))
          )
        }))
    })
  })

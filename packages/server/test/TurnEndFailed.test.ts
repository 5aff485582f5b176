/**
 * A failed turn ends as producers end it: `response_error` then `response_done` (status
 * `error`, with the usage) in Stream A, `turn_error` then `turn_completed` (status
 * `error`, with the usage) in Stream B. Every reader reads on past the error to that
 * last entry (core's `LastEntry`): the SSE routes `/events` and `/upserts`, the UI
 * message stream and `@sluice/client`, over real HTTP on the in-memory store.
 */
import { describe, expect, it } from "@effect/vitest"
import { followTurn } from "@sluice/client"
import { StreamBMessage, StreamEvent, type UITurnEvent } from "@sluice/core"
import { RedisStreamsMemory } from "@sluice/redis"
import { bearer, producer, publishEvents, publishTurn, readAll, serve, tokens } from "@sluice/testing/server"
import { messageUpsert, streamEvents } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"

const auth = bearer(tokens[0])
const usage = { input: 12, output: 7, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 19 }
const error = { code: "overloaded_error", message: "Overloaded", type: "api_error" as const, retryable: true }

/** A turn that fails mid-message: its events, the error, then `response_done` with the usage. */
const failedEvents = (turnId: string): Array<StreamEvent.StreamEvent> => {
  const events = streamEvents(turnId, 8).slice(0, -1)
  const context = { runId: events[0]!.run_id }
  const responseId = events[0]!.payload.type === "response_start" ? events[0]!.payload.response_id : ""
  return [
    ...events,
    StreamEvent.envelope(context, { type: "response_error", response_id: responseId, error }, randomUUID(), 1),
    StreamEvent.envelope(
      context,
      { type: "response_done", response_id: responseId, status: "error", finish_reason: "error", usage },
      randomUUID(),
      2
    )
  ]
}

const payloadTypes = (frames: ReadonlyArray<{ readonly event?: string | undefined }>) =>
  frames.map((frame) => frame.event)

const get = (url: string) => Effect.promise(() => fetch(url, { headers: auth }).then((reply) => reply.text()))

const follow = (base: string, turnId: string) =>
  followTurn(base, turnId, { token: tokens[0], reconnect: { baseMs: 1, maxMs: 1 } })

describe("a failed turn's readers read on to its last entry", () => {
  it.effect(
    "/events ends with response_done after response_error; /upserts with turn_completed after turn_error",
    () =>
      Effect.gen(function*() {
        const base = yield* serve()
        const turnId = randomUUID()
        const events = failedEvents(turnId)
        const messages = yield* publishTurn(turnId, events)
        const a = yield* readAll(`${base}/v1/turns/${turnId}/events`, auth)
        expect(a.length).toBe(events.length)
        expect(payloadTypes(a.slice(-2))).toStrictEqual(["response_error", "response_done"])
        expect(JSON.parse(a.at(-1)!.data)).toMatchObject({ payload: { type: "response_done", status: "error", usage } })
        const b = yield* readAll(`${base}/v1/turns/${turnId}/upserts`, auth)
        expect(b.length).toBe(messages.length)
        const lastTwo = b.slice(-2).map((frame) => JSON.parse(frame.data) as UITurnEvent.UITurnEvent)
        expect(lastTwo).toMatchObject([
          { type: "turn_error", error: { code: "overloaded_error" } },
          { type: "turn_completed", status: "error", usage: { promptTokens: 12, completionTokens: 7, totalTokens: 19 } }
        ])
        // resuming after the error gets the last entry; resuming after the last entry gets nothing
        const afterError = yield* readAll(`${base}/v1/turns/${turnId}/upserts?after=${b.at(-2)!.id}`, auth)
        expect(afterError.map((frame) => frame.id)).toStrictEqual([b.at(-1)!.id])
        expect(yield* readAll(`${base}/v1/turns/${turnId}/upserts?after=${b.at(-1)!.id}`, auth)).toStrictEqual([])
      }).pipe(Effect.provide(RedisStreamsMemory.layer)),
    30_000
  )

  it.effect(
    "the UI message stream gives the error, then finishes once, from response_done with its usage, with one [DONE]",
    () =>
      Effect.gen(function*() {
        const base = yield* serve()
        const turnId = randomUUID()
        yield* publishTurn(turnId, failedEvents(turnId))
        const text = yield* get(`${base}/v1/turns/${turnId}/ui-message-stream`)
        // a frame's data line (the last frame of an entry's chunks opens with its `id:` line)
        const chunks = text.split("\n\n").flatMap((frame) =>
          frame.split("\n").filter((line) => line.startsWith("data: "))
        )
          .map((line) => line.slice(6))
        expect(chunks.filter((chunk) => chunk === "[DONE]").length).toBe(1)
        const types = chunks.slice(-4).map((
          chunk
        ) => (chunk === "[DONE]" ? chunk : (JSON.parse(chunk) as { type: string }).type))
        expect(types).toStrictEqual(["error", "finish-step", "finish", "[DONE]"])
        expect(chunks.filter((chunk) => chunk.includes("\"type\":\"finish\"")).length).toBe(1)
        // the usage, which only response_done carries
        expect(JSON.parse(chunks.at(-2)!)).toStrictEqual({
          type: "finish",
          finishReason: "error",
          messageMetadata: { usage }
        })
      }).pipe(Effect.provide(RedisStreamsMemory.layer)),
    30_000
  )

  it.effect("@sluice/client reads a finished failed turn to its usage", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const turnId = randomUUID()
      yield* publishTurn(turnId, failedEvents(turnId))
      const final = yield* Effect.promise(() => follow(base, turnId).done)
      expect([final.connection, final.status, final.error?.code, final.usage?.totalTokens]).toStrictEqual([
        "finished",
        "error",
        "overloaded_error",
        19
      ])
    }).pipe(Effect.provide(RedisStreamsMemory.layer)), 30_000)

  it.effect(
    "@sluice/client that opens a failed turn between turn_error and turn_completed follows it to the usage",
    () =>
      Effect.gen(function*() {
        const base = yield* serve()
        const turnId = randomUUID()
        const threadId = randomUUID()
        const at = (n: number) => 1_700_000_000_000 + n
        const upsert = messageUpsert(turnId, threadId, "item-1", "partial", "created")
        const messages = [
          StreamBMessage.wrap({ type: "turn_started", turnId, threadId }, randomUUID(), at(0)),
          StreamBMessage.wrap(upsert, randomUUID(), at(1)),
          StreamBMessage.wrap(
            { type: "turn_error", turnId, threadId, error: { code: "overloaded_error", message: "Overloaded" } },
            randomUUID(),
            at(2)
          ),
          StreamBMessage.wrap(
            {
              type: "turn_completed",
              turnId,
              threadId,
              status: "error",
              usage: { promptTokens: 12, completionTokens: 7, totalTokens: 19 }
            },
            randomUUID(),
            at(3)
          )
        ]
        yield* publishEvents(turnId, streamEvents(turnId, 4).slice(0, 1))
        const produce = yield* producer(turnId, messages)
        yield* produce.release(3)
        const handle = follow(base, turnId)
        // the client has the turn's error: the snapshot, or the feed, gave it the turn_error
        yield* Effect.promise(() =>
          new Promise<void>((resolve) => {
            const check = () => {
              if (handle.getSnapshot().error !== undefined) resolve()
            }
            handle.subscribe(check)
            check()
          })
        )
        expect(handle.getSnapshot()).toMatchObject({ status: "error", ended: false })
        yield* produce.release(1)
        const final = yield* Effect.promise(() => handle.done)
        expect([final.connection, final.status, final.usage?.totalTokens, final.ended]).toStrictEqual([
          "finished",
          "error",
          19,
          true
        ])
        expect(final.lastEventId).toBe("0-4")
      }).pipe(Effect.provide(RedisStreamsMemory.layer)),
    30_000
  )
  it.effect(
    "the Durable Streams view of a turn closes at its last entry, not at turn_error",
    () =>
      Effect.gen(function*() {
        const base = yield* serve()
        const turnId = randomUUID()
        const threadId = randomUUID()
        const messages = [
          StreamBMessage.wrap({ type: "turn_started", turnId, threadId }, randomUUID(), 1),
          StreamBMessage.wrap(
            { type: "turn_error", turnId, threadId, error: { code: "overloaded_error", message: "Overloaded" } },
            randomUUID(),
            2
          ),
          StreamBMessage.wrap({ type: "turn_completed", turnId, threadId, status: "error" }, randomUUID(), 3)
        ]
        const produce = yield* producer(turnId, messages)
        yield* produce.release(2)
        const read = Effect.promise(() =>
          fetch(`${base}/v1/stream/turns/${turnId}/upserts?offset=-1`, { headers: auth }).then(async (reply) => ({
            closed: reply.headers.get("stream-closed"),
            values: (JSON.parse(await reply.text()) as ReadonlyArray<{ readonly payloadType: string }>).length
          }))
        )
        const atError = yield* read
        expect([atError.closed === "true", atError.values]).toStrictEqual([false, 2])
        yield* produce.release(1)
        expect(yield* read).toStrictEqual({ closed: "true", values: 3 })
      }).pipe(Effect.provide(RedisStreamsMemory.layer)),
    30_000
  )
})

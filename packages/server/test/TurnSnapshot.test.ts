/**
 * Snapshots of turns (the fold, and `GET /v1/turns/:turnId`) and the list of recent
 * turns (`GET /v1/turns`), on the in-memory store.
 */
import { describe, expect, it } from "@effect/vitest"
import { StreamBMessage, type UITurnEvent, type UIUpsert } from "@sluice/core"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import { bearer, prefix, producer, publishTurn, publishUpserts, request, serve, tokens } from "@sluice/testing/server"
import { messageUpsert, streamEvents } from "@sluice/testing/turns"
import { TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import * as FastCheck from "fast-check"
import { randomUUID } from "node:crypto"
import * as TurnSnapshot from "../src/TurnSnapshot.js"

const auth = bearer(tokens[0])
const threadId = randomUUID()

const upsert = (turnId: string, itemId: string, content: string, changeType?: UIUpsert.UIUpsertChangeType) =>
  messageUpsert(turnId, threadId, itemId, content, changeType)

const wrap = (payloads: ReadonlyArray<StreamBMessage.UIPayload>) =>
  payloads.map((payload, i) => StreamBMessage.wrap(payload, randomUUID(), 1_700_000_000_000 + i))

describe("TurnSnapshot.fromPayloads", () => {
  it("items are the last upsert of each item, in the order items first appeared", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.array(FastCheck.tuple(FastCheck.constantFrom("a", "b", "c", "d", "e"), FastCheck.string()), {
          maxLength: 40
        }),
        (steps) => {
          const turnId = randomUUID()
          const payloads = steps.map(([itemId, content]) => upsert(turnId, itemId, content))
          const snapshot = TurnSnapshot.fromPayloads(turnId, payloads.map((p, i) => [`0-${i + 1}`, p] as const))
          const order = [...new Set(steps.map(([itemId]) => itemId))]
          expect(snapshot.items.map((item) => item.itemId)).toStrictEqual(order)
          for (const item of snapshot.items) {
            expect(item.content).toBe(steps.filter(([itemId]) => itemId === item.itemId).at(-1)![1])
          }
          expect(snapshot.entries).toBe(steps.length)
          expect(snapshot.lastEventId).toBe(steps.length === 0 ? "0-0" : `0-${steps.length}`)
          expect(snapshot.status).toBe("streaming")
        }
      ),
      { numRuns: 100 }
    )
  }, 60_000)

  it("takes status, usage, error, model and provider from the turn events", () => {
    const turnId = randomUUID()
    const started: UITurnEvent.UITurnEvent = {
      type: "turn_started",
      turnId,
      threadId,
      modelId: "m-1",
      providerId: "p-1"
    }
    const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 }
    const completed: UITurnEvent.UITurnEvent = { type: "turn_completed", turnId, threadId, status: "aborted", usage }
    const failed: UITurnEvent.UITurnEvent = {
      type: "turn_error",
      turnId,
      threadId,
      error: { code: "rate_limit", message: "slow down" }
    }
    const at = (payloads: ReadonlyArray<StreamBMessage.UIPayload>) =>
      TurnSnapshot.fromPayloads(turnId, payloads.map((p, i) => [`0-${i + 1}`, p] as const))
    expect(at([started, upsert(turnId, "x", "hi")])).toStrictEqual({
      turnId,
      threadId,
      modelId: "m-1",
      providerId: "p-1",
      status: "streaming",
      items: [upsert(turnId, "x", "hi")],
      lastEventId: "0-2",
      entries: 2
    })
    expect(at([started, completed])).toMatchObject({ status: "aborted", usage })
    const errored = at([started, upsert(turnId, "x", "partial"), failed])
    expect(errored).toMatchObject({ status: "error", error: { code: "rate_limit", message: "slow down" } })
    expect(errored.usage).toBeUndefined()
  })
})

describe("GET /v1/turns/:turnId", () => {
  it.effect("the snapshot of a turn published through the upsert stage: its message, status and last id", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const turnId = randomUUID()
      const events = streamEvents(turnId, 30)
      const emitted = yield* publishTurn(turnId, events)
      const reply = yield* request(`${base}/v1/turns/${turnId}`, auth)
      expect(reply.status).toBe(200)
      expect(reply.headers.get("cache-control")).toBe("no-store")
      const snapshot = reply.body as TurnSnapshot.TurnSnapshot
      const deltas = events.flatMap((
        event
      ) => (event.payload.type === "item_delta" ? [event.payload.delta_content] : []))
      const responseStart = events[0]!.payload
      expect(snapshot).toMatchObject({
        turnId,
        status: "complete",
        lastEventId: `0-${emitted.length}`,
        entries: emitted.length,
        threadId: responseStart.type === "response_start" ? responseStart.thread_id : ""
      })
      // The one item, as the stage last emitted it, holding every delta.
      const lastUpsert = emitted.filter((message) => message.payloadType === "item_upsert").at(-1)!
      expect(snapshot.items).toStrictEqual([JSON.parse(lastUpsert.payload)])
      expect(snapshot.items[0]!.content).toBe(deltas.join(""))
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("a running turn is `streaming`, with the latest content so far and the id to follow from", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const turnId = randomUUID()
      const started: UITurnEvent.UITurnEvent = { type: "turn_started", turnId, threadId }
      const messages = wrap([
        started,
        upsert(turnId, "a", "A1", "created"),
        upsert(turnId, "b", "B1", "created"),
        upsert(turnId, "a", "A1 A2"),
        { type: "turn_completed", turnId, threadId, status: "complete" }
      ])
      const produce = yield* producer(turnId, messages)
      yield* produce.release(4)
      const running = (yield* request(`${base}/v1/turns/${turnId}`, auth)).body as TurnSnapshot.TurnSnapshot
      expect(running.status).toBe("streaming")
      expect(running.lastEventId).toBe("0-4")
      expect(running.items.map((item) => [item.itemId, item.content])).toStrictEqual([["a", "A1 A2"], ["b", "B1"]])
      yield* produce.release(1)
      const done = (yield* request(`${base}/v1/turns/${turnId}`, auth)).body as TurnSnapshot.TurnSnapshot
      expect([done.status, done.lastEventId]).toStrictEqual(["complete", "0-5"])
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("reads a long turn in pages: every entry counted, items in first-seen order", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const turnId = randomUUID()
      const n = TurnSnapshot.pageSize * 2 + 345
      const payloads = Array.from({ length: n }, (_, i) => upsert(turnId, `item-${i % 700}`, `v${i}`))
      yield* publishUpserts(turnId, wrap(payloads))
      const snapshot = (yield* request(`${base}/v1/turns/${turnId}`, auth)).body as TurnSnapshot.TurnSnapshot
      expect(snapshot.entries).toBe(n)
      expect(snapshot.lastEventId).toBe(`0-${n}`)
      expect(snapshot.items.length).toBe(700)
      expect(snapshot.items[0]).toMatchObject({ itemId: "item-0", content: `v${n - 1 - ((n - 1) % 700)}` })
      expect(snapshot.items.map((item) => item.itemId)).toStrictEqual(
        Array.from({ length: 700 }, (_, i) => `item-${i}`)
      )
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("an entry that is not a valid StreamBMessage is 500 invalid_entry, naming it", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const turnId = randomUUID()
      yield* publishUpserts(turnId, wrap([upsert(turnId, "a", "fine")]))
      const redis = yield* RedisStreams.RedisStreams
      yield* redis.xadd(TurnKeys.upsertsKey(prefix, turnId), {
        id: "0-2",
        fields: [["eventId", randomUUID()], ["timestamp", "1"], ["turnId", turnId], ["payloadType", "item_upsert"], [
          "payload",
          "{\"type\":\"nope\"}"
        ]]
      })
      const reply = yield* request(`${base}/v1/turns/${turnId}`, auth)
      expect(reply.status).toBe(500)
      expect(reply.body).toMatchObject({ error: { code: "invalid_entry" } })
      expect(JSON.stringify(reply.body)).toContain("entry 0-2")
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

describe("GET /v1/turns", () => {
  it.effect("recent turns newest first, from the publisher's index, with ?limit=", () =>
    Effect.gen(function*() {
      const base = yield* serve({ listLimit: 3 })
      const turnIds = Array.from({ length: 5 }, () => randomUUID())
      for (const [i, turnId] of turnIds.entries()) {
        yield* TestClock.setTime(1_000_000 + i * 1000)
        yield* publishUpserts(turnId, wrap([upsert(turnId, "a", "x")]))
      }
      const newest = [...turnIds].reverse()
      const all = (yield* request(`${base}/v1/turns?limit=10`, auth)).body
      expect(all).toStrictEqual({
        turns: newest.map((turnId, i) => ({
          turnId,
          startedAt: 1_000_000 + (4 - i) * 1000,
          // no Stream A and no upsert still `created`: when output began is unknown
          status: "streaming"
        }))
      })
      const byDefault = (yield* request(`${base}/v1/turns`, auth)).body as { turns: ReadonlyArray<{ turnId: string }> }
      expect(byDefault.turns.map((turn) => turn.turnId)).toStrictEqual(newest.slice(0, 3))
      const two = (yield* request(`${base}/v1/turns?limit=2`, auth)).body as {
        turns: ReadonlyArray<{ turnId: string }>
      }
      expect(two.turns.map((turn) => turn.turnId)).toStrictEqual(newest.slice(0, 2))
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("an empty index is an empty list", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      expect((yield* request(`${base}/v1/turns`, auth)).body).toStrictEqual({ turns: [] })
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("each turn with its provider, model, status, first output and end, from the head and the last entry of its stream", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const redis = yield* RedisStreams.RedisStreams
      const done = randomUUID()
      const failed = randomUUID()
      const gone = randomUUID()
      const broken = randomUUID()
      yield* TestClock.setTime(1_000_000)
      yield* publishUpserts(
        done,
        wrap([
          { type: "turn_started", turnId: done, threadId, providerId: "anthropic", modelId: "claude-sonnet-4-5" },
          upsert(done, "a", "Hello", "completed"),
          { type: "turn_completed", turnId: done, threadId, status: "complete" }
        ])
      )
      yield* TestClock.setTime(1_001_000)
      yield* publishUpserts(
        failed,
        wrap([
          { type: "turn_started", turnId: failed, threadId, providerId: "openai" },
          { type: "turn_error", turnId: failed, threadId, error: { code: "overloaded_error", message: "Overloaded" } }
        ])
      )
      // A turn in the index whose stream expired, and one whose first entry is not a message.
      yield* redis.zadd(TurnKeys.turnsKey(prefix), 1_002_000, gone)
      yield* redis.zadd(TurnKeys.turnsKey(prefix), 1_003_000, broken)
      yield* redis.xadd(TurnKeys.upsertsKey(prefix, broken), { id: "0-1", fields: [["payload", "nope"]] })
      const list = yield* request(`${base}/v1/turns`, auth)
      expect(list.status).toBe(200)
      expect(list.body).toStrictEqual({
        turns: [
          { turnId: broken, startedAt: 1_003_000 },
          { turnId: gone, startedAt: 1_002_000 },
          {
            turnId: failed,
            startedAt: 1_001_000,
            providerId: "openai",
            status: "error",
            endedAt: 1_700_000_000_001,
            durationMs: 1
          },
          {
            turnId: done,
            startedAt: 1_000_000,
            providerId: "anthropic",
            modelId: "claude-sonnet-4-5",
            status: "complete",
            endedAt: 1_700_000_000_002,
            durationMs: 2
          }
        ]
      })
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

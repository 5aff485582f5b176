/**
 * Storage linear in content, reads bounded by bytes: a 4 MB message published through
 * the upsert stage and the publisher leaves Stream B at most 3x the message's bytes
 * (each item keeps its last upsert only), on Redis and in memory alike; and a server
 * serving that turn answers ten snapshots at once and a list of turns meanwhile.
 * Counts bytes, never time (the list request has a generous liveness bound only).
 */
import { describe, expect, it } from "@effect/vitest"
import { StreamBMessage, type UIUpsert } from "@sluice/core"
import { ReadBudget, RedisStreams, RedisStreamsLive, RedisStreamsMemory } from "@sluice/redis"
import { bearer, prefix, readAll, request, serve, tokens, trimmingPublisher } from "@sluice/testing/server"
import { kept, messageText, messageTurn, upsertMessages } from "@sluice/testing/turns"
import { TurnEntry, TurnKeys, TurnPublisher } from "@sluice/turns"
import { StreamBMessages, UpsertStream } from "@sluice/upserts"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"
import * as TurnSnapshot from "../src/TurnSnapshot.js"

const auth = bearer(tokens[0])
const text = messageText(4 * 1024 * 1024)

/**
 * Publishes the 4 MB message's turn through the upsert stage to Stream B; how many
 * upserts. Without the gradient's growth (`batchGrowth: 0`, the last step repeating),
 * so that hundreds of whole-content upserts reach the store and its trimming is what
 * keeps Stream B linear.
 */
const publishMessage = (turnId: string) =>
  messageTurn(turnId, text).pipe(
    UpsertStream.upserts({ batchGrowth: 0 }),
    StreamBMessages.wrap,
    TurnPublisher.publishUpserts(turnId),
    Stream.runCount,
    Effect.provide(trimmingPublisher)
  )

/** Stream B as stored: its bytes, and its entries' payloads. */
const storedB = (turnId: string) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const entries = yield* redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")
    const bytes = entries.reduce((sum, entry) => sum + ReadBudget.entryBytes(entry), 0)
    const payloads = yield* Effect.forEach(entries, (entry) =>
      Effect.flatMap(TurnEntry.toStreamBMessage(entry), (message) =>
        StreamBMessage.decodePayload(message.payload)))
    return {
      bytes,
      payloads,
      ids: entries.map((entry) =>
        entry.id
      )
    }
  })

/** Stream B of the turn holds at most 3x the message's bytes, its last upsert the whole message. */
const checkStorage = (turnId: string, upserts: number) =>
  Effect.gen(function*() {
    // the gradient made hundreds of upserts, each carrying the whole content so far
    expect(upserts).toBeGreaterThan(400)
    const stored = yield* storedB(turnId)
    expect(stored.bytes).toBeLessThanOrEqual(3 * text.length)
    const items = stored.payloads.filter((payload): payload is UIUpsert.UIUpsert => payload.type === "item_upsert")
    expect(items).toHaveLength(1)
    expect(items[0]!.changeType).toBe("completed")
    expect(items[0]!.content === text).toBe(true)
    expect(stored.payloads.map((payload) => payload.type)).toStrictEqual([
      "turn_started",
      "item_upsert",
      "turn_completed"
    ])
    expect(stored.ids.at(-1)).toBe(`0-${upserts}`)
  })

describe("a 4 MB message", () => {
  // One turn for both checks: publishing it through the upsert stage writes about 1 GB
  // of upserts to Redis, the cost the storage bound is about.
  it.live(
    "on Redis: Stream B at most 3x its bytes; a server answers ten snapshots at once and a list meanwhile",
    () =>
      Effect.gen(function*() {
        const turnId = randomUUID()
        yield* checkStorage(turnId, yield* publishMessage(turnId))
        const base = yield* serve()
        const snapshot = request(`${base}/v1/turns/${turnId}`, auth)
        const list = request(`${base}/v1/turns?limit=5`, auth).pipe(Effect.timeout("60 seconds"))
        const [snapshots, listed] = yield* Effect.all(
          [Effect.all(Array.from({ length: 10 }, () => snapshot), { concurrency: "unbounded" }), list],
          { concurrency: "unbounded" }
        )
        expect(listed.status).toBe(200)
        expect(JSON.stringify(listed.body)).toContain(turnId)
        for (const reply of snapshots) {
          expect(reply.status).toBe(200)
          const body = yield* Schema.decodeUnknownEffect(TurnSnapshot.TurnSnapshot)(reply.body)
          expect(body.status).toBe("complete")
          expect(body.items).toHaveLength(1)
          expect(body.items[0]!.content === text).toBe(true)
        }
      }).pipe(Effect.scoped, Effect.provide(RedisStreamsLive.layer({ url: inject("redisUrl") }))),
    { timeout: 600_000 }
  )

  it.effect("in memory: the store mirrors the trimming", () =>
    Effect.gen(function*() {
      const turnId = randomUUID()
      yield* checkStorage(turnId, yield* publishMessage(turnId))
    }).pipe(Effect.provide(RedisStreamsMemory.layer)), { timeout: 600_000 })
})

describe("a finished turn's Stream B over SSE", () => {
  it.effect("replays each item's last upsert; a reader resuming after a deleted id gets the latest content", () =>
    Effect.gen(function*() {
      const turnId = randomUUID()
      const messages = upsertMessages(turnId, 12)
      yield* Stream.fromIterable(messages).pipe(
        TurnPublisher.publishUpserts(turnId),
        Stream.runDrain,
        Effect.provide(trimmingPublisher)
      )
      const base = yield* serve()
      const url = `${base}/v1/turns/${turnId}/upserts`
      const frames = (from: ReadonlyArray<{ readonly id: string; readonly message: StreamBMessage.StreamBMessage }>) =>
        from.map(({ id, message }) => ({ id, event: message.payloadType, data: message.payload }))
      const stays = kept(messages)
      expect(stays.map((entry) => entry.id)).toStrictEqual(["0-1", "0-11", "0-12"])
      expect(yield* readAll(url, auth)).toStrictEqual(frames(stays))
      // 0-5 was deleted since the reader saw it: it goes on with the item's last upsert
      expect(yield* readAll(url, { ...auth, "last-event-id": "0-5" })).toStrictEqual(frames(stays.slice(1)))
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

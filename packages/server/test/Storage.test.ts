/**
 * Storage linear in content, reads bounded by bytes: a 4 MB message published through
 * the upsert stage and the publisher leaves Stream B at most 3x the message's bytes
 * (each item keeps its last upsert only), on Redis and in memory alike; and a server
 * serving that turn answers ten snapshots at once and a list of turns meanwhile.
 * Counts bytes, never time (the list request has a generous liveness bound only).
 */
import { describe, expect, it } from "@effect/vitest"
import { StreamBMessage, type UIUpsert } from "@sluice/core"
import { ReadBudget, RedisStreams, RedisStreamsLive, RedisStreamsMemory, TurnEntry, TurnKeys, TurnPublisher } from "@sluice/redis"
import { StreamBMessages, UpsertStream } from "@sluice/upserts"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"
import * as TurnSnapshot from "../src/TurnSnapshot.js"
import { messageText, messageTurn } from "./support/bigTurn.js"
import { bearer, request } from "./support/client.js"
import { prefix, publisher, serve, tokens } from "./support/harness.js"

const auth = bearer(tokens[0])
const text = messageText(4 * 1024 * 1024)

/** Publishes the 4 MB message's turn through the upsert stage to Stream B; how many upserts. */
const publishMessage = (turnId: string) =>
  messageTurn(turnId, text).pipe(
    UpsertStream.upserts(),
    StreamBMessages.wrap,
    TurnPublisher.publishUpserts(turnId),
    Stream.runCount,
    Effect.provide(publisher)
  )

/** Stream B as stored: its bytes, and its entries' payloads. */
const storedB = (turnId: string) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const entries = yield* redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")
    const bytes = entries.reduce((sum, entry) => sum + ReadBudget.entryBytes(entry), 0)
    const payloads = yield* Effect.forEach(entries, (entry) =>
      Effect.flatMap(TurnEntry.toStreamBMessage(entry), (message) => StreamBMessage.decodePayload(message.payload)))
    return { bytes, payloads, ids: entries.map((entry) => entry.id) }
  })

const layers: ReadonlyArray<readonly [string, Layer.Layer<RedisStreams.RedisStreams, unknown>]> = [
  ["Redis", RedisStreamsLive.layerFrom({ url: inject("redisUrl") })],
  ["memory", RedisStreamsMemory.layer]
]

for (const [name, layer] of layers) {
  describe(`Stream B of a 4 MB message (${name})`, () => {
    it.scoped("holds at most 3x the message's bytes, and its last upsert is the whole message", () =>
      Effect.gen(function*() {
        const turnId = randomUUID()
        const upserts = yield* publishMessage(turnId)
        // the gradient made hundreds of upserts, each carrying the whole content so far
        expect(upserts).toBeGreaterThan(400)
        const stored = yield* storedB(turnId)
        expect(stored.bytes).toBeLessThanOrEqual(3 * text.length)
        const items = stored.payloads.filter((payload): payload is UIUpsert.UIUpsert => payload.type === "item_upsert")
        expect(items).toHaveLength(1)
        expect(items[0]!.changeType).toBe("completed")
        expect(items[0]!.content === text).toBe(true)
        expect(stored.payloads.map((payload) => payload.type)).toStrictEqual(["turn_started", "item_upsert", "turn_completed"])
        expect(stored.ids.at(-1)).toBe(`0-${upserts}`)
      }).pipe(Effect.provide(layer)), { timeout: 240_000 })
  })
}

describe("a server holding a 4 MB turn", () => {
  it.live("answers ten snapshots at once with the whole message, and a list of turns meanwhile", () =>
    Effect.gen(function*() {
      const turnId = randomUUID()
      yield* publishMessage(turnId)
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
        const body = yield* Schema.decodeUnknown(TurnSnapshot.TurnSnapshot)(reply.body)
        expect(body.status).toBe("complete")
        expect(body.items).toHaveLength(1)
        expect(body.items[0]!.content === text).toBe(true)
      }
    }).pipe(Effect.scoped, Effect.provide(RedisStreamsLive.layerFrom({ url: inject("redisUrl") }))), { timeout: 240_000 })
})

/**
 * Durable Streams when things go wrong: with its redis-server gone (a dedicated one,
 * killed mid-test), every read and write under `/v1/stream/` answers 503 with a plain
 * body naming Redis, and the stream is read and written again once it is back; and a page
 * token, of either scope, reads durable streams but may not write them (403).
 */
import { describe, expect, it } from "@effect/vitest"
import { DurableStoreLive, DurableStoreMemory } from "@sluice/durable-streams"
import { RedisStreamsLive, RedisStreamsMemory } from "@sluice/redis"
import { scopedRedisServer } from "@sluice/testing/redis"
import { bearer, call, publishUpserts, serve, tokens } from "@sluice/testing/server"
import { upsertMessages } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import * as ViewerToken from "../src/ViewerToken.js"

const auth = bearer(tokens[0])

describe("Durable Streams with Redis down", () => {
  it.effect(
    "every read and write answers 503 naming Redis; the stream is read and written again once Redis is back",
    () =>
      Effect.gen(function*() {
        // persistent: what it acknowledged before the kill is there after the restart
        const server = yield* scopedRedisServer({ persistent: true })
        const settings = { url: server.url, commandTimeoutMs: 2_000, connectTimeoutMs: 2_000 }
        const stores = yield* Layer.build(
          Layer.merge(
            RedisStreamsLive.layer(settings),
            DurableStoreLive.layer({ ...settings, prefix: `sluice-durable-down-${process.pid}` })
          )
        )
        const base = yield* serve().pipe(Effect.provide(stores))
        const turnId = randomUUID()
        yield* publishUpserts(turnId, upsertMessages(turnId, 4)).pipe(Effect.provide(stores))
        const stream = `${base}/v1/stream/chats/${randomUUID()}`
        const json = { ...auth, "content-type": "application/json" }
        const created = yield* call(stream, { method: "PUT", headers: json })
        expect(created.status).toBe(201)
        const requests: ReadonlyArray<readonly [string, string, RequestInit]> = [
          ["catch-up read", `${stream}?offset=-1`, { headers: auth }],
          ["long-poll", `${stream}?offset=now&live=long-poll`, { headers: auth }],
          ["SSE read", `${stream}?offset=-1&live=sse`, { headers: auth }],
          ["HEAD", stream, { method: "HEAD", headers: auth }],
          ["append", stream, { method: "POST", headers: json, body: "{\"role\":\"user\"}" }],
          ["create", `${base}/v1/stream/chats/${randomUUID()}`, { method: "PUT", headers: json }],
          ["turn read", `${base}/v1/stream/turns/${turnId}/upserts?offset=-1`, { headers: auth }]
        ]

        yield* Effect.promise(() => server.kill())
        for (const [what, url, init] of requests) {
          const answer = yield* call(url, init)
          expect({ what, status: answer.status }).toStrictEqual({ what, status: 503 })
          expect(answer.contentType).toMatch(/^text\/plain/)
          if (init.method !== "HEAD") expect(answer.text).toBe("Redis is unavailable, try again later")
        }
        const removed = yield* call(stream, { method: "DELETE", headers: auth })
        expect(removed.status).toBe(503)

        yield* Effect.promise(() => server.restart())
        // the clients reconnect on their own: the catch-up read comes back first
        let status = 0
        for (let i = 0; i < 10_000 && status !== 200; i++) {
          status = (yield* call(`${stream}?offset=-1`, { headers: auth })).status
          if (status !== 200) yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
        }
        expect(status).toBe(200)
        const appended = yield* call(stream, { method: "POST", headers: json, body: "{\"role\":\"user\"}" })
        expect(appended.status).toBe(204)
      }),
    120_000
  )
})

describe("Durable Streams and page tokens", () => {
  it.effect("a page token of either scope reads durable streams but may not write them (403)", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const stream = `${base}/v1/stream/notes/${randomUUID()}`
      const json = { ...auth, "content-type": "application/json" }
      expect((yield* call(stream, { method: "PUT", headers: json, body: "[{\"n\":1}]" })).status).toBe(201)
      const key = ViewerToken.deriveKey([...tokens])
      for (const scope of ["read", "control"] as const) {
        const page = `access_token=${yield* ViewerToken.issue(key, 60_000, scope)}`
        const read = yield* call(`${stream}?offset=-1&${page}`)
        expect({ scope, status: read.status }).toStrictEqual({ scope, status: 200 })
        expect(JSON.parse(read.text)).toStrictEqual([{ n: 1 }])
        const writes: ReadonlyArray<readonly [string, RequestInit]> = [
          [`${stream}?${page}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{\"n\":2}" }],
          [`${stream}?${page}`, { method: "POST", headers: { "stream-closed": "true" } }],
          [`${base}/v1/stream/notes/${randomUUID()}?${page}`, { method: "PUT" }],
          [`${stream}?${page}`, { method: "DELETE" }]
        ]
        for (const [url, init] of writes) {
          const answer = yield* call(url, init)
          expect({ scope, method: init.method, status: answer.status }).toStrictEqual({
            scope,
            method: init.method,
            status: 403
          })
          expect(answer.text).toMatch(/may not write durable streams/)
        }
      }
      // nothing was written: the stream is as it was, open
      const after = yield* call(`${stream}?offset=-1`, { headers: auth })
      expect(JSON.parse(after.text)).toStrictEqual([{ n: 1 }])
      const head = yield* Effect.promise(() => fetch(stream, { method: "HEAD", headers: auth }))
      expect(head.headers.get("stream-closed")).toBeNull()
    }).pipe(Effect.provide(Layer.merge(RedisStreamsMemory.layer, DurableStoreMemory.layer))))
})

/**
 * How deep forks go over HTTP (docs/http.md#fork-depth), on the global setup's
 * redis-server: a chain of 100 forks of forks is made and its deepest reads the whole
 * chain; a fork of that one, 101 levels deep, is refused with 400 naming the levels,
 * and nothing of it is left (its name stays free).
 */
import { describe, expect, it } from "@effect/vitest"
import { DurableStoreLive } from "@sluice/durable-streams"
import { RedisStreamsLive } from "@sluice/redis"
import { bearer, call, serveWith, tokens } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"

const auth = bearer(tokens[0])
const text = { ...auth, "content-type": "text/plain" }

describe("Durable Streams fork depth", () => {
  it.effect("100 levels of forks are made and read whole; the 101st is refused with 400", () =>
    Effect.gen(function*() {
      const url = inject("redisUrl")
      const prefix = `durable-fork-depth-${randomUUID()}`
      const stores = yield* Layer.build(
        Layer.merge(RedisStreamsLive.layer({ url }), DurableStoreLive.layer({ url, prefix }))
      )
      const base = yield* serveWith({ tokens: [...tokens], prefix }).pipe(Effect.provide(stores))
      const names = Array.from({ length: 102 }, () => `chain/${randomUUID()}`)
      expect((yield* call(`${base}/v1/stream/${names[0]}`, { method: "PUT", headers: text, body: "0;" })).status)
        .toBe(201)
      for (let level = 1; level <= 100; level++) {
        const forked = yield* call(`${base}/v1/stream/${names[level]}`, {
          method: "PUT",
          headers: { ...text, "stream-forked-from": `/v1/stream/${names[level - 1]}` },
          body: `${level};`
        })
        expect({ level, status: forked.status }).toStrictEqual({ level, status: 201 })
      }
      const read = yield* call(`${base}/v1/stream/${names[100]}?offset=-1`, { headers: auth })
      expect(read.text).toBe(Array.from({ length: 101 }, (_, level) => `${level};`).join(""))

      const refused = yield* call(`${base}/v1/stream/${names[101]}`, {
        method: "PUT",
        headers: { ...text, "stream-forked-from": `/v1/stream/${names[100]}` },
        body: "101;"
      })
      expect([refused.status, refused.text]).toStrictEqual([
        400,
        "the source stream is a fork 100 levels deep: a fork of it would be 101, and forks go at most 100 levels deep"
      ])
      expect((yield* call(`${base}/v1/stream/${names[101]}`, { method: "HEAD", headers: auth })).status).toBe(404)
      // the deepest has no fork linked: deleted, it is removed at once (404 after, not 410)
      expect((yield* call(`${base}/v1/stream/${names[100]}`, { method: "DELETE", headers: auth })).status).toBe(204)
      expect((yield* call(`${base}/v1/stream/${names[100]}`, { method: "HEAD", headers: auth })).status).toBe(404)
    }), { timeout: 60_000 })
})

/**
 * Durable Streams JSON nested too deep (docs/http.md#json-nesting), on the global
 * setup's redis-server: a JSON append or create nested 10,000 levels deep (60 KB of
 * objects, 20 KB of arrays) gets a 400 naming the depth and the limit (128), not the 500
 * of a stack overflow (its serialization recursed once a level), and nothing is
 * written; a subscription body with a value as deep (in a field the schema ignores, or
 * one it expects a string in) gets the same 400; 128 levels are taken and read back
 * whole.
 */
import { describe, expect, it } from "@effect/vitest"
import { DurableStoreLive, DurableSubscriptions } from "@sluice/durable-streams"
import { RedisStreamsLive } from "@sluice/redis"
import { bearer, call, serveWith, tokens } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"

const auth = bearer(tokens[0])
const json = { ...auth, "content-type": "application/json" }
const arrays = (depth: number) => "[".repeat(depth) + "]".repeat(depth)
const objects = (depth: number) => "{\"a\":".repeat(depth) + "1" + "}".repeat(depth)

describe("Durable Streams JSON nested too deep", () => {
  it.effect(
    "appends, creates and subscription bodies nested 10,000 deep get a 400 naming the depth; 128 levels are kept",
    () =>
      Effect.gen(function*() {
        const url = inject("redisUrl")
        const prefix = `durable-deep-json-${randomUUID()}`
        const stores = yield* Layer.build(
          Layer.mergeAll(
            RedisStreamsLive.layer({ url }),
            DurableStoreLive.layer({ url, prefix }),
            DurableSubscriptions.layer({ url, prefix })
          )
        )
        const base = yield* serveWith({ tokens: [...tokens], prefix }).pipe(Effect.provide(stores))
        const stream = `${base}/v1/stream/notes/${randomUUID()}`
        expect((yield* call(stream, { method: "PUT", headers: json })).status).toBe(201)

        expect(objects(10_000).length).toBeGreaterThan(60_000)
        for (const [what, body] of [["objects", objects(10_000)], ["arrays", arrays(10_000)]] as const) {
          const appended = yield* call(stream, { method: "POST", headers: json, body })
          expect({ what, status: appended.status, text: appended.text }).toStrictEqual({
            what,
            status: 400,
            text: "the JSON nests 10000 levels deep, more than the 128 accepted"
          })
        }
        const created = yield* call(`${base}/v1/stream/notes/${randomUUID()}`, {
          method: "PUT",
          headers: json,
          body: objects(10_000)
        })
        expect([created.status, created.text]).toStrictEqual([
          400,
          "the JSON nests 10000 levels deep, more than the 128 accepted"
        ])

        const subscription = `${base}/v1/stream/__ds/subscriptions/deep`
        for (
          const body of [
            `{"type":"pull-wake","pattern":"notes/*","wake_stream":"wakes/deep","extra":${objects(10_000)}}`,
            `{"type":${arrays(10_000)}}`
          ]
        ) {
          const refused = yield* call(subscription, { method: "PUT", headers: json, body })
          expect(refused.status).toBe(400)
          expect(JSON.parse(refused.text)).toStrictEqual({
            error: { code: "INVALID_REQUEST", message: "the JSON nests 10001 levels deep, more than the 128 accepted" }
          })
        }
        expect((yield* call(subscription, { headers: auth })).status).toBe(404)

        // nothing was written; the limit itself is taken (the body's array is its values)
        expect((yield* call(`${stream}?offset=-1`, { headers: auth })).text).toBe("[]")
        const deepest = arrays(128)
        expect((yield* call(stream, { method: "POST", headers: json, body: `[${deepest.slice(1, -1)}]` })).status)
          .toBe(204)
        expect((yield* call(stream, { method: "POST", headers: json, body: `[${deepest}]` })).status).toBe(400)
        const read = yield* call(`${stream}?offset=-1`, { headers: auth })
        expect(read.text).toBe(`[${arrays(127)}]`)
      }),
    { timeout: 60_000 }
  )
})

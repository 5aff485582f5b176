/**
 * Durable Streams while Redis is frozen (a dedicated redis-server stopped with
 * SIGSTOP: its connections stay open, nothing answers): every read and write under
 * `/v1/stream/` answers 503 naming Redis within the bound every Redis command has
 * (`commandTimeoutMs`), as the turn routes do, instead of hanging; once the server
 * goes on (SIGCONT) the stream is read and written again.
 */
import { describe, expect, it } from "@effect/vitest"
import { DurableStoreLive } from "@sluice/durable-streams"
import { RedisStreamsLive } from "@sluice/redis"
import { scopedRedisServer } from "@sluice/testing/redis"
import { bearer, call, publishUpserts, serve, tokens } from "@sluice/testing/server"
import { upsertMessages } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"

const auth = bearer(tokens[0])

describe("Durable Streams with Redis frozen", () => {
  it.live(
    "every read and write answers 503 naming Redis instead of hanging, as the turn routes do; all is well once it goes on",
    () =>
      Effect.gen(function*() {
        const server = yield* scopedRedisServer()
        const settings = { url: server.url, commandTimeoutMs: 1_000, connectTimeoutMs: 1_000 }
        const stores = yield* Layer.build(
          Layer.merge(
            RedisStreamsLive.layer(settings),
            DurableStoreLive.layer({ ...settings, prefix: `sluice-durable-frozen-${process.pid}` })
          )
        )
        const base = yield* serve({ durableLongPollMs: 60_000 }).pipe(Effect.provide(stores))
        const turnId = randomUUID()
        yield* publishUpserts(turnId, upsertMessages(turnId, 2)).pipe(Effect.provide(stores))
        const stream = `${base}/v1/stream/chats/${randomUUID()}`
        const doomed = `${base}/v1/stream/chats/${randomUUID()}`
        const json = { ...auth, "content-type": "application/json" }
        expect((yield* call(stream, { method: "PUT", headers: json })).status).toBe(201)
        expect((yield* call(doomed, { method: "PUT", headers: json })).status).toBe(201)

        const pid = server.pid()
        if (pid === undefined) return yield* Effect.die(new Error("redis-server has no pid"))
        // frozen until the end of the test at the latest (before the server is closed)
        yield* Effect.acquireRelease(
          Effect.sync(() => process.kill(pid, "SIGSTOP")),
          () => Effect.sync(() => process.kill(pid, "SIGCONT"))
        )
        const requests: ReadonlyArray<readonly [string, string, RequestInit]> = [
          ["catch-up read", `${stream}?offset=-1`, { headers: auth }],
          ["long-poll", `${stream}?offset=now&live=long-poll`, { headers: auth }],
          ["SSE read", `${stream}?offset=-1&live=sse`, { headers: auth }],
          ["HEAD", stream, { method: "HEAD", headers: auth }],
          ["append", stream, { method: "POST", headers: json, body: "{\"n\":1}" }],
          ["create", `${base}/v1/stream/chats/${randomUUID()}`, { method: "PUT", headers: json }],
          ["delete", doomed, { method: "DELETE", headers: auth }],
          ["turn read", `${base}/v1/stream/turns/${turnId}/upserts?offset=-1`, { headers: auth }]
        ]
        const answers = yield* Effect.forEach(requests, ([, url, init]) => call(url, init), {
          concurrency: "unbounded"
        })
        expect(answers.length).toBe(requests.length)
        requests.forEach(([what, , init], i) => {
          const answer = answers[i]!
          expect({ what, status: answer.status }).toStrictEqual({ what, status: 503 })
          expect(answer.contentType).toMatch(/^text\/plain/)
          if (init.method !== "HEAD") expect(answer.text).toBe("Redis is unavailable, try again later")
        })
        // a turn route, for comparison: the same answer
        const snapshot = yield* call(`${base}/v1/turns/${turnId}`, { headers: auth })
        expect(snapshot.status).toBe(503)
        expect(JSON.parse(snapshot.text)).toMatchObject({ error: { code: "redis_unavailable" } })

        process.kill(pid, "SIGCONT")
        // the connections were kept: the frozen append never got past its load, so
        // the stream holds the one append made now
        const appended = yield* call(stream, { method: "POST", headers: json, body: "{\"n\":2}" })
        expect(appended.status).toBe(204)
        const read = yield* call(`${stream}?offset=-1`, { headers: auth })
        expect(read.status).toBe(200)
        expect(JSON.parse(read.text)).toStrictEqual([{ n: 2 }])
      }),
    60_000
  )
})

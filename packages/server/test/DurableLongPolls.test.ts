/**
 * Durable Streams long-polls share their waits (docs/http.md#shared-waits), on a
 * redis-server of the test's own: a thousand long-polls (500 of one stream, one each
 * of 500 others) hold at most `waitConnections` (8) more Redis connections than the
 * server had before them, where each held one of its own before (a thousand long-polls
 * took a server from 5 to 1,005 connections); and every one of them gets the append
 * that wakes it.
 */
import { describe, expect, it } from "@effect/vitest"
import { DurableStoreLive } from "@sluice/durable-streams"
import { RedisStreamsLive } from "@sluice/redis"
import { admin, scopedRedisServer } from "@sluice/testing/redis"
import { bearer, call, serve, tokens } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"

const auth = bearer(tokens[0])
const text = { ...auth, "content-type": "text/plain" }

const info = (url: string, section: string, field: RegExp) =>
  Effect.map(admin(url, ["INFO", section]), (reply) => Number(field.exec(reply)?.[1] ?? 0))

// the server's connections: every client but the test's own
const connected = (url: string) => Effect.map(info(url, "clients", /connected_clients:(\d+)/), (n) => n - 1)
const scripts = (url: string) => info(url, "commandstats", /cmdstat_eval:calls=(\d+)/)

describe("Durable Streams long-polls", () => {
  it.effect(
    "a thousand long-polls hold at most 8 more Redis connections, and each gets the append that wakes it",
    () =>
      Effect.gen(function*() {
        const server = yield* scopedRedisServer()
        const redis = server.url
        const stores = yield* Layer.build(
          Layer.merge(
            RedisStreamsLive.layer({ url: server.url }),
            DurableStoreLive.layer({ url: server.url, prefix: `durable-long-polls-${randomUUID()}` })
          )
        )
        // the per-token stream slots, when they count live reads, are not what this measures
        const base = yield* serve({ maxStreamsPerToken: 5_000, durableLongPollMs: 120_000 }).pipe(
          Effect.provide(stores)
        )
        const shared = `${base}/v1/stream/polls/${randomUUID()}`
        const others = Array.from({ length: 500 }, () => `${base}/v1/stream/polls/${randomUUID()}`)
        const streams = [shared, ...others]
        yield* Effect.forEach(streams, (url) => call(url, { method: "PUT", headers: text }), {
          concurrency: 20,
          discard: true
        })
        const before = yield* connected(redis)
        const ran = yield* scripts(redis)
        const polls = [...Array.from({ length: 500 }, () => shared), ...others]
        const polling = yield* Effect.forkChild(
          Effect.forEach(polls, (url) => call(`${url}?offset=now&live=long-poll`, { headers: auth }), {
            concurrency: "unbounded"
          })
        )
        // each long-poll ran its three scripts (load, read, the look before its wait)
        let looked = 0
        for (let i = 0; i < 20_000 && looked < ran + 3 * polls.length; i++) looked = yield* scripts(redis)
        expect(looked).toBeGreaterThanOrEqual(ran + 3 * polls.length)
        let most = 0
        for (let i = 0; i < 50; i++) most = Math.max(most, yield* connected(redis))
        expect(most - before).toBeLessThanOrEqual(8)

        yield* Effect.forEach(streams, (url) => call(url, { method: "POST", headers: text, body: "woken" }), {
          concurrency: 20,
          discard: true
        })
        const answers = yield* Fiber.join(polling)
        expect(answers.filter((answer) => answer.status === 200 && answer.text === "woken").length).toBe(1_000)
        expect((yield* connected(redis)) - before).toBeLessThanOrEqual(8)
      }),
    { timeout: 120_000 }
  )
})

/**
 * Subscriptions on a redis-server of the test's own (docs/http.md#subscription-limits):
 * the store holds at most its `maxSubscriptions` (500 here, made by five tokens, each
 * within what a caller may hold; 429 `TOO_MANY_SUBSCRIPTIONS` past it), and with 500 pull-wake subscriptions on `**`, an
 * append costs Redis a few dozen commands at most (about 23, a script's own commands
 * counted), as with none: counted in Redis's own command statistics over 50 appends
 * (before, each append loaded every subscription's record: 500 commands and more).
 */
import { describe, expect, it } from "@effect/vitest"
import { DurableStoreLive, DurableSubscriptions } from "@sluice/durable-streams"
import { RedisStreamsLive } from "@sluice/redis"
import { admin, scopedRedisServer } from "@sluice/testing/redis"
import { bearer, call, serveWith, tokens } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"

const auth = bearer(tokens[0])
// five tokens, each within the 100 subscriptions a caller may hold, for 500 in all
const subscribers = Array.from({ length: 5 }, (_, i) => `subscriber-token-${i}-0123456789`)
const json = { ...auth, "content-type": "application/json" }
const text = { ...auth, "content-type": "text/plain" }

// every command Redis has run (scripts' own commands included)
const commands = (url: string) =>
  Effect.map(
    admin(url, ["INFO", "commandstats"]),
    (info) => [...info.matchAll(/calls=(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0)
  )

describe("Durable Streams appends with 500 subscriptions", () => {
  it.effect(
    "the store holds at most 500; an append with 500 subscriptions costs Redis a few dozen commands, not 500",
    () =>
      Effect.gen(function*() {
        const server = yield* scopedRedisServer()
        const prefix = `durable-subscription-load-${randomUUID()}`
        const stores = yield* Layer.build(
          Layer.mergeAll(
            RedisStreamsLive.layer({ url: server.url }),
            DurableStoreLive.layer({ url: server.url, prefix }),
            DurableSubscriptions.layer({ url: server.url, prefix, maxSubscriptions: 500 })
          )
        )
        const base = yield* serveWith({ tokens: [...tokens, ...subscribers], prefix }).pipe(Effect.provide(stores))
        const streams = Array.from({ length: 20 }, (_, i) => `${base}/v1/stream/jobs/${i}`)
        yield* Effect.forEach(streams, (url) => call(url, { method: "PUT", headers: text }), { discard: true })
        expect((yield* call(`${base}/v1/stream/wakes`, { method: "PUT", headers: json })).status).toBe(201)
        const subscribe = (i: number) =>
          call(`${base}/v1/stream/__ds/subscriptions/s${i}`, {
            method: "PUT",
            headers: { ...bearer(subscribers[i % subscribers.length]!), "content-type": "application/json" },
            body: JSON.stringify({ type: "pull-wake", pattern: "**", wake_stream: "wakes" })
          })
        const made = yield* Effect.forEach(Array.from({ length: 500 }, (_, i) => i), subscribe, { concurrency: 16 })
        expect(made.filter((answer) => answer.status === 201).length).toBe(500)
        const refused = yield* subscribe(500)
        expect([refused.status, JSON.parse(refused.text).error]).toStrictEqual([
          429,
          {
            code: "TOO_MANY_SUBSCRIPTIONS",
            message: "the server holds 500 subscriptions, the most it keeps: delete one first",
            limit: 500
          }
        ])
        const append = (i: number) =>
          call(streams[i % streams.length]!, { method: "POST", headers: text, body: `${i}` })
        // the first round wakes every subscription (an unclaimed pull-wake's wake stays)
        for (let i = 0; i < streams.length; i++) expect((yield* append(i)).status).toBe(204)
        yield* append(0)
        const before = yield* commands(server.url)
        for (let i = 0; i < 50; i++) expect((yield* append(i)).status).toBe(204)
        // the INFO itself, and the lease sweep's look every second, are counted too
        const perAppend = ((yield* commands(server.url)) - before) / 50
        expect(perAppend).toBeLessThanOrEqual(40)
        const wakes = JSON.parse((yield* call(`${base}/v1/stream/wakes?offset=-1`, { headers: auth })).text)
        expect(wakes.length).toBe(500)
      }),
    { timeout: 120_000 }
  )
})

/**
 * How many subscriptions there may be (docs/http.md#subscription-limits), through the
 * routes on the in-memory stores: a caller (the application's `Callers.subscriber`)
 * holds at most `maxSubscriptionsPerCaller`, the store at most its `maxSubscriptions`
 * in all; past either a create is 429 `TOO_MANY_SUBSCRIPTIONS` naming the limit and
 * nothing is stored; the same configuration again is no new one; a delete makes room.
 * And each store, in memory and on the global setup's redis-server, counts inserts in
 * one step with its ids.
 */
import { describe, expect, it } from "@effect/vitest"
import type { RedisError } from "@sluice/redis/RedisError"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"
import * as DurableStoreMemory from "../src/DurableStoreMemory.js"
import * as DurableStreams from "../src/DurableStreams.js"
import * as DurableSubscriptions from "../src/DurableSubscriptions.js"
import * as SubscriptionEngine from "../src/internal/subscriptionEngine.js"
import { serve } from "./support/routes.js"

interface Caller extends DurableStreams.Access {
  readonly token: string
}

const pullWake = (pattern: string) => ({ type: "pull-wake", pattern, wake_stream: "wakes" })

const harness = (maxSubscriptions: number, maxPerSubscriber: number) =>
  Effect.gen(function*() {
    const store = yield* DurableStoreMemory.make
    const subscriptions = yield* DurableSubscriptions.makeMemory({ maxSubscriptions })
    const engine = yield* SubscriptionEngine.make(store, subscriptions, {
      ...SubscriptionEngine.defaultOptions,
      policy: { loopbackHttp: true, allowHosts: [] },
      maxPerSubscriber
    }).pipe(Effect.provideService(HttpClient.HttpClient, HttpClient.make(() => Effect.die("no webhooks here"))))
    const context: DurableStreams.Context = {
      store: Option.some(store),
      longPollMs: 1_000,
      closing: Effect.never,
      subscriptions: engine
    }
    const callers: DurableStreams.Callers<Caller> = { subscriber: (caller) => `token:${caller.token}` }
    return (method: string, path: string, token: string, body?: unknown) =>
      Effect.flatMap(
        serve(
          context,
          HttpServerRequest.fromWeb(
            new Request(`http://localhost/v1/stream/${path}`, {
              method,
              headers: { "content-type": "application/json" },
              ...(body === undefined ? {} : { body: JSON.stringify(body) })
            })
          ),
          Effect.succeed({ mayWrite: true, token }),
          callers
        ),
        (response) =>
          Effect.promise(async () => {
            const web = HttpServerResponse.toWeb(response)
            const text = await web.text()
            return { status: web.status, json: text === "" ? undefined : JSON.parse(text) }
          })
      )
  })

describe("subscription limits", () => {
  it.effect(
    "a caller holds at most maxSubscriptionsPerCaller, the store at most maxSubscriptions; 429 past them",
    () =>
      Effect.gen(function*() {
        const call = yield* harness(5, 3)
        for (let i = 0; i < 3; i++) {
          expect((yield* call("PUT", `__ds/subscriptions/a${i}`, "a", pullWake(`a/${i}/*`))).status).toBe(201)
        }
        // the same configuration again is the same subscription, not a new one
        expect((yield* call("PUT", "__ds/subscriptions/a0", "a", pullWake("a/0/*"))).status).toBe(200)
        const fourth = yield* call("PUT", "__ds/subscriptions/a3", "a", pullWake("a/3/*"))
        expect(fourth).toStrictEqual({
          status: 429,
          json: {
            error: {
              code: "TOO_MANY_SUBSCRIPTIONS",
              message: "this caller holds 3 subscriptions, the most one may: delete one first",
              limit: 3
            }
          }
        })
        expect((yield* call("GET", "__ds/subscriptions/a3", "a")).status).toBe(404)
        // another caller has its own count, within the store's five in all
        expect((yield* call("PUT", "__ds/subscriptions/b0", "b", pullWake("b/*"))).status).toBe(201)
        expect((yield* call("PUT", "__ds/subscriptions/b1", "b", pullWake("b/*"))).status).toBe(201)
        const sixth = yield* call("PUT", "__ds/subscriptions/c0", "c", pullWake("c/*"))
        expect([sixth.status, sixth.json.error.message]).toStrictEqual([
          429,
          "the server holds 5 subscriptions, the most it keeps: delete one first"
        ])
        // a delete makes room, for its caller and in all
        expect((yield* call("DELETE", "__ds/subscriptions/a1", "a")).status).toBe(204)
        expect((yield* call("PUT", "__ds/subscriptions/a3", "a", pullWake("a/3/*"))).status).toBe(201)
        expect((yield* call("PUT", "__ds/subscriptions/c0", "c", pullWake("c/*"))).status).toBe(429)
        expect((yield* call("DELETE", "__ds/subscriptions/b0", "b")).status).toBe(204)
        expect((yield* call("PUT", "__ds/subscriptions/c0", "c", pullWake("c/*"))).status).toBe(201)
      }),
    30_000
  )
})

const subscription = (id: string): DurableSubscriptions.Subscription => ({
  id,
  type: "pull-wake",
  pattern: "jobs/*",
  wakeStream: "wakes",
  leaseTtlMs: 30_000,
  configHash: "h",
  createdAt: 1,
  baseUrl: "http://localhost",
  links: [],
  generation: 0,
  failures: 0
})

const storeSuite = (name: string, layer: Layer.Layer<DurableSubscriptions.DurableSubscriptions, RedisError>) =>
  describe(`${name}: inserts counted`, () => {
    it.effect(
      "counts inserts in all and by owner, a delete uncounts, versions in one call",
      () =>
        Effect.gen(function*() {
          const store = yield* DurableSubscriptions.DurableSubscriptions
          const owner = { key: `owner-${randomUUID()}`, max: 2 }
          const [a, b, c, d] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
          expect(yield* store.insert(subscription(a), owner)).toStrictEqual({ _tag: "Inserted" })
          expect(yield* store.insert(subscription(a), owner)).toStrictEqual({ _tag: "Exists" })
          expect(yield* store.insert(subscription(b), owner)).toStrictEqual({ _tag: "Inserted" })
          expect(yield* store.insert(subscription(c), owner)).toStrictEqual({
            _tag: "TooMany",
            scope: "owner",
            limit: 2
          })
          expect(yield* store.load(c)).toStrictEqual(Option.none())
          expect(yield* store.insert(subscription(c), undefined)).toStrictEqual({ _tag: "Inserted" })
          // the store holds three: its limit
          expect(yield* store.insert(subscription(d), undefined)).toStrictEqual({
            _tag: "TooMany",
            scope: "total",
            limit: 3
          })
          expect(yield* store.save({ ...subscription(a), generation: 1 }, 1)).toBe(true)
          expect(yield* store.versions([a, b, d])).toStrictEqual([2, 1, 0])
          expect(yield* store.remove(a)).toBe(true)
          expect(yield* store.insert(subscription(d), owner)).toStrictEqual({ _tag: "Inserted" })
          for (const id of [b, c, d]) yield* store.remove(id)
          expect(yield* store.versions([b, c, d])).toStrictEqual([0, 0, 0])
        }).pipe(Effect.provide(layer)),
      30_000
    )
  })

storeSuite("in memory", DurableSubscriptions.layerMemoryWith({ maxSubscriptions: 3 }))
storeSuite(
  "on redis-server",
  DurableSubscriptions.layer({
    url: inject("redisUrl"),
    prefix: `subscription-limits-${randomUUID()}`,
    maxSubscriptions: 3
  })
)

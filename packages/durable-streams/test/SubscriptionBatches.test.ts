/**
 * Matching appends to subscriptions is bounded work (docs/http.md#subscription-limits),
 * counted on the in-memory stores: with 500 pull-wake subscriptions on `**` over 20
 * streams, an append once every subscription has its wake in flight loads no record and
 * probes no version, nothing having changed since the last look (before: every
 * subscription's record was loaded, 500 an append), and 20 appends at once to a new
 * stream make one wake a subscription with about one load of each record, not one a
 * subscription an append.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as DurableOperations from "../src/DurableOperations.js"
import * as DurableStoreMemory from "../src/DurableStoreMemory.js"
import * as DurableSubscriptions from "../src/DurableSubscriptions.js"
import * as SubscriptionEngine from "../src/internal/subscriptionEngine.js"

const encoder = new TextEncoder()

// The in-memory stores, the subscriptions' counting what is asked of them.
const harness = Effect.gen(function*() {
  const store = yield* DurableStoreMemory.make
  const memory = yield* DurableSubscriptions.makeMemory()
  const counts = { loads: 0, saves: 0, probes: 0 }
  const subscriptions: DurableSubscriptions.DurableSubscriptionsService = {
    ...memory,
    load: (id) => Effect.suspend(() => (counts.loads++, memory.load(id))),
    save: (subscription, expect) => Effect.suspend(() => (counts.saves++, memory.save(subscription, expect))),
    versions: (ids) => Effect.suspend(() => (counts.probes += ids.length, memory.versions(ids)))
  }
  const engine = yield* SubscriptionEngine.make(store, subscriptions, {
    ...SubscriptionEngine.defaultOptions,
    policy: { loopbackHttp: true, allowHosts: [] },
    maxPerSubscriber: 1_000
  }).pipe(Effect.provideService(HttpClient.HttpClient, HttpClient.make(() => Effect.die("no webhooks here"))))
  const create = (name: string, contentType = "text/plain") =>
    Effect.andThen(
      DurableOperations.create(store, name, {
        contentType,
        typeGiven: true,
        ttl: undefined,
        expiresAt: undefined,
        closed: false,
        body: new Uint8Array(0),
        fork: undefined
      }),
      engine.notify(name, false)
    )
  const append = (name: string, text: string) =>
    Effect.andThen(
      DurableOperations.append(store, name, {
        contentType: "text/plain",
        seq: undefined,
        close: false,
        producer: undefined,
        body: encoder.encode(text)
      }),
      engine.notify(name, false)
    )
  const subscribe = (count: number) =>
    Effect.forEach(
      Array.from({ length: count }, (_, i) => `s${i}`),
      (id) => engine.create(id, { type: "pull-wake", pattern: "**", wake_stream: "wakes" }, "http://localhost"),
      { discard: true }
    )
  const generations = Effect.map(
    Effect.forEach(Array.from({ length: 500 }, (_, i) => `s${i}`), (id) => engine.get(id)),
    (all) => all.map((subscription) => subscription.generation)
  )
  return { counts, create, append, subscribe, generations }
})

describe("appends told to 500 subscriptions", () => {
  it.effect(
    "an append to streams whose subscriptions all have a wake in flight loads no record and probes no version",
    () =>
      Effect.gen(function*() {
        const { append, counts, create, generations, subscribe } = yield* harness
        yield* create("wakes", "application/json")
        const streams = Array.from({ length: 20 }, (_, i) => `jobs/${i}`)
        yield* Effect.forEach(streams, (name) => create(name), { discard: true })
        yield* subscribe(500)
        // the first round wakes every subscription once
        for (const name of streams) yield* append(name, "first")
        expect(new Set(yield* generations)).toStrictEqual(new Set([1]))
        counts.loads = 0
        counts.saves = 0
        counts.probes = 0
        for (let i = 0; i < 100; i++) yield* append(streams[i % streams.length]!, `${i}`)
        expect(counts).toStrictEqual({ loads: 0, saves: 0, probes: 0 })
        expect(new Set(yield* generations)).toStrictEqual(new Set([1]))
      }),
    120_000
  )

  it.effect(
    "20 appends at once to a new stream make one wake a subscription, loading each record about once",
    () =>
      Effect.gen(function*() {
        const { append, counts, create, generations, subscribe } = yield* harness
        yield* create("wakes", "application/json")
        yield* subscribe(500)
        yield* create("jobs/new")
        counts.loads = 0
        yield* Effect.forEach(Array.from({ length: 20 }, (_, i) => i), (i) => append("jobs/new", `${i}`), {
          concurrency: "unbounded",
          discard: true
        })
        expect(new Set(yield* generations)).toStrictEqual(new Set([1]))
        // one load a subscription for the batch that links and wakes it; a later batch finds it woken
        expect(counts.loads).toBeLessThanOrEqual(2 * 500)
      }),
    120_000
  )
})

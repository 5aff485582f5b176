import { describe, expect, it } from "@effect/vitest"
import type { RedisError } from "@sluice/redis/RedisError"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Redis } from "ioredis"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"
import { DurableStore } from "../src/DurableStore.js"
import * as DurableStoreLive from "../src/DurableStoreLive.js"
import * as DurableSubscriptions from "../src/DurableSubscriptions.js"

const subscription = (id: string, generation = 0): DurableSubscriptions.Subscription => ({
  id,
  type: "webhook",
  pattern: "events/*",
  webhookUrl: "https://hooks.example/wake",
  leaseTtlMs: 30_000,
  configHash: "h",
  createdAt: 1,
  baseUrl: "http://127.0.0.1:8787",
  links: [{ path: "events/a", glob: true, explicit: false, acked: "0000000000000000_0000000000000000" }],
  generation,
  failures: 0
})

const suite = (name: string, layer: Layer.Layer<DurableSubscriptions.DurableSubscriptions, RedisError>) =>
  describe(`${name} (DurableSubscriptions)`, () => {
    it.effect("saves conditionally on the version, lists the ids, deletes", () =>
      Effect.gen(function*() {
        const store = yield* DurableSubscriptions.DurableSubscriptions
        const id = randomUUID()
        expect(yield* store.load(id)).toEqual(Option.none())
        expect(yield* store.save(subscription(id), 0)).toBe(true)
        expect(yield* store.save(subscription(id), 0)).toBe(false)
        const loaded = Option.getOrThrow(yield* store.load(id))
        expect(loaded).toEqual({ subscription: subscription(id), version: 1 })
        expect(yield* store.ids).toContain(id)
        expect(yield* store.save(subscription(id, 1), 1)).toBe(true)
        // a writer that loaded version 1 lost the race
        expect(yield* store.save(subscription(id, 5), 1)).toBe(false)
        expect(Option.getOrThrow(yield* store.load(id))).toEqual({ subscription: subscription(id, 1), version: 2 })
        expect(yield* store.remove(id)).toBe(true)
        expect(yield* store.remove(id)).toBe(false)
        expect(yield* store.load(id)).toEqual(Option.none())
        expect(yield* store.ids).not.toContain(id)
        // a stale writer cannot bring it back; a creator can
        expect(yield* store.save(subscription(id, 2), 2)).toBe(false)
        expect(yield* store.save(subscription(id), 0)).toBe(true)
        yield* store.remove(id)
      }).pipe(Effect.provide(layer)))

    it.effect("keeps the first signing key offered", () =>
      Effect.gen(function*() {
        const store = yield* DurableSubscriptions.DurableSubscriptions
        const first = yield* store.signingKey(`key-${randomUUID()}`)
        expect(yield* store.signingKey(`key-${randomUUID()}`)).toBe(first)
      }).pipe(Effect.provide(layer)))
  })

suite("layerMemory", DurableSubscriptions.layerMemory)

const url = inject("redisUrl")
const prefix = `subscriptions-test-${process.pid}`
suite("layer on redis-server", DurableSubscriptions.layer({ url, prefix }))

describe("DurableSubscriptions stream names", () => {
  it.effect("in memory: the streams it was told of", () =>
    Effect.gen(function*() {
      const store = yield* DurableSubscriptions.DurableSubscriptions
      yield* store.observe("events/a", true)
      yield* store.observe("events/b", true)
      yield* store.observe("events/a", false)
      expect(yield* store.streamNames).toEqual(["events/b"])
    }).pipe(Effect.provide(DurableSubscriptions.layerMemory)))

  it.effect("on Redis: the DurableStore streams under the prefix, however named", () =>
    Effect.gen(function*() {
      const durable = yield* DurableStore
      const store = yield* DurableSubscriptions.DurableSubscriptions
      const names = [`events/${randomUUID()}`, `odd*[name]?/${randomUUID()}`]
      for (const name of names) {
        yield* durable.commit(name, { expect: 0, set: { ct: "text/plain" }, append: [], expiry: { _tag: "Persist" } })
      }
      const listed = yield* store.streamNames
      expect(listed).toEqual(expect.arrayContaining(names))
      expect(listed.every((name) => !name.includes("}"))).toBe(true)
    }).pipe(
      Effect.provide(DurableSubscriptions.layer({ url, prefix: `${prefix}-names` })),
      Effect.provide(DurableStoreLive.layer({ url, prefix: `${prefix}-names` }))
    ))

  it.effect("a record that is not a subscription fails as a Rejected RedisError naming its key", () =>
    Effect.gen(function*() {
      const store = yield* DurableSubscriptions.DurableSubscriptions
      const id = randomUUID()
      const key = DurableSubscriptions.recordKey(prefix, id)
      yield* Effect.acquireUseRelease(
        Effect.sync(() => new Redis(url)),
        (client) => Effect.promise(() => client.hset(key, "v", "1", "r", "{\"id\":1}")),
        (client) => Effect.sync(() => client.disconnect())
      )
      const exit = yield* Effect.exit(store.load(id))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        const error = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
        expect(error?.reason).toBe("Rejected")
        expect(error?.message).toContain(key)
      }
    }).pipe(Effect.provide(DurableSubscriptions.layer({ url, prefix }))))
})

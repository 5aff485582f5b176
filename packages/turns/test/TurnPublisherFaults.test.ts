/**
 * The publisher against a real Redis that fails: killed mid-turn and restarted, killed
 * for good, and reached through a proxy that cuts connections mid-write. Each test
 * starts its own `redis-server` (an append-only file, so a killed server comes back
 * with every write it acknowledged). Real restarts take real time; nothing here
 * asserts on time.
 */
import { describe, expect, it } from "@effect/vitest"
import type { StreamBMessage } from "@sluice/core"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as RedisStreamsLive from "@sluice/redis/RedisStreamsLive"
import { scopedRedisServer, startCuttingProxy } from "@sluice/testing/redis"
import { kept, upsertMessages } from "@sluice/testing/turns"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { PublishError } from "../src/PublishError.js"
import * as TurnEntry from "../src/TurnEntry.js"
import * as TurnKeys from "../src/TurnKeys.js"
import * as TurnPublisher from "../src/TurnPublisher.js"
import { lazySource } from "./support/published.js"

const prefix = "sluice-faults"

// Completes `failed` on the first write Redis did not answer, and counts the entries
// Redis refused as already there.
const observed = (failed: Deferred.Deferred<void>, repeats = { count: 0 }) =>
  Layer.effect(
    RedisStreams,
    Effect.map(RedisStreams, (inner) => ({
      ...inner,
      xaddAll: (
        key: string,
        entries: Parameters<typeof inner.xaddAll>[1],
        options: Parameters<typeof inner.xaddAll>[2]
      ) =>
        inner.xaddAll(key, entries, options).pipe(
          Effect.tap((results) => {
            repeats.count += results.filter((r) => Result.isFailure(r) && r.failure.reason === "IdTooSmall").length
            return results.some(Result.isFailure) ? Deferred.succeed(failed, undefined) : Effect.void
          }),
          Effect.tapError(() => Deferred.succeed(failed, undefined))
        )
    }))
  )

const stored = (url: string, turnId: string) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams
    const entries = yield* redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")
    return yield* Effect.forEach(entries, (entry) =>
      Effect.map(TurnEntry.toStreamBMessage(entry), (message) => ({ id: entry.id, message })))
  }).pipe(Effect.provide(RedisStreamsLive.layer({ url })))

const liveOptions = (url: string) => ({
  url,
  reconnectMaxDelayMs: 100,
  commandTimeoutMs: 2_000,
  connectTimeoutMs: 1_000
})

describe("TurnPublisher with Redis failing", () => {
  it.live(
    "Redis killed mid-turn and restarted within the retry budget: every entry lands exactly once, in order",
    () =>
      Effect.gen(function*() {
        const server = yield* scopedRedisServer({ persistent: true })
        const failed = yield* Deferred.make<void>()
        const turnId = randomUUID()
        const messages = upsertMessages(turnId, 300)
        const restarter = yield* Deferred.await(failed).pipe(
          Effect.andThen(Effect.promise(() => server.restart())),
          Effect.forkChild
        )
        const passed = yield* lazySource(messages, (i) => (i === 120
          ? Effect.promise(() => server.kill())
          : Effect.void)).pipe(
            TurnPublisher.publishUpserts(turnId),
            Stream.runCollect,
            Effect.provide(
              TurnPublisher.layer({ prefix, maxInFlight: 16, retryAttempts: 40, retryBaseMs: 10, retryMaxMs: 200 })
            ),
            Effect.provide(observed(failed).pipe(Layer.provide(RedisStreamsLive.layer(liveOptions(server.url)))))
          )
        yield* Fiber.join(restarter)
        expect(passed).toStrictEqual(messages)
        const landed = yield* stored(server.url, turnId)
        expect(landed).toStrictEqual(kept(messages))
      }).pipe(Effect.scoped),
    { timeout: 60_000 }
  )

  it.live(
    "Redis down past the budget: a typed error, and nothing reported written that was not",
    () =>
      Effect.gen(function*() {
        const server = yield* scopedRedisServer({ persistent: true })
        const turnId = randomUUID()
        const messages = upsertMessages(turnId, 300)
        const passed: Array<StreamBMessage.StreamBMessage> = []
        const error = yield* lazySource(messages, (i) => (i === 150
          ? Effect.promise(() => server.kill())
          : Effect.void)).pipe(
            TurnPublisher.publishUpserts(turnId),
            Stream.runForEach((message) => Effect.sync(() => passed.push(message))),
            Effect.provide(
              TurnPublisher.layer({ prefix, maxInFlight: 16, retryAttempts: 3, retryBaseMs: 5, retryMaxMs: 20 })
            ),
            Effect.provide(RedisStreamsLive.layer(liveOptions(server.url))),
            Effect.flip,
            Effect.filterOrFail((e): e is PublishError => e instanceof PublishError, () => "expected a PublishError"),
            Effect.orDie
          )
        expect(error).toBeInstanceOf(PublishError)
        expect(error.reason).toBe("RetriesExhausted")
        expect(error.attempts).toBe(4)
        expect(error.written).toBe(passed.length)
        expect(error.entryId).toBe(`0-${passed.length + 1}`)
        expect(passed).toStrictEqual(messages.slice(0, passed.length))
        yield* Effect.promise(() => server.restart())
        const landed = yield* stored(server.url, turnId)
        // Every message passed on is in Redis or superseded by a later upsert of its item
        // there; Redis may hold a few more whose replies were lost, never one out of order
        // or twice, and each entry under its own id.
        const positions = landed.map((entry) => Number(entry.id.slice(2)))
        expect(landed[0]!.id).toBe("0-1")
        expect(positions.at(-1)!).toBeGreaterThanOrEqual(passed.length)
        expect(landed.map((entry) => entry.message)).toStrictEqual(positions.map((n) => messages[n - 1]))
      }).pipe(Effect.scoped),
    { timeout: 60_000 }
  )

  it.live("connections cut mid-write by a proxy: no loss, no duplicate", () =>
    Effect.gen(function*() {
      const server = yield* scopedRedisServer()
      const proxy = yield* Effect.acquireRelease(
        Effect.promise(() => startCuttingProxy(server.port, [2_500, 900, 4_100, 1_300, 3_300, 700], 12)),
        (p) => Effect.promise(() => p.close())
      )
      const repeats = { count: 0 }
      const failed = yield* Deferred.make<void>()
      const turnIds = [randomUUID(), randomUUID(), randomUUID()]
      const turns = turnIds.map((turnId) => upsertMessages(turnId, 200))
      const passed = yield* Effect.forEach(turns, (messages, i) =>
        Stream.fromIterable(messages).pipe(
          TurnPublisher.publishUpserts(turnIds[i]!),
          Stream.runCollect
        ), { concurrency: "unbounded" }).pipe(
          Effect.provide(
            TurnPublisher.layer({ prefix, maxInFlight: 8, retryAttempts: 50, retryBaseMs: 5, retryMaxMs: 50 })
          ),
          Effect.provide(
            observed(failed, repeats).pipe(Layer.provide(RedisStreamsLive.layer(liveOptions(proxy.url))))
          )
        )
      // Connections were cut, and writes whose replies were lost were recognised.
      expect(proxy.cuts()).toBeGreaterThan(0)
      expect(repeats.count).toBeGreaterThan(0)
      for (const [i, messages] of turns.entries()) {
        expect(passed[i]).toStrictEqual(messages)
        const landed = yield* stored(server.url, turnIds[i]!)
        expect(landed).toStrictEqual(kept(messages))
      }
    }).pipe(Effect.scoped), { timeout: 60_000 })
})

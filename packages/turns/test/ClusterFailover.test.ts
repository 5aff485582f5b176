/**
 * The cluster layer with a cluster that fails, and with several producers: the master
 * of a turn's slot killed (SIGKILL) mid-turn and restarted on its port and
 * configuration (no replicas, so its slots have no master while it is away); two
 * producers, each with a cluster client and an Effect runtime of its own, publishing
 * turns that a third client follows. Each test starts its own three-master cluster.
 * Real restarts take real time; nothing here asserts on time.
 */
import { describe, expect, it } from "@effect/vitest"
import type { RedisErrorReason } from "@sluice/redis/RedisError"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as RedisStreamsCluster from "@sluice/redis/RedisStreamsCluster"
import { type RedisCluster, scopedRedisCluster } from "@sluice/testing/redis"
import { followedWrongly, kept, upsertMessages } from "@sluice/testing/turns"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import * as TurnEntry from "../src/TurnEntry.js"
import * as TurnKeys from "../src/TurnKeys.js"
import * as TurnPublisher from "../src/TurnPublisher.js"
import { lazySource, storedUpserts } from "./support/published.js"

const prefix = "sluice-cluster"

const clusterLayer = (cluster: RedisCluster) =>
  RedisStreamsCluster.layer({
    nodes: cluster.nodes.map(({ port }) => ({ host: "127.0.0.1", port })),
    reconnectMaxDelayMs: 100,
    commandTimeoutMs: 2_000,
    connectTimeoutMs: 2_000
  })

// Records why each write failed, and completes `failed` on the first failure.
const watched = (failed: Deferred.Deferred<void>, reasons: Array<RedisErrorReason>) =>
  Layer.effect(
    RedisStreams,
    Effect.map(RedisStreams, (inner) => ({
      ...inner,
      xaddAll: (...args: Parameters<typeof inner.xaddAll>) =>
        inner.xaddAll(...args).pipe(
          Effect.tap((results) =>
            Effect.forEach(results, (result) =>
              result._tag === "Failure"
                ? Effect.andThen(
                  Effect.sync(() => reasons.push(result.failure.reason)),
                  Deferred.succeed(failed, undefined)
                )
                : Effect.void)
          ),
          Effect.tapError((error) =>
            Effect.andThen(Effect.sync(() => reasons.push(error.reason)), Deferred.succeed(failed, undefined))
          )
        )
    }))
  )

describe("RedisStreamsCluster with a failing cluster", () => {
  it.live(
    "the master of a turn's slot killed mid-turn and restarted: the turn lands exactly once, in order",
    () =>
      Effect.gen(function*() {
        const cluster = yield* scopedRedisCluster
        const turnId = randomUUID()
        const master = yield* Effect.promise(() => cluster.nodeOf(TurnKeys.upsertsKey(prefix, turnId)))
        const messages = upsertMessages(turnId, 300)
        const failed = yield* Deferred.make<void>()
        const reasons: Array<RedisErrorReason> = []
        const restarter = yield* Deferred.await(failed).pipe(
          Effect.andThen(Effect.promise(() => master.restart())),
          Effect.forkChild
        )
        const passed = yield* lazySource(messages, (i) => (i === 120
          ? Effect.promise(() => master.kill())
          : Effect.void)).pipe(
            TurnPublisher.publishUpserts(turnId),
            Stream.runCollect,
            Effect.provide(
              TurnPublisher.layer({ prefix, maxInFlight: 16, retryAttempts: 200, retryBaseMs: 10, retryMaxMs: 300 })
            ),
            Effect.provide(watched(failed, reasons).pipe(Layer.provide(clusterLayer(cluster))))
          )
        yield* Fiber.join(restarter)
        expect(passed).toStrictEqual(messages)
        // While the slot had no master its writes failed as Unavailable; a write
        // repeated after its reply was lost is refused as IdTooSmall; nothing else.
        expect(reasons).toContain("Unavailable")
        expect(reasons.filter((reason) => reason !== "Unavailable" && reason !== "IdTooSmall")).toStrictEqual([])
        const landed = yield* storedUpserts(prefix, turnId).pipe(Effect.provide(clusterLayer(cluster)))
        // Stream B keeps each item's last upsert, under the id it was written with
        expect(landed).toStrictEqual(kept(messages))
      }).pipe(Effect.scoped),
    { timeout: 180_000 }
  )

  it.live(
    "two producers with clients of their own publish turns that one reader follows to their ends",
    () =>
      Effect.gen(function*() {
        const cluster = yield* scopedRedisCluster
        // The reader: a client of its own, open for the whole test.
        const reader = yield* Layer.build(clusterLayer(cluster))
        const producers = [0, 1].map(() =>
          ManagedRuntime.make(
            TurnPublisher.layer({ prefix, maxInFlight: 8 }).pipe(Layer.provideMerge(clusterLayer(cluster)))
          )
        )
        yield* Effect.addFinalizer(() =>
          Effect.promise(() => Promise.all(producers.map((runtime) => runtime.dispose())))
        )
        // Six turns, three from each producer, on more than one shard.
        let turnIds: Array<string> = []
        let shards = 0
        while (shards < 2) {
          turnIds = Array.from({ length: 6 }, () => randomUUID())
          const masters = yield* Effect.promise(() =>
            Promise.all(turnIds.map((turnId) => cluster.nodeOf(TurnKeys.upsertsKey(prefix, turnId))))
          )
          shards = new Set(masters.map((node) => node.port)).size
        }
        const turns = turnIds.map((turnId) => ({ turnId, messages: upsertMessages(turnId, 120) }))
        const redis = Context.get(reader, RedisStreams)
        const followers = yield* Effect.forEach(turns, ({ turnId }) =>
          redis.tail(TurnKeys.upsertsKey(prefix, turnId), { until: TurnEntry.isFinal }).pipe(
            Stream.mapEffect(TurnEntry.toStreamBMessage),
            Stream.runCollect,
            Effect.forkChild
          ))
        yield* Effect.forEach(turns, ({ messages, turnId }, i) =>
          Effect.promise(() =>
            producers[i % 2]!.runPromise(
              Stream.fromIterable(messages).pipe(TurnPublisher.publishUpserts(turnId), Stream.runDrain)
            )
          ), { concurrency: "unbounded" })
        const followed = yield* Effect.forEach(followers, Fiber.join)
        // a follower behind the writer may miss superseded upserts, never a kept one
        expect(turns.map(({ messages }, i) => followedWrongly(followed[i]!, messages))).toStrictEqual(
          turns.map(() => undefined)
        )
        const indexed = yield* redis.zrangeByScore(TurnKeys.turnsKey(prefix), -Infinity, Infinity)
        expect(new Set(indexed.map((turn) => turn.member))).toStrictEqual(new Set(turns.map(({ turnId }) => turnId)))
      }).pipe(Effect.scoped),
    { timeout: 180_000 }
  )
})

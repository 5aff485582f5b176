/**
 * The cluster layer against a real three-master Redis Cluster (started here, stopped
 * afterwards): the behaviour, publisher and lifecycle suites every layer runs, on
 * both write paths, and its configuration.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import * as RedisConfig from "../src/RedisConfig.js"
import { isRetryable } from "../src/RedisError.js"
import { RedisStreams } from "../src/RedisStreams.js"
import * as RedisStreamsCluster from "../src/RedisStreamsCluster.js"
import * as TurnEntry from "../src/TurnEntry.js"
import * as TurnKeys from "../src/TurnKeys.js"
import * as TurnPublisher from "../src/TurnPublisher.js"
import { lifecycleSuite } from "./support/lifecycleSuite.js"
import { lazySource } from "./support/published.js"
import { publisherSuite } from "./support/publisherSuite.js"
import { startRedisCluster } from "./support/redisCluster.js"
import { freePort } from "./support/RedisServer.js"
import { streamsSuite } from "./support/streamsSuite.js"
import { kept, upsertMessages } from "./support/turns.js"

const cluster = await startRedisCluster()
afterAll(() => cluster.close(), 60_000)

const nodes = cluster.nodes.map(({ port }) => ({ host: "127.0.0.1", port }))

streamsSuite("RedisStreamsCluster", RedisStreamsCluster.layerFrom({ nodes }))
publisherSuite("TurnPublisher on RedisStreamsCluster", RedisStreamsCluster.layerFrom({ nodes }))
publisherSuite(
  "TurnPublisher on RedisStreamsCluster, pipelined writes",
  RedisStreamsCluster.layerFrom({ nodes, writePath: "pipeline" })
)
lifecycleSuite("turn lifecycle on RedisStreamsCluster", RedisStreamsCluster.layerFrom({ nodes }))

describe("RedisStreamsCluster connecting", () => {
  it.effect("one reachable node is enough to find the others", () =>
    Effect.gen(function*() {
      const redis = yield* RedisStreams
      // Keys on different slots, served by different masters.
      for (let i = 0; i < 20; i++) expect(yield* redis.xlen(`sluice-test:cluster:${i}`)).toBe(0)
    }).pipe(Effect.provide(RedisStreamsCluster.layerFrom({ nodes: nodes.slice(1, 2) }))))

  it.effect("no reachable node fails the layer with an Unavailable RedisError", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      const error = yield* Effect.flip(Effect.provide(
        RedisStreams,
        RedisStreamsCluster.layerFrom({ nodes: [{ host: "127.0.0.1", port }], connectTimeoutMs: 1_000 })
      ))
      expect(error.reason).toBe("Unavailable")
      expect(error.command).toBe("CONNECT")
    }))

  it.effect("no nodes at all is a Rejected RedisError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.provide(RedisStreams, RedisStreamsCluster.layerFrom({ nodes: [] })))
      expect(error.reason).toBe("Rejected")
      expect(error.detail).toContain("no cluster nodes")
    }))
})

describe("RedisStreamsCluster when a slot moves", () => {
  const prefix = "sluice-moved"

  it.live(
    "a turn's slot moved to another master mid-turn: writes and reads follow it, exactly once, in order",
    () =>
      Effect.gen(function*() {
        const redis = yield* RedisStreams
        const turnId = randomUUID()
        const key = TurnKeys.upsertsKey(prefix, turnId)
        const messages = upsertMessages(turnId, 120)
        const moved = lazySource(messages, (i) =>
          i === 60
            ? Effect.promise(async () => {
              const from = await cluster.nodeOf(key)
              await cluster.moveSlotOf(key, cluster.nodes.find((node) => node !== from)!)
            })
            : Effect.void)
        const passed = yield* moved.pipe(
          TurnPublisher.publishUpserts(turnId),
          Stream.runCollect,
          Effect.provide(
            TurnPublisher.layer({ prefix, maxInFlight: 8, retryBaseMs: 10, retryMaxMs: 100, retryAttempts: 20 })
          )
        )
        expect(passed).toStrictEqual(messages)
        const entries = yield* redis.xrange(key, "-", "+")
        expect(entries.map((entry) => entry.id)).toStrictEqual(kept(messages).map((entry) => entry.id))
        // A tail opened now reads from the slot's new master (a reader opened while the
        // map was old fails with Unavailable and is opened again, as readers resume).
        const followed = yield* redis.tail(key, { until: TurnEntry.isFinal }).pipe(
          Stream.mapEffect(TurnEntry.toStreamBMessage),
          Stream.runCollect,
          Effect.retry({ while: isRetryable, schedule: Schedule.spaced("100 millis"), times: 20 })
        )
        expect(followed).toStrictEqual(kept(messages).map((entry) => entry.message))
      }).pipe(Effect.provide(RedisStreamsCluster.layerFrom({ nodes }))),
    { timeout: 120_000 }
  )
})

describe("RedisStreamsCluster from the environment", () => {
  it.effect("REDIS_CLUSTER_NODES selects the cluster layer, through RedisConfig and RedisStreamsCluster.layer", () =>
    Effect.gen(function*() {
      const provider = ConfigProvider.fromEnv({ env: { REDIS_CLUSTER_NODES: cluster.nodeList } })
      const fromEnv = yield* RedisConfig.layerFromEnv.pipe(
        Effect.provideService(ConfigProvider.ConfigProvider, provider),
        Effect.map(Option.getOrThrow)
      )
      const key = `sluice-test:env:{${randomUUID()}}`
      yield* Effect.flatMap(RedisStreams, (redis) => redis.xadd(key, { id: "0-1", fields: [["n", "1"]] })).pipe(
        Effect.provide(fromEnv)
      )
      const direct = RedisStreamsCluster.layer.pipe(Layer.provide(ConfigProvider.layer(provider)))
      expect(yield* Effect.flatMap(RedisStreams, (redis) => redis.xlen(key)).pipe(Effect.provide(direct))).toBe(1)
    }))
})

/**
 * The cluster layer against a real three-master Redis Cluster (started here, stopped
 * afterwards): the behaviour suite every layer runs, connecting, and its
 * configuration. A turn on the cluster (publisher, lifecycle, a slot moving) is
 * packages/turns/test/TurnsOnCluster.test.ts.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { freePort, startRedisCluster } from "@sluice/testing/redis"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import * as RedisConfig from "../src/RedisConfig.js"
import { RedisStreams } from "../src/RedisStreams.js"
import * as RedisStreamsCluster from "../src/RedisStreamsCluster.js"
import { streamsSuite } from "./support/streamsSuite.js"

const cluster = await startRedisCluster()
afterAll(() => cluster.close(), 60_000)

const nodes = cluster.nodes.map(({ port }) => ({ host: "127.0.0.1", port }))

streamsSuite("RedisStreamsCluster", RedisStreamsCluster.layer({ nodes }))

describe("RedisStreamsCluster connecting", () => {
  it.effect("one reachable node is enough to find the others", () =>
    Effect.gen(function*() {
      const redis = yield* RedisStreams
      // Keys on different slots, served by different masters.
      for (let i = 0; i < 20; i++) expect(yield* redis.xlen(`sluice-test:cluster:${i}`)).toBe(0)
    }).pipe(Effect.provide(RedisStreamsCluster.layer({ nodes: nodes.slice(1, 2) }))))

  it.effect("no reachable node fails the layer with an Unavailable RedisError", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      const error = yield* Effect.flip(Effect.provide(
        RedisStreams,
        RedisStreamsCluster.layer({ nodes: [{ host: "127.0.0.1", port }], connectTimeoutMs: 1_000 })
      ))
      expect(error.reason).toBe("Unavailable")
      expect(error.command).toBe("CONNECT")
    }))

  it.effect("no nodes at all is a Rejected RedisError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.provide(RedisStreams, RedisStreamsCluster.layer({ nodes: [] })))
      expect(error.reason).toBe("Rejected")
      expect(error.detail).toContain("no cluster nodes")
    }))
})

describe("RedisStreamsCluster from the environment", () => {
  it.effect("REDIS_CLUSTER_NODES selects the cluster layer, through RedisConfig and RedisStreamsCluster.layerConfig", () =>
    Effect.gen(function*() {
      const provider = ConfigProvider.fromEnv({ env: { REDIS_CLUSTER_NODES: cluster.nodeList } })
      const fromEnv = yield* RedisConfig.layerConfig.pipe(
        Effect.provideService(ConfigProvider.ConfigProvider, provider),
        Effect.map(Option.getOrThrow)
      )
      const key = `sluice-test:env:{${randomUUID()}}`
      yield* Effect.flatMap(RedisStreams, (redis) => redis.xadd(key, { id: "0-1", fields: [["n", "1"]] })).pipe(
        Effect.provide(fromEnv)
      )
      const direct = RedisStreamsCluster.layerConfig().pipe(Layer.provide(ConfigProvider.layer(provider)))
      expect(yield* Effect.flatMap(RedisStreams, (redis) => redis.xlen(key)).pipe(Effect.provide(direct))).toBe(1)
    }))
})

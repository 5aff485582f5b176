/**
 * The cluster layer against a real three-master Redis Cluster (started here, stopped
 * afterwards): the behaviour, publisher and lifecycle suites every layer runs, on
 * both write paths, and its configuration.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { RedisStreams } from "../src/RedisStreams.js"
import * as RedisStreamsCluster from "../src/RedisStreamsCluster.js"
import { lifecycleSuite } from "./support/lifecycleSuite.js"
import { publisherSuite } from "./support/publisherSuite.js"
import { freePort } from "./support/RedisServer.js"
import { startRedisCluster } from "./support/redisCluster.js"
import { streamsSuite } from "./support/streamsSuite.js"

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

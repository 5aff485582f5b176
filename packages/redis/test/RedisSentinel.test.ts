/**
 * The live layer through Sentinel: a `redis-server` master and one Sentinel that
 * monitors it, started here; the layer chosen by `REDIS_SENTINELS` and
 * `REDIS_SENTINEL_NAME` finds the master through the Sentinel. (Failover needs
 * replicas and a quorum of Sentinels; it is left to ioredis and not run here.)
 */
import { describe, expect, it } from "@effect/vitest"
import { freePort, launchRedis, scopedRedisServer, stop } from "@sluice/testing/redis"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as RedisConfig from "../src/RedisConfig.js"
import { RedisStreams } from "../src/RedisStreams.js"
import { roundTrip } from "./support/roundTrip.js"

const scopedSentinel = (masterPort: number) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const dir = await mkdtemp(join(tmpdir(), "sluice-sentinel-"))
      const port = await freePort()
      const config = join(dir, "sentinel.conf")
      await writeFile(config, `port ${port}\nbind 127.0.0.1\nsentinel monitor sluice 127.0.0.1 ${masterPort} 1\n`)
      const child = await launchRedis([config, "--sentinel"], "+monitor master sluice")
      return { port, child, dir }
    }),
    ({ child, dir }) =>
      Effect.promise(async () => {
        await stop(child, "SIGTERM")
        await rm(dir, { recursive: true, force: true })
      })
  )

const layerFor = (env: Record<string, string>) =>
  RedisConfig.layerConfig.pipe(
    Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })),
    Effect.map(Option.getOrThrow)
  )

describe("Redis through Sentinel", () => {
  it.live(
    "REDIS_SENTINELS and REDIS_SENTINEL_NAME: the master the Sentinel names carries a turn",
    () =>
      Effect.gen(function*() {
        const master = yield* scopedRedisServer()
        const sentinel = yield* scopedSentinel(master.port)
        const layer = yield* layerFor({ REDIS_SENTINELS: `127.0.0.1:${sentinel.port}`, REDIS_SENTINEL_NAME: "sluice" })
        yield* roundTrip.pipe(Effect.provide(layer))
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )

  it.live(
    "a master name the Sentinel does not know fails the layer with an Unavailable RedisError",
    () =>
      Effect.gen(function*() {
        const master = yield* scopedRedisServer()
        const sentinel = yield* scopedSentinel(master.port)
        const layer = yield* layerFor({ REDIS_SENTINELS: `127.0.0.1:${sentinel.port}`, REDIS_SENTINEL_NAME: "nobody" })
        const error = yield* Effect.flip(Effect.provide(RedisStreams, layer))
        expect(error).toMatchObject({ _tag: "RedisError", reason: "Unavailable", command: "CONNECT" })
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )
})

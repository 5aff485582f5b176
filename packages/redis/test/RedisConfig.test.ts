/**
 * Which Redis the environment names: the variables read through Effect `Config`, the
 * setup chosen, and the typed errors for bad values.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as RedisConfig from "../src/RedisConfig.js"

const targetOf = (env: Record<string, string>) =>
  RedisConfig.target.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))

const failureOf = (env: Record<string, string>) => Effect.map(Effect.flip(targetOf(env)), String)

describe("RedisConfig", () => {
  it.effect("nothing set: no Redis, the caller keeps its own store", () =>
    Effect.gen(function*() {
      expect(yield* targetOf({})).toStrictEqual(Option.none())
      expect(
        Option.isNone(
          yield* RedisConfig.layerConfig.pipe(
            Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))
          )
        )
      ).toBe(true)
    }))

  it.effect("REDIS_URL: one server", () =>
    Effect.gen(function*() {
      const target = Option.getOrThrow(yield* targetOf({ REDIS_URL: "redis://:secret@10.0.0.1:6380/2" }))
      expect(target._tag).toBe("Single")
      expect(target.options).toMatchObject({
        url: "redis://:secret@10.0.0.1:6380/2",
        tls: { rejectUnauthorized: true }
      })
      expect(RedisConfig.describe(target)).toBe("Redis at redis://:***@10.0.0.1:6380/2")
    }))

  it.effect("REDIS_CLUSTER_NODES: a cluster, with credentials and TLS from their own variables", () =>
    Effect.gen(function*() {
      const target = Option.getOrThrow(
        yield* targetOf({
          REDIS_CLUSTER_NODES: "10.0.0.1:7000, 10.0.0.2:7001,[::1]:7002",
          REDIS_USERNAME: "sluice",
          REDIS_PASSWORD: "secret",
          REDIS_TLS: "true",
          REDIS_TLS_SERVERNAME: "redis.internal",
          REDIS_TLS_REJECT_UNAUTHORIZED: "false"
        })
      )
      if (target._tag !== "Cluster") return expect.fail(`a cluster, not ${target._tag}`)
      expect(target.options.nodes).toStrictEqual([
        { host: "10.0.0.1", port: 7000 },
        { host: "10.0.0.2", port: 7001 },
        { host: "::1", port: 7002 }
      ])
      expect(target.options.username).toBe("sluice")
      expect(target.options.password === undefined ? undefined : Redacted.value(target.options.password)).toBe("secret")
      expect(target.options.tls).toStrictEqual({
        ca: undefined,
        servername: "redis.internal",
        rejectUnauthorized: false
      })
      expect(RedisConfig.describe(target)).toBe("the Redis Cluster at 10.0.0.1:7000,10.0.0.2:7001,::1:7002")
      expect(RedisConfig.describe(target)).not.toContain("secret")
      // Without REDIS_TLS the nodes are reached in plain text.
      const plain = Option.getOrThrow(yield* targetOf({ REDIS_CLUSTER_NODES: "10.0.0.1:7000" }))
      expect(plain._tag === "Cluster" && plain.options.tls).toBe(undefined)
    }))

  it.effect("REDIS_SENTINELS and REDIS_SENTINEL_NAME: the master Sentinel names", () =>
    Effect.gen(function*() {
      const target = Option.getOrThrow(
        yield* targetOf({
          REDIS_SENTINELS: "10.0.0.1:26379,10.0.0.2:26379",
          REDIS_SENTINEL_NAME: "sluice-master",
          REDIS_SENTINEL_PASSWORD: "sentinel-secret",
          REDIS_PASSWORD: "p@ss/word"
        })
      )
      if (target._tag !== "Sentinel") return expect.fail(`Sentinel, not ${target._tag}`)
      expect(target.options.sentinel?.sentinels).toStrictEqual([{ host: "10.0.0.1", port: 26379 }, {
        host: "10.0.0.2",
        port: 26379
      }])
      expect(target.options.sentinel?.name).toBe("sluice-master")
      const password = target.options.sentinel?.password
      expect(password === undefined ? undefined : Redacted.value(password)).toBe("sentinel-secret")
      expect(new URL(target.options.url).password).toBe(encodeURIComponent("p@ss/word"))
      expect(RedisConfig.describe(target)).toBe(
        "the Redis master \"sluice-master\" of the Sentinels at 10.0.0.1:26379,10.0.0.2:26379"
      )
    }))

  it.effect("bad values are ConfigErrors that name the variable and the value", () =>
    Effect.gen(function*() {
      const badNode = yield* failureOf({ REDIS_CLUSTER_NODES: "10.0.0.1:7000,redis-a" })
      expect(badNode).toContain("REDIS_CLUSTER_NODES")
      expect(badNode).toContain("\"redis-a\" is not host:port")
      expect(yield* failureOf({ REDIS_CLUSTER_NODES: "10.0.0.1:70000" })).toContain(
        "\"10.0.0.1:70000\" is not host:port"
      )
      expect(yield* failureOf({ REDIS_CLUSTER_NODES: " , " })).toContain("REDIS_CLUSTER_NODES")
      expect(yield* failureOf({ REDIS_SENTINELS: "10.0.0.1:26379" })).toContain("REDIS_SENTINEL_NAME")
      const both = yield* failureOf({ REDIS_CLUSTER_NODES: "10.0.0.1:7000", REDIS_URL: "redis://10.0.0.1" })
      expect(both).toContain("set only one of REDIS_CLUSTER_NODES, REDIS_URL")
      const ca = yield* failureOf({ REDIS_URL: "rediss://10.0.0.1", REDIS_TLS_CA: "/nonexistent/ca.pem" })
      expect(ca).toContain("REDIS_TLS_CA")
      expect(ca).toContain("cannot read the CA file")
      expect(yield* failureOf({ REDIS_CLUSTER_NODES: "10.0.0.1:7000", REDIS_TLS: "maybe" })).toContain("REDIS_TLS")
    }))
})

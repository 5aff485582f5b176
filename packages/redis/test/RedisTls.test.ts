/**
 * The live layer over TLS, against a `redis-server` that speaks only TLS with a CA
 * made for the test: the command connection, the batch connection (the publisher's
 * writes) and a tail all trust the CA given, check the server's name, and refuse a
 * server they cannot verify.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as RedisConfig from "../src/RedisConfig.js"
import { RedisStreams } from "../src/RedisStreams.js"
import * as RedisStreamsLive from "../src/RedisStreamsLive.js"
import { roundTrip } from "./support/roundTrip.js"
import { scopedTlsRedisServer } from "./support/tlsRedisServer.js"

describe("Redis over TLS", () => {
  it.live(
    "with the CA and the server's name, commands, batch writes and tails all go over TLS",
    () =>
      Effect.gen(function*() {
        const server = yield* scopedTlsRedisServer
        yield* roundTrip.pipe(Effect.provide(RedisStreamsLive.layer({
          url: `rediss://127.0.0.1:${server.port}`,
          tls: { ca: server.ca, servername: "localhost" }
        })))
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )

  it.live(
    "REDIS_URL=rediss://, REDIS_TLS_CA and REDIS_TLS_SERVERNAME through RedisConfig",
    () =>
      Effect.gen(function*() {
        const server = yield* scopedTlsRedisServer
        const provider = ConfigProvider.fromEnv({
          env: {
            REDIS_URL: `rediss://127.0.0.1:${server.port}`,
            REDIS_TLS_CA: server.caFile,
            REDIS_TLS_SERVERNAME: "localhost"
          }
        })
        const layer = yield* RedisConfig.layerConfig.pipe(
          Effect.provideService(ConfigProvider.ConfigProvider, provider),
          Effect.map(Option.getOrThrow)
        )
        yield* roundTrip.pipe(Effect.provide(layer))
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )

  it.live(
    "a server the client cannot verify is refused: without the CA, or under another name",
    () =>
      Effect.gen(function*() {
        const server = yield* scopedTlsRedisServer
        const url = `rediss://127.0.0.1:${server.port}`
        const connect = (layer: Layer.Layer<RedisStreams, unknown>) =>
          Effect.flip(Effect.provide(Effect.flatMap(RedisStreams, (redis) => redis.xlen("sluice-tls:probe")), layer))
        const noCa = yield* connect(RedisStreamsLive.layer({ url, connectTimeoutMs: 3_000 }))
        expect(noCa).toMatchObject({ _tag: "RedisError", reason: "Unavailable" })
        const wrongName = yield* connect(RedisStreamsLive.layer({
          url,
          connectTimeoutMs: 3_000,
          tls: { ca: server.ca, servername: "elsewhere.example" }
        }))
        expect(wrongName).toMatchObject({ _tag: "RedisError", reason: "Unavailable" })
        // Verification turned off (a test setup only) connects without the CA.
        const unchecked = RedisStreamsLive.layer({ url, tls: { rejectUnauthorized: false } })
        expect(
          yield* Effect.provide(Effect.flatMap(RedisStreams, (redis) => redis.xlen("sluice-tls:probe")), unchecked)
        ).toBe(0)
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )
})

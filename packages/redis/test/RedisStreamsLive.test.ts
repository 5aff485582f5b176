import { describe, expect, it } from "@effect/vitest"
import { freePort } from "@sluice/testing/redis"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { inject } from "vitest"
import { RedisStreams } from "../src/RedisStreams.js"
import * as RedisStreamsLive from "../src/RedisStreamsLive.js"
import { streamsSuite } from "./support/streamsSuite.js"

const url = inject("redisUrl")

streamsSuite("RedisStreamsLive", RedisStreamsLive.layer({ url }))

describe("RedisStreamsLive configuration", () => {
  it.effect("reads REDIS_URL through Effect Config", () =>
    Effect.gen(function*() {
      const redis = yield* RedisStreams
      expect(yield* redis.xlen("sluice-test:config:missing")).toBe(0)
    }).pipe(
      Effect.provide(
        RedisStreamsLive.layerConfig().pipe(
          Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { REDIS_URL: url } })))
        )
      )
    ))

  it.effect("a server that cannot be reached fails the layer with an Unavailable RedisError", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      const error = yield* Effect.flip(
        Effect.provide(RedisStreams, RedisStreamsLive.layer({ url: `redis://127.0.0.1:${port}` }))
      )
      expect(error._tag).toBe("RedisError")
      expect(error.reason).toBe("Unavailable")
      expect(error.command).toBe("CONNECT")
    }))
})

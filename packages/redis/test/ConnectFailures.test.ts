/**
 * A connection that cannot be opened names its cause (docs/redis.md): ioredis rejects
 * every failed connect with "Connection is closed.", whatever closed it.
 */
import { describe, expect, it } from "@effect/vitest"
import { freePort, launchRedis, serverArgs, stop } from "@sluice/testing/redis"
import * as Effect from "effect/Effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { connectError } from "../src/internal/connection.js"
import { RedisStreams } from "../src/RedisStreams.js"
import * as RedisStreamsLive from "../src/RedisStreamsLive.js"

const failureOf = (url: string) =>
  Effect.flip(Effect.provide(RedisStreams, RedisStreamsLive.layer({ url, connectTimeoutMs: 10_000 })))

// A server that wants the password `sekret`, for the length of a scope.
const passwordServer = Effect.acquireRelease(
  Effect.promise(async () => {
    const dir = await mkdtemp(join(tmpdir(), "sluice-redis-auth-"))
    const port = await freePort()
    const child = await launchRedis([...serverArgs(port, dir), "--appendonly", "no", "--requirepass", "sekret"])
    return { port, dir, child }
  }),
  ({ child, dir }) => Effect.promise(() => stop(child, "SIGTERM").then(() => rm(dir, { recursive: true, force: true })))
)

describe("a Redis start-up failure names its cause", () => {
  it.effect("a refused port", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      const error = yield* failureOf(`redis://127.0.0.1:${port}`)
      expect(error.command).toBe("CONNECT")
      expect(error.reason).toBe("Unavailable")
      expect(error.message).toContain(`ECONNREFUSED 127.0.0.1:${port}`)
      expect(error.message).not.toContain("Connection is closed")
    }), 30_000)

  it.effect("an unknown host", () =>
    Effect.gen(function*() {
      const error = yield* failureOf("redis://no-such-host.invalid:6379")
      expect(error.reason).toBe("Unavailable")
      expect(error.message).toMatch(/(ENOTFOUND|EAI_AGAIN) no-such-host\.invalid/)
      expect(error.message).toContain("does not resolve")
    }), 30_000)

  it.effect(
    "a server that wants a password, given none, then a wrong one; the right one connects",
    () =>
      Effect.gen(function*() {
        const { port } = yield* passwordServer
        const none = yield* failureOf(`redis://127.0.0.1:${port}`)
        expect(none.reason).toBe("Rejected")
        expect(none.message).toContain("NOAUTH")
        expect(none.message).toContain("requires a password")
        const wrong = yield* failureOf(`redis://:wrong@127.0.0.1:${port}`)
        expect(wrong.reason).toBe("Rejected")
        expect(wrong.message).toContain("WRONGPASS")
        expect(wrong.message).not.toContain("Connection is closed")
        const length = RedisStreams.use((redis) => redis.xlen("sluice-test:auth"))
        expect(yield* Effect.provide(length, RedisStreamsLive.layer({ url: `redis://:sekret@127.0.0.1:${port}` })))
          .toBe(0)
      }).pipe(Effect.scoped),
    60_000
  )

  it("protected mode's refusal is named with what to do (not reproducible on loopback)", () => {
    const error = connectError(new Error("DENIED Redis is running in protected mode because protected mode is enabled"))
    expect(error.message).toContain("DENIED Redis is running in protected mode")
    expect(error.message).toContain("give it a password")
  }, 30_000)
})

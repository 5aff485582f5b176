/**
 * The live durable store against a frozen Redis (a dedicated redis-server stopped
 * with SIGSTOP: the connections stay open, nothing answers): every command fails
 * `Unavailable` within the bound of the turns' commands (`commandTimeoutMs`), a
 * wait's blocking `XREAD` once its block and that bound have passed, instead of
 * waiting for ever; once the server goes on (SIGCONT) the store works again.
 */
import { describe, expect, it } from "@effect/vitest"
import { scopedRedisServer } from "@sluice/testing/redis"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { Redis } from "ioredis"
import { randomUUID } from "node:crypto"
import * as DurableStoreLive from "../src/DurableStoreLive.js"

const persist = { _tag: "Persist" } as const
const bytes = (text: string) => new TextEncoder().encode(text)

describe("DurableStoreLive with Redis frozen", () => {
  it.live(
    "a command and a blocked wait fail Unavailable instead of hanging; the store works once Redis goes on",
    () =>
      Effect.gen(function*() {
        const server = yield* scopedRedisServer()
        const store = yield* DurableStoreLive.make({
          url: server.url,
          prefix: `durable-frozen-${process.pid}`,
          commandTimeoutMs: 500,
          connectTimeoutMs: 500
        })
        const probe = yield* Effect.acquireRelease(
          Effect.sync(() => new Redis(server.url)),
          (redis) => Effect.sync(() => redis.disconnect())
        )
        const name = randomUUID()
        yield* store.commit(name, { expect: 0, set: { ct: "text/plain" }, append: [bytes("a")], expiry: persist })
        const state = Option.getOrThrow(yield* store.load(name))
        const waiting = yield* Effect.forkChild(store.awaitChange(name, state.signal, 5_000))
        // until its XREAD is blocked on the server
        let blocked = 0
        for (let i = 0; i < 10_000 && blocked === 0; i++) {
          const clients = yield* Effect.promise(() => probe.call("CLIENT", "LIST"))
          blocked = String(clients).split("\n").filter((line) => / flags=b /.test(line)).length
        }
        expect(blocked).toBe(1)

        const pid = server.pid()
        if (pid === undefined) return yield* Effect.die(new Error("redis-server has no pid"))
        // frozen until the end of the test at the latest (before the server is closed)
        yield* Effect.acquireRelease(
          Effect.sync(() => process.kill(pid, "SIGSTOP")),
          () => Effect.sync(() => process.kill(pid, "SIGCONT"))
        )
        const waited = yield* Effect.flip(Fiber.join(waiting))
        expect(waited).toMatchObject({ _tag: "RedisError", reason: "Unavailable", command: "XREAD" })
        const operations = [
          store.load(name),
          store.read(name, "0-0", 10),
          store.commit(name, { expect: state.version, set: {}, append: [bytes("b")], expiry: persist }),
          store.touch(name, { _tag: "After", ms: 60_000 }),
          store.remove(randomUUID()),
          store.awaitChange(name, state.signal, 5_000)
        ]
        const failures = yield* Effect.forEach(operations, Effect.flip, { concurrency: "unbounded" })
        expect(failures.map((failure) => failure.reason)).toStrictEqual(operations.map(() => "Unavailable"))

        process.kill(pid, "SIGCONT")
        // the commit sent while Redis was frozen ran once it went on: a 503 may have been written
        const after = yield* store.read(name, "0-0", 10)
        expect(after.map((entry) => new TextDecoder().decode(entry.data))).toStrictEqual(["a", "b"])
      }),
    60_000
  )
})

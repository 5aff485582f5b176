/**
 * 2,000 readers of one running turn on redis-server share one tail: while they connect
 * and follow, Redis holds one blocking connection for the turn (before, one per
 * reader: 2,000), `/healthz` answers, and every reader gets every entry once, in order,
 * to the turn's end. Counts, never timings.
 */
import { describe, expect, layer } from "@effect/vitest"
import { RedisStreamsLive } from "@sluice/redis"
import { admin } from "@sluice/testing/redis"
import { producer, serve, tokens } from "@sluice/testing/server"
import { upsertMessages } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { randomUUID } from "node:crypto"
import { request as httpRequest } from "node:http"
import { inject } from "vitest"

// A database of its own, so that the connection count is this test's.
const database = 12
const url = (() => {
  const base = new URL(inject("redisUrl"))
  base.pathname = `/${database}`
  return base.toString()
})()

const readers = 2_000

interface Reader {
  status: number
  body: string
  ended: boolean
}

// A reader on a socket of its own (no pooling), reading the whole body as text.
const follow = (target: string, reader: Reader, connected: () => void) =>
  Effect.callback<void, Error>((resume) => {
    const req = httpRequest(target, { agent: false, headers: { authorization: `Bearer ${tokens[0]}` } }, (res) => {
      reader.status = res.statusCode ?? 0
      res.setEncoding("utf8")
      let first = true
      res.on("data", (text: string) => {
        reader.body += text
        if (first) {
          first = false
          connected()
        }
      })
      res.on("end", () => {
        reader.ended = true
        resume(Effect.void)
      })
      res.on("error", (error) => resume(Effect.fail(error)))
    })
    req.on("error", (error) => resume(Effect.fail(error)))
    req.end()
    return Effect.sync(() => req.destroy())
  })

const get = (target: string) => Effect.tryPromise(() => fetch(target).then((response) => response.status))

// The connections Redis holds on this test's database, by client name.
const connections = Effect.map(admin(url, ["CLIENT", "LIST"]), (list) => {
  const counts: Record<string, number> = {}
  for (const line of list.split("\n")) {
    if (!line.includes(` db=${database} `)) continue
    const name = /(?:^| )name=(\S*)/.exec(line)?.[1] ?? ""
    counts[name] = (counts[name] ?? 0) + 1
  }
  return counts
})

layer(RedisStreamsLive.layer({ url }), { timeout: 240_000, excludeTestServices: true })(
  "2,000 readers of one turn on redis-server",
  (it) => {
    describe("GET /v1/turns/:turnId/upserts", () => {
      it.effect(
        "share one tail connection; /healthz answers while they connect; each reads the whole turn once",
        () =>
          Effect.gen(function*() {
            const base = yield* serve({ maxStreamsPerToken: readers + 10 })
            const turnId = randomUUID()
            const messages = upsertMessages(turnId, 20)
            const produce = yield* producer(turnId, messages)
            yield* produce.release(5)
            let connected = 0
            const all: Array<Reader> = Array.from({ length: readers }, () => ({ status: 0, body: "", ended: false }))
            const fibers = yield* Effect.forEach(
              all,
              // forked one by one from this fiber, so that they live as long as the test
              (reader) => Effect.forkChild(follow(`${base}/v1/turns/${turnId}/upserts`, reader, () => connected++))
            )
            // /healthz, asked while the readers connect.
            const health: Array<number> = []
            while (connected < readers && health.length < 200) {
              health.push(yield* get(`${base}/healthz`))
              yield* Effect.sleep(20)
            }
            expect(health.length).toBeGreaterThan(0)
            expect(health.every((status) => status === 200)).toBe(true)
            while (connected < readers) yield* Effect.sleep(50)
            const held = yield* connections
            // One blocking tail for the turn, whatever the number of readers.
            expect(held["sluice-tail"]).toBe(1)
            const total = Object.values(held).reduce((sum, n) => sum + n, 0)
            expect(total).toBeLessThan(10)
            yield* produce.release(messages.length - 5)
            yield* Effect.forEach(fibers, Fiber.await, { discard: true })
            const expectedIds = messages.map((_, i) => `id: 0-${i + 1}`)
            for (const reader of all) {
              expect(reader.status).toBe(200)
              expect(reader.ended).toBe(true)
              expect(reader.body.split("\n").filter((line) => line.startsWith("id: "))).toStrictEqual(expectedIds)
            }
          }),
        240_000
      )
    })
  }
)

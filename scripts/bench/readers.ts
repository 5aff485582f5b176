/**
 * Many readers of one turn: `sluice serve` (in a process of its own) on a redis-server
 * started for the run, a running turn, and `BENCH_READERS` (2,000) SSE readers of its
 * Stream B connecting at once, each on a socket of its own. Reported: the server's
 * resident memory before the readers and once all are connected (and so per reader),
 * the connections Redis holds for the server, how `/healthz` answered while the
 * readers connected, and, once the turn is finished, how many readers read it whole. A
 * benchmark, never a test.
 */
import { RedisStreamsLive } from "@sluice/redis"
import { TurnPublisher } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { request } from "node:http"
import { performance } from "node:perf_hooks"
import { startRedisServer } from "../../packages/redis/test/support/RedisServer.js"
import { admin } from "../../packages/server/test/support/redisAdmin.js"
import { upsertMessages } from "../../packages/turns/test/support/turns.js"
import { procBytes, sluiceCommand, startSluiceServe } from "./harness.js"

const READERS = Number(process.env.BENCH_READERS ?? "2000")
const TOKEN = "bench-readers-token"
const PREFIX = "bench"
const MESSAGES = 40

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const startServer = (url: string) =>
  startSluiceServe(url, {
    token: TOKEN,
    prefix: PREFIX,
    probe: "/healthz",
    args: ["--max-streams-per-token", String(READERS + 10)]
  })

interface Reader {
  connected: boolean
  ended: boolean
  ids: number
}

const follow = (target: string, reader: Reader) =>
  new Promise<void>((resolve) => {
    const req = request(target, { agent: false, headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
      res.setEncoding("utf8")
      let rest = ""
      res.on("data", (text: string) => {
        reader.connected = true
        const lines = (rest + text).split("\n")
        rest = lines.pop() ?? ""
        for (const line of lines) if (line.startsWith("id: ")) reader.ids++
      })
      res.on("end", () => {
        reader.ended = true
        resolve()
      })
      res.on("error", () => resolve())
    })
    req.on("error", () => resolve())
    req.end()
  })

/** The readers section's Markdown. */
export const run = async (): Promise<string> => {
  const redis = await startRedisServer()
  const turnId = randomUUID()
  const messages = upsertMessages(turnId, MESSAGES)
  // The turn's publisher, released message by message.
  const gate = Effect.runSync(Queue.unbounded<number>())
  const publishing = Effect.runPromise(
    Stream.fromIterable(messages).pipe(
      Stream.rechunk(1),
      Stream.tap(() => Queue.take(gate)),
      TurnPublisher.publishUpserts(turnId),
      Stream.runDrain,
      Effect.provide(
        Layer.provideMerge(
          TurnPublisher.layer({ prefix: PREFIX, keepSuperseded: true }),
          RedisStreamsLive.layerFrom({ url: redis.url })
        )
      )
    )
  )
  const release = (n: number) => Effect.runSync(Queue.offerAll(gate, Array.from({ length: n }, () => 1)))
  release(5)
  const { base, child } = await startServer(redis.url)
  try {
    const pid = child.pid!
    await sleep(500)
    const rssBefore = procBytes(pid, "VmRSS")
    const readers: Array<Reader> = Array.from({ length: READERS }, () => ({ connected: false, ended: false, ids: 0 }))
    const started = performance.now()
    const done = Promise.all(readers.map((reader) => follow(`${base}/v1/turns/${turnId}/upserts`, reader)))
    const health: Array<number> = []
    let healthFailed = 0
    while (readers.some((reader) => !reader.connected) && performance.now() - started < 120_000) {
      const asked = performance.now()
      try {
        const response = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(10_000) })
        if (response.status === 200) health.push(performance.now() - asked)
        else healthFailed++
      } catch {
        healthFailed++
      }
      await sleep(50)
    }
    const connectSeconds = (performance.now() - started) / 1000
    const connected = readers.filter((reader) => reader.connected).length
    await sleep(500)
    const rssAfter = procBytes(pid, "VmRSS")
    const clients = (await Effect.runPromise(admin(redis.url, ["CLIENT", "LIST"]))).split("\n").filter((line) =>
      line.includes("name=sluice")
    ).length
    release(MESSAGES - 5)
    await publishing
    await Promise.race([done, sleep(120_000)])
    const whole = readers.filter((reader) =>
      reader.ended && reader.ids === MESSAGES
    ).length
    health.sort((a, b) => a - b)
    const perReader = (rssAfter - rssBefore) / Math.max(1, connected)
    return [
      `\n## Readers of one turn (\`sluice serve\` ${sluiceCommand().how}, redis-server started for the run)`,
      "",
      `${READERS} SSE readers of one running turn's Stream B, each on a socket of its own, connecting at once.`,
      "",
      "| readers connected | in | server RSS before | with every reader | per reader | Redis connections of the server | /healthz answered (max) | /healthz failed | readers that read the whole turn |",
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
      `| ${connected} | ${connectSeconds.toFixed(1)} s | ${(rssBefore / 2 ** 20).toFixed(0)} MB | ${
        (rssAfter / 2 ** 20).toFixed(0)
      } MB | ${(perReader / 1024).toFixed(0)} KB | ${clients} | ${health.length} (${
        (health[health.length - 1] ?? NaN).toFixed(0)
      } ms) | ${healthFailed} | ${whole} |`
    ].join("\n")
  } finally {
    child.kill()
    await redis.close()
  }
}

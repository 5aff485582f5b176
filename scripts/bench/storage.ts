/**
 * Storage of long messages (`pnpm bench storage`): one message of 100 KB, 1 MB and
 * 4 MB, streamed in deltas of 1 to 64 characters through the upsert stage and the
 * publisher into a real Redis (a throwaway `redis-server`, or `REDIS_URL`). For each:
 * the upserts the gradient made, the bytes they carry (what Stream B held when it kept
 * every upsert), and the bytes Stream B holds now (each item's last upsert). Then
 * `sluice serve`, in a process of its own, serves the 4 MB turn: the time of one
 * snapshot, of ten at once, and the server's RSS before and at its peak (`VmHWM`). The
 * server runs as built (`pnpm build`, the packages' `dist`), else from its sources
 * under tsx.
 *
 * Wall-clock time and `setInterval` are fine here: this is a script, never a test.
 */
import { Ids } from "@sluice/core"
import { ReadBudget, RedisStreams, RedisStreamsLive } from "@sluice/redis"
import { startRedisServer } from "@sluice/testing/redis"
import { messageText, messageTurn } from "@sluice/testing/turns"
import { TurnEntry, TurnKeys, TurnPublisher } from "@sluice/turns"
import { StreamBMessages, UpsertStream } from "@sluice/upserts"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { procBytes, sluiceCommand, startSluiceServe } from "./harness.js"

const PREFIX = "bench-storage"
const TOKEN = "bench-storage-token-0123456789"
const sizes = [100 * 1024, 1024 * 1024, 4 * 1024 * 1024] as const

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`

interface Published {
  readonly upserts: number
  readonly written: number
  readonly stored: number
  readonly entries: number
}

const publish = (turnId: string, bytes: number) =>
  Effect.gen(function*() {
    let written = 0
    const upserts = yield* messageTurn(turnId, messageText(bytes)).pipe(
      UpsertStream.upserts(),
      StreamBMessages.wrap,
      TurnPublisher.publishUpserts(turnId),
      Stream.tap((message) =>
        Effect.sync(() => {
          written += ReadBudget.entryBytes({ id: "0-0", fields: TurnEntry.fromStreamBMessage(message) })
        })
      ),
      Stream.runCount
    )
    const redis = yield* RedisStreams.RedisStreams
    const entries = yield* redis.xrange(TurnKeys.upsertsKey(PREFIX, turnId), "-", "+")
    const stored = entries.reduce((sum, entry) => sum + ReadBudget.entryBytes(entry), 0)
    return { upserts, written, stored, entries: entries.length } satisfies Published
  })

const timed = async <A>(f: () => Promise<A>): Promise<readonly [A, number]> => {
  const start = performance.now()
  const value = await f()
  return [value, performance.now() - start] as const
}

const get = (url: string) =>
  fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } }).then(async (response) => {
    const body = await response.text()
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${body.slice(0, 200)}`)
    return body.length
  })

/** `sluice serve` on `url`'s Redis, in a process of its own; its base URL once it answers. */
const startServer = (url: string) => startSluiceServe(url, { token: TOKEN, prefix: PREFIX, probe: "/v1/turns" })

const snapshots = async (url: string, turnId: string) => {
  const { child, base } = await startServer(url)
  try {
    const pid = child.pid!
    const rssBefore = procBytes(pid, "VmRSS")
    const single: Array<number> = []
    for (let i = 0; i < 5; i++) single.push((await timed(() => get(`${base}/v1/turns/${turnId}`)))[1])
    const [, ten] = await timed(() => Promise.all(Array.from({ length: 10 }, () => get(`${base}/v1/turns/${turnId}`))))
    const [, list] = await timed(() => get(`${base}/v1/turns`))
    return { single: single.sort((a, b) => a - b), ten, list, rssBefore, peak: procBytes(pid, "VmHWM") }
  } finally {
    child.kill()
  }
}

/** The storage section's Markdown. */
export const run = async (): Promise<string> => {
  const external = process.env.REDIS_URL
  const server = external === undefined ? await startRedisServer() : undefined
  const url = external ?? server!.url
  try {
    const program = Effect.gen(function*() {
      const rows: Array<readonly [number, Published]> = []
      let big = ""
      for (const bytes of sizes) {
        const turnId = Ids.generateEventId()
        rows.push([bytes, yield* publish(turnId, bytes)])
        big = turnId
      }
      return { rows, big }
    })
    const { rows, big } = await Effect.runPromise(
      program.pipe(
        Effect.provide(Layer.provideMerge(TurnPublisher.layer({ prefix: PREFIX }), RedisStreamsLive.layer({ url })))
      )
    )
    const served = await snapshots(url, big)
    const median = served.single[Math.floor(served.single.length / 2)]!
    return [
      `\n## Storage: one long message through the upsert stage into Redis ${
        external === undefined ? "(started for the run)" : "(REDIS_URL)"
      }`,
      "",
      "| message | upserts | bytes the upserts carry (Stream B keeping every upsert) | Stream B now | entries now | now / message |",
      "|---:|---:|---:|---:|---:|---:|",
      ...rows.map(([bytes, row]) =>
        `| ${mb(bytes)} | ${row.upserts} | ${mb(row.written)} | ${mb(row.stored)} | ${row.entries} | ${
          (row.stored / bytes).toFixed(2)
        }x |`
      ),
      "",
      `Snapshot of the 4 MB turn (\`GET /v1/turns/:id\`, \`sluice serve\` ${sluiceCommand().how} in its own process): median of 5 ${
        median.toFixed(0)
      } ms ` +
      `(min ${served.single[0]!.toFixed(0)}, max ${served.single.at(-1)!.toFixed(0)}); ten at once ${
        served.ten.toFixed(0)
      } ms; ` +
      `\`GET /v1/turns\` after them ${served.list.toFixed(0)} ms; server RSS ${mb(served.rssBefore)} before, ${
        mb(served.peak)
      } at its peak (VmHWM).`
    ].join("\n")
  } finally {
    await server?.close()
  }
}

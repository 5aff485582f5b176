/**
 * Many readers of one turn: `sluice serve` (in a process of its own, bundled from the
 * sources as a build ships it) on a redis-server started for the run, one running turn
 * (a message of `BENCH_READERS_TEXT` bytes streamed in deltas of about 32 characters,
 * through Stream A and the upsert stage into Stream B), and `BENCH_READERS` (2,000) SSE
 * readers of one of its streams, each on a socket of its own, at most
 * `BENCH_READERS_WAVE` (100) connecting at a time. `BENCH_READERS_STREAMS` names the
 * streams read, one fresh server each (`upserts,events` by default).
 *
 * Reported per stream: the server's resident memory before the readers and once all
 * have caught up (and so per reader), the server's CPU time while they connected and
 * caught up (from /proc), how `/healthz` answered meanwhile (asked every 50 ms: how many
 * answers, the median, the slowest, the failures), how late the server's event loop ran
 * meanwhile (`eventLoopDelay.ts`: p99 and max), the connections Redis holds for the
 * server, and, once the turn is finished, how many readers read it whole. A benchmark,
 * never a test.
 */
import { RedisStreamsLive } from "@sluice/redis"
import { admin, startRedisServer } from "@sluice/testing/redis"
import { messageText, messageTurn, streamEvents } from "@sluice/testing/turns"
import { TurnPublisher } from "@sluice/turns"
import { StreamBMessages, UpsertStream } from "@sluice/upserts"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { readFileSync, rmSync } from "node:fs"
import { request } from "node:http"
import { connect } from "node:net"
import { resolve } from "node:path"
import { performance } from "node:perf_hooks"
import { promisify } from "node:util"
import { procBytes } from "./harness.js"

const READERS = Number(process.env.BENCH_READERS ?? "2000")
const WAVE = Number(process.env.BENCH_READERS_WAVE ?? "100")
const TEXT = Number(process.env.BENCH_READERS_TEXT ?? "65536")
const STREAMS = (process.env.BENCH_READERS_STREAMS ?? "upserts,events").split(",").map((name) => name.trim())
const TOKEN = "bench-readers-token"
const PREFIX = "bench"
const bundled = "bench-results/sluice-serve/bin.js"
// the tree whose sluice is measured (another checkout, for a run before a change)
const ROOT = process.env.BENCH_READERS_ROOT ?? "."

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// `sluice` bundled from the sources by the checkout's own packages/cli/scripts/bundle.mjs,
// so that the run measures the code as it is, built or not.
const bundle = async () => {
  rmSync("bench-results/sluice-serve", { recursive: true, force: true })
  await promisify(execFile)(process.execPath, ["scripts/bundle.mjs", resolve("bench-results/sluice-serve")], {
    cwd: `${ROOT}/packages/cli`
  })
}

const startServer = async (url: string): Promise<{ readonly child: ChildProcess; readonly base: string }> => {
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const nodeArgs = (process.env.BENCH_READERS_NODE_ARGS ?? "").split(" ").filter((arg) => arg !== "")
  const child = spawn(process.execPath, [
    ...nodeArgs,
    "--import",
    resolve("scripts/bench/eventLoopDelay.ts"),
    bundled,
    "serve",
    "--port",
    String(port),
    "--host",
    "127.0.0.1",
    "--prefix",
    PREFIX,
    "--max-streams-per-token",
    String(READERS + 10)
  ], {
    env: { ...process.env, REDIS_URL: url, SLUICE_API_TOKENS: TOKEN, BENCH_EVENT_LOOP_FILE: eventLoopFile },
    stdio: "ignore"
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 600; i++) {
    try {
      const response = await fetch(`${base}/healthz`)
      await response.arrayBuffer()
      if (response.status === 200) return { child, base }
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
  child.kill()
  throw new Error("sluice serve did not answer")
}

// How late the server's event loop ran (`eventLoopDelay.ts`), in ms, since it was told
// to start over (SIGUSR2).
const eventLoopFile = "bench-results/readers-event-loop.json"
const decodeDelay = Schema.decodeUnknownSync(
  Schema.fromJsonString(Schema.Struct({ p50: Schema.Number, p99: Schema.Number, max: Schema.Number }))
)
const eventLoopDelay = () => decodeDelay(readFileSync(eventLoopFile, "utf8"))

// The CPU seconds a process has used (user and system, /proc/<pid>/stat).
const cpuSeconds = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

// `/healthz` asked every 50 ms by a process of its own (so that the bench's own load,
// its 2,000 readers, does not delay the asking), until `stop`: the times it took to
// answer, in ms, and how many asks failed (no 200 within 10 s).
const probeScript = `
const base = process.argv[1]
const answered = []
let failed = 0
let stopping = false
process.stdin.on("end", () => { stopping = true })
process.stdin.resume()
const ask = async () => {
  while (!stopping) {
    const asked = performance.now()
    try {
      const response = await fetch(base + "/healthz", { signal: AbortSignal.timeout(10_000) })
      await response.arrayBuffer()
      if (response.status === 200) answered.push(performance.now() - asked)
      else failed++
    } catch {
      failed++
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  process.stdout.write(JSON.stringify({ answered, failed }))
}
ask()
`

const probing = (base: string) => {
  const child = spawn(process.execPath, ["-e", probeScript, base], { stdio: ["pipe", "pipe", "inherit"] })
  let output = ""
  child.stdout.on("data", (data: Buffer) => void (output += data.toString()))
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  return {
    stop: async (): Promise<{ readonly answered: Array<number>; readonly failed: number }> => {
      child.stdin.end()
      await exited
      const parsed: unknown = JSON.parse(output)
      if (
        typeof parsed !== "object" || parsed === null || !("answered" in parsed) || !("failed" in parsed) ||
        !Array.isArray(parsed.answered) || typeof parsed.failed !== "number"
      ) throw new Error(`the probe answered ${output}`)
      return { answered: parsed.answered.filter((ms): ms is number => typeof ms === "number"), failed: parsed.failed }
    }
  }
}

interface Reader {
  connected: boolean
  ended: boolean
  ids: number
}

const follow = (target: string, reader: Reader, onConnected: () => void, onId: () => void) =>
  new Promise<void>((resolve) => {
    const req = request(target, { agent: false, headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
      res.setEncoding("utf8")
      let rest = ""
      res.on("data", (text: string) => {
        if (!reader.connected) {
          reader.connected = true
          onConnected()
        }
        const lines = (rest + text).split("\n")
        rest = lines.pop() ?? ""
        for (const line of lines) {
          if (line.startsWith("id: ")) {
            reader.ids++
            onId()
          }
        }
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

// The turn through Stream A and the upsert stage into Stream B, every event but the
// last `held` published at once, the rest once `release` completes.
const publishTurn = (url: string, turnId: string, held: number) =>
  Effect.gen(function*() {
    const gate = yield* Deferred.make<void>()
    const events = Array.from(yield* Stream.runCollect(messageTurn(turnId, messageText(TEXT))))
    const first = events.length - held
    const firstWritten = yield* Deferred.make<void>()
    let written = 0
    const fiber = yield* Stream.fromIterable(events).pipe(
      Stream.rechunk(64),
      Stream.tap(() =>
        Effect.suspend(() => {
          written++
          if (written === first) Deferred.doneUnsafe(firstWritten, Effect.void)
          return written > first ? Deferred.await(gate) : Effect.void
        })
      ),
      TurnPublisher.publishEvents(turnId),
      UpsertStream.upserts(),
      StreamBMessages.wrap,
      TurnPublisher.publishUpserts(turnId),
      Stream.runDrain,
      Effect.provide(
        Layer.provideMerge(
          TurnPublisher.layer({ prefix: PREFIX, keepSuperseded: true }),
          RedisStreamsLive.layer({ url })
        )
      ),
      Effect.forkDetach
    )
    yield* Deferred.await(firstWritten)
    return { events: events.length, release: Deferred.succeed(gate, undefined), done: fiber }
  })

const xlen = (url: string, key: string) => Effect.runPromise(admin(url, ["XLEN", key])).then(Number)

interface Row {
  readonly stream: string
  readonly entries: number
  readonly bytes: number
  readonly connected: number
  readonly seconds: number
  readonly rssBefore: number
  readonly rssAfter: number
  readonly cpu: number
  readonly health: ReadonlyArray<number>
  readonly healthFailed: number
  readonly loop: { readonly p99: number; readonly max: number }
  readonly clients: number
  readonly whole: number
}

const log = (text: string) => process.stderr.write(`readers: ${(performance.now() / 1000).toFixed(1)} s: ${text}\n`)

const runStream = async (stream: string): Promise<Row> => {
  log(`${stream}: starting`)
  const redis = await startRedisServer()
  try {
    const turnId = randomUUID()
    // the last 8 events (the message's end, the turn's) wait until every reader is in
    const turn = await Effect.runPromise(publishTurn(redis.url, turnId, 8))
    log(`${stream}: turn written`)
    const key = `${PREFIX}:turn:{${turnId}}:${stream}`
    await sleep(500)
    const before = await xlen(redis.url, key)
    const memory = Number(
      (await Effect.runPromise(admin(redis.url, ["MEMORY", "USAGE", key, "SAMPLES", "0"]))) || "0"
    )
    const { base, child } = await startServer(redis.url)
    try {
      const pid = child.pid!
      await sleep(500)
      const rssBefore = procBytes(pid, "VmRSS")
      const readers: Array<Reader> = Array.from({ length: READERS }, () => ({ connected: false, ended: false, ids: 0 }))
      let connecting = 0
      let caughtUp = 0
      const started = performance.now()
      const cpuStart = cpuSeconds(pid)
      child.kill("SIGUSR2")
      const done: Array<Promise<void>> = []
      const launcher = (async () => {
        for (const reader of readers) {
          while (connecting >= WAVE) await sleep(5)
          connecting++
          let seen = 0
          done.push(follow(`${base}/v1/turns/${turnId}/${stream}`, reader, () => connecting--, () => {
            seen++
            if (seen === before) caughtUp++
          }))
        }
      })()
      const probe = probing(base)
      while (caughtUp < READERS && performance.now() - started < 300_000) await sleep(50)
      const { answered: health, failed: healthFailed } = await probe.stop()
      // (written every 250 ms: the last write after the phase)
      await sleep(300)
      const loop = eventLoopDelay()
      await launcher
      const seconds = (performance.now() - started) / 1000
      const cpu = cpuSeconds(pid) - cpuStart
      const connected = readers.filter((reader) => reader.connected).length
      await sleep(500)
      const rssAfter = procBytes(pid, "VmRSS")
      const clients = (await Effect.runPromise(admin(redis.url, ["CLIENT", "LIST"]))).split("\n").filter((line) =>
        line.includes("name=sluice")
      ).length
      log(`${stream}: ${connected} readers caught up in ${seconds.toFixed(1)} s`)
      await Effect.runPromise(turn.release)
      await Effect.runPromise(Effect.asVoid(Fiber.join(turn.done)))
      log(`${stream}: turn finished`)
      await Promise.race([
        Promise.all(done),
        new Promise((resolve) =>
          setTimeout(resolve, 120_000).unref()
        )
      ])
      log(`${stream}: readers ended`)
      const total = await xlen(redis.url, key)
      const whole = readers.filter((reader) => reader.ended && reader.ids === total).length
      health.sort((a: number, b: number) => a - b)
      return {
        stream,
        entries: total,
        bytes: memory,
        connected,
        seconds,
        rssBefore,
        rssAfter,
        cpu,
        health,
        healthFailed,
        loop,
        clients,
        whole
      }
    } finally {
      child.kill()
    }
  } finally {
    await redis.close()
  }
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`

const PAUSED = Number(process.env.BENCH_READERS_PAUSED ?? "200")
const PAUSED_ENTRIES = Number(process.env.BENCH_READERS_PAUSED_ENTRIES ?? "6000")
const PAUSED_ENTRY_BYTES = 2_200

interface PausedRow {
  readonly entries: number
  readonly bytes: number
  readonly rssBefore: number
  readonly rssAfter: number
  readonly open: number
}

// A connection that asks for the turn's Stream A and never reads a byte of the answer;
// `open` while the server has not closed it.
const pausedReader = (base: string, path: string) =>
  new Promise<{ readonly open: () => boolean; readonly close: () => void }>((resolve, reject) => {
    const { hostname, port } = new URL(base)
    let closed = false
    const socket = connect(Number(port), hostname, () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`)
      socket.pause()
      resolve({ open: () => !closed, close: () => socket.destroy() })
    })
    socket.on("close", () => void (closed = true))
    socket.on("error", reject)
  })

// `PAUSED` readers of one turn's Stream A that never read, while the turn writes
// `PAUSED_ENTRIES` entries of about 2.2 KB (13 MB for 6,000): the server's resident memory
// before they connect, and once one reader that reads has read the whole turn.
const runPaused = async (): Promise<PausedRow> => {
  log(`paused: starting`)
  const redis = await startRedisServer()
  try {
    const { base, child } = await startServer(redis.url)
    try {
      const pid = child.pid!
      const turnId = randomUUID()
      const text = "x".repeat(PAUSED_ENTRY_BYTES)
      const events = streamEvents(turnId, PAUSED_ENTRIES + 3).map((event) =>
        event.payload.type === "item_delta" ? { ...event, payload: { ...event.payload, delta_content: text } } : event
      )
      const gate = await Effect.runPromise(Deferred.make<void>())
      const written = Stream.fromIterable(events.slice(0, 2)).pipe(
        Stream.concat(Stream.drain(Stream.fromEffect(Deferred.await(gate)))),
        Stream.concat(Stream.fromIterable(events.slice(2))),
        TurnPublisher.publishEvents(turnId),
        Stream.runDrain,
        Effect.provide(Layer.provideMerge(
          TurnPublisher.layer({ prefix: PREFIX, keepSuperseded: true }),
          RedisStreamsLive.layer({ url: redis.url })
        )),
        Effect.runPromise
      )
      await sleep(1_000)
      const path = `/v1/turns/${turnId}/events`
      const rssBefore = procBytes(pid, "VmRSS")
      const reading: Reader = { connected: false, ended: false, ids: 0 }
      const done = follow(`${base}${path}`, reading, () => {}, () => {})
      const paused = []
      for (let i = 0; i < PAUSED; i++) paused.push(await pausedReader(base, path))
      await sleep(1_000)
      await Effect.runPromise(Deferred.succeed(gate, undefined))
      await written
      await done
      await sleep(1_000)
      const rssAfter = procBytes(pid, "VmRSS")
      const open = paused.filter((reader) => reader.open()).length
      for (const reader of paused) reader.close()
      const key = `${PREFIX}:turn:{${turnId}}:events`
      const bytes = Number(await Effect.runPromise(admin(redis.url, ["MEMORY", "USAGE", key, "SAMPLES", "0"])))
      log(`paused: ${open} of ${PAUSED} paused readers open; ${reading.ids} entries read by the reading one`)
      return { entries: reading.ids, bytes, rssBefore, rssAfter, open }
    } finally {
      child.kill()
    }
  } finally {
    await redis.close()
  }
}

/** The readers section's Markdown. */
export const run = async (): Promise<string> => {
  await bundle()
  const rows: Array<Row> = []
  for (const stream of STREAMS) rows.push(await runStream(stream))
  const paused = PAUSED > 0 ? await runPaused() : undefined
  return [
    `\n## Readers of one turn (\`sluice serve\` bundled from the sources, redis-server started for the run)`,
    "",
    `${READERS} SSE readers of one running turn (a ${TEXT}-byte message in deltas), each on a socket of its own, at most ${WAVE} connecting at a time; each stream on a fresh server. Caught up: every reader has the entries written before it connected.`,
    "",
    "| stream | entries (Redis memory) | readers connected | caught up in | server CPU | server RSS before | with every reader | per reader | Redis connections of the server | /healthz answered (p50, max) | /healthz failed | server's event loop late (p99, max) | readers that read the whole turn |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map((row) =>
      `| ${row.stream} | ${row.entries} (${(row.bytes / 1024).toFixed(0)} KB) | ${row.connected} | ${
        row.seconds.toFixed(1)
      } s | ${row.cpu.toFixed(1)} s | ${mb(row.rssBefore)} | ${mb(row.rssAfter)} | ${
        ((row.rssAfter - row.rssBefore) / Math.max(1, row.connected) / 1024).toFixed(0)
      } KB | ${row.clients} | ${row.health.length} (${
        (row.health[Math.floor(row.health.length / 2)] ?? NaN).toFixed(0)
      } ms, ${(row.health[row.health.length - 1] ?? NaN).toFixed(0)} ms) | ${row.healthFailed} | ${
        row.loop.p99.toFixed(0)
      } ms, ${row.loop.max.toFixed(0)} ms | ${row.whole} |`
    ),
    ...(paused === undefined ? [] : [
      "",
      `${PAUSED} connections that send \`GET /v1/turns/:turnId/events\` and never read, while the turn writes its entries; one other reader reads the whole turn.`,
      "",
      "| entries (Redis memory) | server RSS before | once the turn is read | per paused reader | paused readers still open |",
      "|---:|---:|---:|---:|---:|",
      `| ${paused.entries} (${mb(paused.bytes)}) | ${mb(paused.rssBefore)} | ${mb(paused.rssAfter)} | ${
        ((paused.rssAfter - paused.rssBefore) / PAUSED / 1024).toFixed(0)
      } KB | ${paused.open} |`
    ])
  ].join("\n")
}

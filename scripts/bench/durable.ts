/**
 * Durable Streams appends: the same load against the protocol's reference server
 * (`@durable-streams/server`, in memory and file-backed) and against `sluice serve` on
 * a redis-server started for the run, each server in a process of its own, in one run.
 *
 * The load: `BENCH_DURABLE_STREAMS` streams (50), each with a writer that appends
 * `BENCH_DURABLE_APPENDS` (200) small bodies one after another and a live reader
 * (long-poll) that follows it from its start. Reported per server: appends per second,
 * the server's CPU per append (its process; for Sluice also the redis-server's), the
 * live delay from an append's request to its reader holding it (p50, p99), and then
 * `BENCH_DURABLE_CONCURRENT` (100) appenders at once on one stream: how many of their
 * requests failed (a reset connection, a refusal); `sluice serve` gets
 * `--max-streams-per-token` twice `BENCH_DURABLE_STREAMS`, its live reads taking a slot
 * of their token each, all of one token here. Ratios are Sluice's over the
 * reference's. `BENCH_DURABLE_SLUICE_BIN` runs another build of `sluice` (an older
 * checkout's `packages/cli/dist/bin.js`, for a before and after). A benchmark, never a
 * test.
 *
 * Then appends with subscriptions (`sluice serve` alone): at each of
 * `BENCH_DURABLE_SUBSCRIPTIONS` (0, 500, 2,000) pull-wake subscriptions on the pattern
 * `**` (made by `BENCH_DURABLE_SUB_TOKENS` tokens, 20, in turn), over
 * `BENCH_DURABLE_SUB_STREAMS` (20) streams: how long making them took, a first round
 * of one append a stream (each wakes every subscription), then
 * `BENCH_DURABLE_SUB_APPENDS` (100) appends one after another across the streams
 * (every subscription already woken, as an unclaimed pull-wake stays): their latency
 * and the server's CPU per append (its process and its redis-server's), and the server's
 * CPU while nothing is appended (the lease sweep). Each level on a server and key
 * prefix of its own. `BENCH_DURABLE_PARTS` picks `appends`, `subscriptions` or both
 * (the default).
 */
import { startRedisServer } from "@sluice/testing/redis"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { sluiceCommand } from "./harness.js"
import { processCpuSeconds } from "./processCpu.js"

const STREAMS = Number(process.env.BENCH_DURABLE_STREAMS ?? "50")
const APPENDS = Number(process.env.BENCH_DURABLE_APPENDS ?? "200")
const CONCURRENT = Number(process.env.BENCH_DURABLE_CONCURRENT ?? "100")
const TOKEN = "bench-durable-token"
const SUB_LEVELS = (process.env.BENCH_DURABLE_SUBSCRIPTIONS ?? "0,500,2000").split(",").map(Number)
const SUB_TOKENS = Number(process.env.BENCH_DURABLE_SUB_TOKENS ?? "20")
const SUB_STREAMS = Number(process.env.BENCH_DURABLE_SUB_STREAMS ?? "20")
const SUB_APPENDS = Number(process.env.BENCH_DURABLE_SUB_APPENDS ?? "100")
const PARTS = (process.env.BENCH_DURABLE_PARTS ?? "appends,subscriptions").split(",")

interface Server {
  readonly name: string
  readonly base: string
  readonly child: ChildProcess
  /** Other processes whose CPU counts as the server's (Sluice's redis-server). */
  readonly helpers: ReadonlyArray<number>
  readonly headers: Record<string, string>
}

interface Result {
  readonly name: string
  readonly appendsPerSecond: number
  readonly cpuMsPerAppend: number
  readonly p50: number
  readonly p99: number
  readonly seen: number
  readonly concurrentFailures: number
}

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const waitFor = async (url: string, headers: Record<string, string>): Promise<void> => {
  for (let i = 0; i < 600; i++) {
    try {
      const response = await fetch(url, { headers })
      await response.arrayBuffer()
      return
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  throw new Error(`${url} did not answer`)
}

const port = () => 20_000 + Math.floor(Math.random() * 20_000)

// The reference server in a process of its own (the module's own test server class).
const startReference = async (dataDir: string | undefined): Promise<Server> => {
  const listen = port()
  const source = `
    import { DurableStreamTestServer } from "@durable-streams/server"
    const server = new DurableStreamTestServer({ port: ${listen}, host: "127.0.0.1"${
    dataDir === undefined ? "" : `, dataDir: ${JSON.stringify(dataDir)}`
  } })
    await server.start()
    process.on("SIGTERM", () => server.stop().then(() => process.exit(0)))
  `
  const child = spawn(process.execPath, ["--input-type=module", "-e", source], { stdio: "ignore" })
  const base = `http://127.0.0.1:${listen}`
  await waitFor(`${base}/v1/stream/__bench_probe`, {})
  return {
    name: dataDir === undefined ? "@durable-streams/server, in memory" : "@durable-streams/server, file-backed",
    base,
    child,
    helpers: [],
    headers: {}
  }
}

const otherCli = process.env.BENCH_DURABLE_SLUICE_BIN
const cli = () => otherCli === undefined ? sluiceCommand() : { args: [otherCli], how: otherCli }

const startSluice = async (
  redisUrl: string,
  redisPid: number | undefined,
  tokens: ReadonlyArray<string> = [TOKEN]
): Promise<Server> => {
  const listen = port()
  const child = spawn(process.execPath, [
    ...cli().args,
    "serve",
    "--port",
    String(listen),
    "--host",
    "127.0.0.1",
    "--prefix",
    `bench-durable-${listen}`,
    // a live reader a stream, all with one token: the per-token slots (16) are not what this measures
    "--max-streams-per-token",
    String(Math.max(16, 2 * STREAMS))
  ], { env: { ...process.env, REDIS_URL: redisUrl, SLUICE_API_TOKENS: tokens.join(",") }, stdio: "ignore" })
  const headers = { authorization: `Bearer ${tokens[0]}` }
  const base = `http://127.0.0.1:${listen}`
  await waitFor(`${base}/healthz`, headers)
  return {
    name: `sluice serve (${cli().how}), redis-server`,
    base,
    child,
    helpers: redisPid === undefined ? [] : [redisPid],
    headers
  }
}

const cpuOf = async (server: Server): Promise<number> => {
  let total = 0
  for (const pid of [server.child.pid, ...server.helpers]) total += (await processCpuSeconds(pid)) ?? 0
  return total
}

const text = { "content-type": "text/plain" }

/** One stream: a live reader from its start and a writer of `APPENDS` bodies, each its send time. */
const oneStream = async (server: Server, name: string, delays: Array<number>): Promise<number> => {
  const url = `${server.base}/v1/stream/${name}`
  const created = await fetch(url, { method: "PUT", headers: { ...server.headers, ...text } })
  await created.arrayBuffer()
  if (created.status !== 201 && created.status !== 200) throw new Error(`PUT ${url}: ${created.status}`)
  let seen = 0
  const reader = (async () => {
    let offset = "-1"
    let rest = ""
    while (seen < APPENDS) {
      const response = await fetch(`${url}?offset=${offset}&live=long-poll`, { headers: server.headers })
      const body = await response.text()
      const now = performance.now()
      offset = response.headers.get("stream-next-offset") ?? offset
      if (response.status !== 200) continue
      const lines = (rest + body).split("\n")
      rest = lines.pop() ?? ""
      for (const line of lines) {
        if (line === "") continue
        delays.push(now - Number(line))
        seen++
      }
    }
  })()
  for (let i = 0; i < APPENDS; i++) {
    const response = await fetch(url, {
      method: "POST",
      headers: { ...server.headers, ...text },
      body: `${performance.now()}\n`
    })
    await response.arrayBuffer()
    if (response.status !== 204 && response.status !== 200) throw new Error(`POST ${url}: ${response.status}`)
  }
  await reader
  return seen
}

/** `CONCURRENT` appenders at once on one stream: how many requests failed. */
const concurrent = async (server: Server): Promise<number> => {
  const url = `${server.base}/v1/stream/bench-concurrent`
  await (await fetch(url, { method: "PUT", headers: { ...server.headers, ...text } })).arrayBuffer()
  const outcomes = await Promise.all(
    Array.from(
      { length: CONCURRENT },
      (_, i) =>
        fetch(url, { method: "POST", headers: { ...server.headers, ...text }, body: `${i}\n` }).then(
          async (response) => {
            await response.arrayBuffer()
            return response.status === 204 || response.status === 200
          },
          () => false
        )
    )
  )
  return outcomes.filter((ok) => !ok).length
}

const measure = async (server: Server): Promise<Result> => {
  const delays: Array<number> = []
  const cpuBefore = await cpuOf(server)
  const start = performance.now()
  const seen = await Promise.all(
    Array.from({ length: STREAMS }, (_, i) => oneStream(server, `bench-${i}-${port()}`, delays))
  )
  const seconds = (performance.now() - start) / 1000
  const cpu = (await cpuOf(server)) - cpuBefore
  const total = STREAMS * APPENDS
  const sorted = delays.sort((a, b) => a - b)
  return {
    name: server.name,
    appendsPerSecond: total / seconds,
    cpuMsPerAppend: (cpu * 1000) / total,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    seen: seen.reduce((a, b) => a + b, 0),
    concurrentFailures: await concurrent(server)
  }
}

const stop = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

/** What one level of subscriptions measured. */
interface SubscriptionsResult {
  readonly subscriptions: number
  readonly createSeconds: number
  readonly firstRoundMs: number
  readonly mean: number
  readonly p50: number
  readonly p99: number
  readonly cpuMsPerAppend: number
  readonly idleCpuPercent: number
}

const expectStatus = async (response: Response, what: string, ok: ReadonlyArray<number>): Promise<void> => {
  await response.arrayBuffer()
  if (!ok.includes(response.status)) throw new Error(`${what}: ${response.status}`)
}

/** `count` tasks, at most `limit` at once. */
const inParallel = async (count: number, limit: number, task: (i: number) => Promise<void>): Promise<void> => {
  let next = 0
  await Promise.all(Array.from({ length: Math.min(limit, count) }, async () => {
    while (next < count) await task(next++)
  }))
}

/** One level: `count` subscriptions on `**`, then the appends. */
const withSubscriptions = async (server: Server, count: number, tokens: ReadonlyArray<string>) => {
  const stream = (i: number) => `${server.base}/v1/stream/subs/${i}`
  for (let i = 0; i < SUB_STREAMS; i++) {
    await expectStatus(await fetch(stream(i), { method: "PUT", headers: { ...server.headers, ...text } }), "PUT", [201])
  }
  const json = { ...server.headers, "content-type": "application/json" }
  await expectStatus(await fetch(`${server.base}/v1/stream/wakes`, { method: "PUT", headers: json }), "PUT", [201])
  const createStart = performance.now()
  await inParallel(count, 16, async (i) => {
    const response = await fetch(`${server.base}/v1/stream/__ds/subscriptions/bench-${i}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${tokens[i % tokens.length]}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "pull-wake", pattern: "**", wake_stream: "wakes" })
    })
    await expectStatus(response, `subscription ${i}`, [201])
  })
  const createSeconds = (performance.now() - createStart) / 1000
  const append = async (i: number) => {
    const start = performance.now()
    const response = await fetch(stream(i % SUB_STREAMS), {
      method: "POST",
      headers: { ...server.headers, ...text },
      body: `${i}\n`
    })
    await expectStatus(response, "POST", [204])
    return performance.now() - start
  }
  const firstStart = performance.now()
  for (let i = 0; i < SUB_STREAMS; i++) await append(i)
  const firstRoundMs = (performance.now() - firstStart) / SUB_STREAMS
  const idleBefore = await cpuOf(server)
  const idleStart = performance.now()
  await new Promise((resolve) => setTimeout(resolve, 3_000))
  const idleCpuPercent = ((await cpuOf(server)) - idleBefore) / ((performance.now() - idleStart) / 1000) * 100
  const cpuBefore = await cpuOf(server)
  const latencies: Array<number> = []
  for (let i = 0; i < SUB_APPENDS; i++) latencies.push(await append(i))
  const cpu = (await cpuOf(server)) - cpuBefore
  const sorted = [...latencies].sort((a, b) => a - b)
  return {
    subscriptions: count,
    createSeconds,
    firstRoundMs,
    mean: latencies.reduce((a, b) => a + b, 0) / latencies.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    cpuMsPerAppend: (cpu * 1000) / SUB_APPENDS,
    idleCpuPercent
  } satisfies SubscriptionsResult
}

/** The subscriptions part: each level on a `sluice serve` of its own. */
const subscriptionsPart = async (redisUrl: string, redisPid: number | undefined): Promise<string> => {
  const tokens = Array.from({ length: SUB_TOKENS }, (_, i) => `${TOKEN}-${i}`)
  const results: Array<SubscriptionsResult> = []
  let how = ""
  for (const count of SUB_LEVELS) {
    const server = await startSluice(redisUrl, redisPid, tokens)
    how = server.name
    try {
      results.push(await withSubscriptions(server, count, tokens))
    } finally {
      await stop(server.child)
    }
  }
  const row = (r: SubscriptionsResult) =>
    `| ${r.subscriptions} | ${r.createSeconds.toFixed(1)} s | ${r.firstRoundMs.toFixed(1)} ms | ${
      r.mean.toFixed(1)
    } / ${r.p50.toFixed(1)} / ${r.p99.toFixed(1)} ms | ${r.cpuMsPerAppend.toFixed(2)} | ${
      r.idleCpuPercent.toFixed(1)
    }% |`
  return [
    `\n## Durable Streams: appends with subscriptions (${how})`,
    "",
    `Pull-wake subscriptions on \`**\` over ${SUB_STREAMS} streams, made by ${SUB_TOKENS} tokens in turn; the ` +
    `first round appends once to each stream (every subscription is woken), then ${SUB_APPENDS} appends one ` +
    "after another (every subscription already woken, as an unclaimed pull-wake stays).",
    "",
    "| subscriptions | making them | first round, per append | appends: mean / p50 / p99 | server CPU ms/append | server CPU while idle |",
    "|---:|---:|---:|---:|---:|---:|",
    ...results.map(row),
    "",
    "Server CPU counts the server's process and its redis-server's."
  ].join("\n")
}

/** The durable section's Markdown. */
export const run = async (): Promise<string> => {
  const redis = await startRedisServer()
  try {
    const parts: Array<string> = []
    if (PARTS.includes("appends")) parts.push(await appendsPart(redis.url, redis.pid()))
    if (PARTS.includes("subscriptions")) parts.push(await subscriptionsPart(redis.url, redis.pid()))
    return parts.join("\n")
  } finally {
    await redis.close()
  }
}

/** The appends part: the reference servers and `sluice serve`. */
const appendsPart = async (redisUrl: string, redisPid: number | undefined): Promise<string> => {
  const results: Array<Result> = []
  const dataDir = mkdtempSync(join(tmpdir(), "sluice-bench-durable-"))
  try {
    for (
      const start of [
        () => startReference(undefined),
        () => startReference(dataDir),
        () => startSluice(redisUrl, redisPid)
      ]
    ) {
      const server = await start()
      try {
        results.push(await measure(server))
      } finally {
        await stop(server.child)
      }
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
  const fileBacked = results[1]!
  const sluice = results[2]!
  const row = (r: Result) =>
    `| ${r.name} | ${r.appendsPerSecond.toFixed(0)} | ${r.cpuMsPerAppend.toFixed(2)} | ${r.p50.toFixed(1)} ms | ${
      r.p99.toFixed(1)
    } ms | ${r.seen} of ${STREAMS * APPENDS} | ${r.concurrentFailures} of ${CONCURRENT} |`
  return [
    `\n## Durable Streams appends: ${STREAMS} streams x ${APPENDS} sequential appends, a live reader each`,
    "",
    "| server | appends/s | server CPU ms/append | live p50 | live p99 | appends the readers saw | failed of the concurrent appends |",
    "|---|---:|---:|---:|---:|---:|---:|",
    ...results.map(row),
    "",
    `Sluice against the file-backed reference: ${
      (sluice.appendsPerSecond / fileBacked.appendsPerSecond).toFixed(2)
    }x the appends/s, ${(sluice.cpuMsPerAppend / fileBacked.cpuMsPerAppend).toFixed(2)}x the CPU per append, ` +
    `${(sluice.p99 / fileBacked.p99).toFixed(2)}x the live p99 (target: at least its throughput, at most its p99).`,
    "Live delay: from the append's request to its reader holding it. Server CPU counts the server's process (and " +
    "Sluice's redis-server); the bench's own process makes the load, so run it on a quiet machine."
  ].join("\n")
}

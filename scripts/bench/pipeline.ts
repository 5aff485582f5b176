/**
 * The whole pipeline under load: 1,000 concurrent turns of 500 text deltas
 * each, generated lazily per turn, through
 *
 *   TurnPipeline.run: Stream A -> Accumulator.accumulate -> UpsertStream.upserts -> Stream B
 *   (with each turn's liveness lease and the cancel follower, as an application runs it)
 *
 * into a real Redis (a throwaway `redis-server` on a free loopback port, no
 * persistence, or `REDIS_URL`), next to `redis-benchmark`'s pipelined XADD rate
 * measured against the same server in the same run; then the same through the
 * in-memory layer. Every turn is checked afterwards: Stream A holds every event,
 * Stream B ends at the stage's last message, and its last upsert's content is the
 * concatenation of the turn's deltas.
 *
 * Wall-clock time and `setInterval` are fine here: this is a script, never a test.
 */
import type { StreamBMessage, StreamEvent } from "@sluice/core"
import { Ids, StreamEvent as Events, Text, UIUpsert } from "@sluice/core"
import { TurnPipeline, TurnSource } from "@sluice/pipeline"
import { RedisStreams, RedisStreamsLive, RedisStreamsMemory } from "@sluice/redis"
import { startRedisServer } from "@sluice/testing/redis"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { spawn } from "node:child_process"
import { performance, PerformanceObserver } from "node:perf_hooks"
import * as PipelineFloor from "./pipelineFloor.js"
import { processCpuSeconds } from "./processCpu.js"

export const TURNS = Number(process.env.BENCH_PIPELINE_TURNS ?? 1000)
export const DELTAS = Number(process.env.BENCH_PIPELINE_DELTAS ?? 500)
/** Events per upstream chunk, as a provider decoder hands them on per network read. */
export const CHUNK = Number(process.env.BENCH_PIPELINE_CHUNK ?? 32)
const PREFIX = "bench"

// Delta lengths cycle through 1..29 characters (about 15 on average, ~4 tokens).
const deltaText = (i: number) => "abcdefghijklmnopqrstuvwxyz0123".slice(0, 1 + ((i * 7) % 29))

export interface Turn {
  readonly turnId: string
  readonly index: number
}

const expectedContent = (turn: Turn): string => {
  let content = ""
  for (let i = 0; i < DELTAS; i++) content += deltaText(i + turn.index)
  return content
}

/** A turn's events, made one at a time as the stream pulls them. */
export function* turnEvents(turn: Turn): Generator<StreamEvent.StreamEvent> {
  const runId = Ids.generateEventId()
  const at = (payload: StreamEvent.Payload) => Events.envelope({ runId }, payload, Ids.generateEventId(), Date.now())
  const itemId = `item_${turn.index}`
  yield at({
    type: "response_start",
    response_id: runId,
    turn_id: turn.turnId,
    thread_id: Ids.generateEventId(),
    model_id: "bench",
    provider_id: "bench",
    created_at: 0
  })
  yield at({ type: "item_start", item_id: itemId, item_type: "message" })
  let content = ""
  for (let i = 0; i < DELTAS; i++) {
    const text = deltaText(i + turn.index)
    content = Text.append(content, text)
    yield at({ type: "item_delta", item_id: itemId, delta_content: text })
  }
  yield at({
    type: "item_done",
    item_id: itemId,
    final_item: { type: "message", id: itemId, content, origin: "agent" }
  })
  yield at({ type: "response_done", response_id: runId, status: "complete", finish_reason: "stop" })
}

export const eventsPerTurn = DELTAS + 4

/** One turn through the library's pipeline; the number of Stream B entries written. */
const publishTurn = (turn: Turn) =>
  Effect.map(
    TurnPipeline.run(
      { turnId: turn.turnId, threadId: Ids.generateEventId(), runId: Ids.generateEventId() },
      TurnSource.events(() => Stream.fromIteratorSucceed(turnEvents(turn), CHUNK))
    ),
    (result) => result.messages
  )

/** One turn's events alone, generated and drained: the load's own cost, no Sluice stage. */
const generateTurn = (turn: Turn) => Stream.runCount(Stream.fromIteratorSucceed(turnEvents(turn), CHUNK))

const decodeUpsert = Schema.decodeUnknownEffect(Schema.fromJsonString(UIUpsert.UIUpsert))

/** Checks one turn in Redis; a description of what is wrong, if anything. */
const checkTurn = (turn: Turn, upserts: number) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const events = yield* redis.xlen(TurnKeys.eventsKey(PREFIX, turn.turnId))
    if (events !== eventsPerTurn) return `turn ${turn.index}: Stream A has ${events} entries, not ${eventsPerTurn}`
    const entries = yield* redis.xrange(TurnKeys.upsertsKey(PREFIX, turn.turnId), "-", "+")
    // Stream B keeps each item's last upsert: its last entry is the stage's last message
    const lastId = entries.at(-1)?.id
    if (lastId !== `0-${upserts}`) {
      return `turn ${turn.index}: Stream B ends at ${lastId ?? "nothing"}, not 0-${upserts}`
    }
    const messages: Array<StreamBMessage.StreamBMessage> = []
    for (const entry of entries) messages.push(yield* TurnEntry.toStreamBMessage(entry))
    const last = messages.filter((message) => message.payloadType === "item_upsert").pop()
    if (last === undefined) return `turn ${turn.index}: Stream B has no upsert`
    const upsert = yield* decodeUpsert(last.payload)
    if (upsert.changeType !== "completed" || upsert.content !== expectedContent(turn)) {
      return `turn ${turn.index}: the last upsert (${upsert.changeType}) does not hold the turn's content`
    }
    return undefined
  })

/** Peak RSS and heap, sampled while `run` runs, and the time Node spent in GC pauses. */
const withPeakMemory = async <A>(run: () => Promise<A>) => {
  let rss = 0
  let heap = 0
  let gcMs = 0
  const sample = () => {
    const usage = process.memoryUsage()
    rss = Math.max(rss, usage.rss)
    heap = Math.max(heap, usage.heapUsed)
  }
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMs += entry.duration
  })
  gc.observe({ entryTypes: ["gc"] })
  sample()
  const timer = setInterval(sample, 20)
  try {
    const value = await run()
    sample()
    // GC entries are delivered on a timer turn of the event loop; let the last ones arrive.
    await new Promise((resolve) => setTimeout(resolve, 20))
    return { value, rss, heap, gcSeconds: gcMs / 1000 }
  } finally {
    clearInterval(timer)
    gc.disconnect()
  }
}

interface Row {
  readonly name: string
  readonly entries: number
  readonly seconds: number
  readonly rss: number
  readonly heap: number
  readonly nodeCpu: number
  readonly gcSeconds: number
  readonly redisCpu: number | undefined
  readonly check: string
}

/** Every turn at once through the pipeline on the given `RedisStreams`, then checked. */
const runPipeline = async (
  name: string,
  streams: Layer.Layer<RedisStreams.RedisStreams, unknown>,
  server: Server | undefined
): Promise<Row> => {
  const turns: Array<Turn> = Array.from({ length: TURNS }, (_, index) => ({ turnId: Ids.generateEventId(), index }))
  const layer = Layer.provideMerge(TurnPipeline.layer({ publisher: { prefix: PREFIX, indexTurns: true } }), streams)
  const program = Effect.gen(function*() {
    const redisBefore = yield* Effect.promise(() => server?.cpuSeconds() ?? Promise.resolve(undefined))
    const cpuBefore = process.cpuUsage()
    const start = performance.now()
    const counts = yield* Effect.forEach(turns, publishTurn, { concurrency: "unbounded" })
    const seconds = (performance.now() - start) / 1000
    const cpu = process.cpuUsage(cpuBefore)
    const redisAfter = yield* Effect.promise(() => server?.cpuSeconds() ?? Promise.resolve(undefined))
    const problems = yield* Effect.forEach(turns, (turn, i) => checkTurn(turn, counts[i]!), { concurrency: 16 })
    const wrong = problems.filter((problem) => problem !== undefined)
    const upserts = counts.reduce((a, b) => a + b, 0)
    return {
      seconds,
      nodeCpu: (cpu.user + cpu.system) / 1e6,
      redisCpu: redisBefore === undefined || redisAfter === undefined ? undefined : redisAfter - redisBefore,
      entries: TURNS * eventsPerTurn + upserts,
      check: wrong.length === 0
        ? `all ${TURNS} turns intact (${TURNS * eventsPerTurn} A + ${upserts} B entries)`
        : `${wrong.length} turns wrong, e.g. ${wrong[0]}`
    }
  }).pipe(Effect.provide(layer))
  const { gcSeconds, heap, rss, value } = await withPeakMemory(() => Effect.runPromise(program))
  return { name, ...value, rss, heap, gcSeconds }
}

/** Every turn's events generated and drained at once, without the pipeline. */
const runGenerator = async (): Promise<Row> => {
  const turns: Array<Turn> = Array.from({ length: TURNS }, (_, index) => ({ turnId: Ids.generateEventId(), index }))
  const program = Effect.gen(function*() {
    const cpuBefore = process.cpuUsage()
    const start = performance.now()
    const counts = yield* Effect.forEach(turns, generateTurn, { concurrency: "unbounded" })
    const seconds = (performance.now() - start) / 1000
    const cpu = process.cpuUsage(cpuBefore)
    const events = counts.reduce((a, b) => a + b, 0)
    return {
      seconds,
      nodeCpu: (cpu.user + cpu.system) / 1e6,
      redisCpu: undefined,
      entries: events,
      check: events === TURNS * eventsPerTurn ? `${events} events` : `${events} events, not ${TURNS * eventsPerTurn}`
    }
  })
  const { gcSeconds, heap, rss, value } = await withPeakMemory(() => Effect.runPromise(program))
  return { name: "the load's event generator alone (no Sluice stage)", ...value, rss, heap, gcSeconds }
}

// ---------------------------------------------------------------------------------
// redis-server and redis-benchmark

interface Server {
  readonly host: string
  readonly port: number
  readonly url: string
  /** CPU seconds the server has used, when it runs here. */
  readonly cpuSeconds: () => Promise<number | undefined>
  readonly stop: () => Promise<void>
}

// The tests' throwaway redis-server (loopback, a free port, a temporary directory, no
// persistence), with its CPU seconds read from /proc.
const startServer = async (): Promise<Server> => {
  const server = await startRedisServer()
  return {
    host: "127.0.0.1",
    port: server.port,
    url: server.url,
    cpuSeconds: () => processCpuSeconds(server.pid()),
    stop: server.close
  }
}

const serverOf = (url: string): Server => {
  const parsed = new URL(url)
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    url,
    cpuSeconds: () => Promise.resolve(undefined),
    stop: async () => {}
  }
}

/** `redis-benchmark ... --csv <command>`: requests per second, or why there is none. */
const redisBenchmark = (server: Server, command: ReadonlyArray<string>): Promise<number | string> =>
  new Promise((resolve) => {
    const args = [
      "-h",
      server.host,
      "-p",
      String(server.port),
      "-c",
      "50",
      "-n",
      "200000",
      "-P",
      "16",
      "--csv",
      ...command
    ]
    const child = spawn("redis-benchmark", args, { stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (data: Buffer) => (output += data.toString()))
    child.stderr.on("data", (data: Buffer) => (output += data.toString()))
    child.once("error", (error) => resolve(`redis-benchmark not run: ${error.message}`))
    child.once("exit", (code) => {
      // The last CSV line ends with rps and six latencies; the command before them may hold quotes.
      const match = /"([\d.]+)"(?:,"[\d.]+"){6}\s*$/.exec(output.trim())
      resolve(code === 0 && match !== null ? Number(match[1]) : `redis-benchmark failed (${code}): ${output.trim()}`)
    })
  })

// An entry shaped like a Stream A delta entry (five fields, ~300 bytes of payload JSON).
const sampleEntry = (): Array<string> => {
  const event = Events.envelope(
    { runId: Ids.generateEventId() },
    { type: "item_delta", item_id: "item_0", delta_content: "abcdefghijklmno" },
    Ids.generateEventId(),
    Date.now()
  )
  return [
    "eventId",
    event.event_id,
    "timestamp",
    String(event.timestamp),
    "turnId",
    Ids.generateEventId(),
    "payloadType",
    event.type,
    "payload",
    JSON.stringify(event)
  ]
}

const int = (n: number) => Math.round(n).toLocaleString("en-US")
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`

/** Runs the pipeline load test and returns its report. */
export const run = async (): Promise<string> => {
  const external = process.env.REDIS_URL
  const server = external === undefined ? await startServer() : serverOf(external)
  const lines: Array<string> = []
  try {
    const plain = await redisBenchmark(server, ["XADD", "bench:xadd", "*", "f", "v"])
    const shaped = await redisBenchmark(server, [
      "XADD",
      "bench:{shaped}",
      "MAXLEN",
      "~",
      "100000",
      "*",
      ...sampleEntry()
    ])
    const live = await runPipeline(
      "whole pipeline, Redis (RedisStreamsLive)",
      RedisStreamsLive.layer({ url: server.url }),
      server
    )
    // `BENCH_PIPELINE_MEMORY=0` leaves this case out: the store holds every entry of
    // every turn, which a run under a small heap (`--max-old-space-size`) cannot
    const memory = process.env.BENCH_PIPELINE_MEMORY === "0"
      ? undefined
      : await runPipeline("whole pipeline, in memory (RedisStreamsMemory)", RedisStreamsMemory.layer, undefined)
    const generator = await runGenerator()
    const floor = await PipelineFloor.run(server.host, server.port, TURNS, DELTAS, deltaText)
    const reference = typeof plain === "number" ? plain : undefined
    lines.push(
      `\n## Pipeline load: ${int(TURNS)} concurrent turns of ${DELTAS} deltas (chunks of ${CHUNK} events), ` +
        `Redis ${external === undefined ? "started for the run" : "from REDIS_URL"}`,
      "",
      "| case | entries/s | vs redis-benchmark -P 16 | seconds | Node CPU s | Node CPU µs/entry | Node GC s | redis-server CPU s | peak RSS | peak heap | check |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    )
    const ratio = (rate: number) => reference === undefined ? "n/a" : `${(rate / reference * 100).toFixed(1)}%`
    const bench = (name: string, result: number | string) =>
      typeof result === "number"
        ? lines.push(`| ${name} | ${int(result)} | ${ratio(result)} | | | | | | | | |`)
        : lines.push(`| ${name} | | | | | | | | | | ${result} |`)
    bench("redis-benchmark XADD k * f v (-c 50 -P 16)", plain)
    bench("redis-benchmark XADD, MAXLEN ~ and a Stream A-sized entry (-c 50 -P 16)", shaped)
    for (const row of memory === undefined ? [live, generator] : [live, memory, generator]) {
      const rate = row.entries / row.seconds
      const memoryCells = row === generator ? "| |" : `| ${mb(row.rss)} | ${mb(row.heap)} |`
      lines.push(
        `| ${row.name} | ${int(rate)} | ${ratio(rate)} | ${row.seconds.toFixed(2)} | ` +
          `${row.nodeCpu.toFixed(1)} | ${(row.nodeCpu / row.entries * 1e6).toFixed(1)} | ${
            row.gcSeconds.toFixed(1)
          } | ` +
          `${row.redisCpu === undefined ? "" : row.redisCpu.toFixed(1)} ${memoryCells} ${row.check} |`
      )
    }
    const floorRate = floor.entries / floor.seconds
    lines.push(
      `| the floor: a plain loop, prebuilt delta events -> JSON -> XADD pipelines on one socket (no stage, no Effect) | ` +
        `${int(floorRate)} | ${ratio(floorRate)} | ${floor.seconds.toFixed(2)} | ${floor.nodeCpu.toFixed(1)} | ` +
        `${
          (floor.nodeCpu / floor.entries * 1e6).toFixed(1)
        } | | | | | ${floor.replies} replies for ${floor.entries} entries |`
    )
    lines.push(
      "",
      `Entries are Stream A + Stream B entries written (one per event, one per upsert). Target: ` +
        `at least 40% of the redis-benchmark -P 16 rate` +
        (reference === undefined ? "." : `, ${int(reference * 0.4)} entries/s here: ` +
          `${live.entries / live.seconds >= reference * 0.4 ? "met" : "not met"}.`),
      `The generator row counts events, not entries: it is the part of every pipeline row's Node CPU that is ` +
        `the load itself (a provider's decoder in a real deployment). It runs last, so its memory is not shown.`,
      `CPU seconds are this process (all of Node: the pipeline, the event generator, the client) and the ` +
        `redis-server started for the run, while the turns are published; the machine may be shared, so ` +
        `they say more than the wall-clock rates. Node GC s is the time the main thread spent in GC pauses. ` +
        `Peak heap is sampled every 20 ms and counts garbage not yet collected.`
    )
  } finally {
    await server.stop()
  }
  return lines.join("\n")
}

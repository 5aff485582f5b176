/**
 * Live pace: N concurrent turns, each an OpenAI Chat Completions SSE body whose
 * content chunks arrive at 50 a second (a few characters to a few words each), through
 * the whole pipeline (`TurnPipeline.run` on `TurnSource.sse`: framing, normalizing,
 * Stream A, the fold, upserts, Stream B, each turn's lease) into a `redis-server`
 * started for the run. For each N: the delay from a chunk's due arrival to Redis
 * acknowledging its Stream A entry (p50, p99, max), the event loop's delay, Node's CPU
 * and peak RSS, and the largest N whose p99 stays under 100 ms.
 *
 * A chunk's arrival is the moment the network would have delivered it (the turn's
 * start + k x 20 ms), not the moment the pipeline pulled it, so a pipeline that falls
 * behind shows its backlog in the delay. Chunks are pushed into each turn's body by one
 * timer for all turns, as a socket's data callback would (see `Network`);
 * acknowledgements are seen by wrapping the
 * `RedisStreams` service's `XADD` pipelines. Real time is fine here: this is a script,
 * never a test. `BENCH_PACE_TURNS` (comma-separated levels) and `BENCH_PACE_SECONDS` set
 * the load; `BENCH_PACE_MODE=source` or `normalize` runs only the paced bodies, or the
 * bodies framed and normalized, to split Node's CPU per chunk when profiling.
 */
import { Ids } from "@sluice/core"
import { TurnPipeline, TurnSource } from "@sluice/pipeline"
import { RedisStreams, RedisStreamsLive } from "@sluice/redis"
import { TurnKeys } from "@sluice/turns"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { monitorEventLoopDelay, performance } from "node:perf_hooks"
import { startRedisServer } from "../../packages/redis/test/support/RedisServer.js"
import { processCpuSeconds } from "./processCpu.js"

/** The numbers of concurrent turns, one level each, in this order. */
const LEVELS = (process.env.BENCH_PACE_TURNS ?? "250,500,1000,2000,3000").split(",").map(Number)
/** How long each turn streams its content, in seconds. */
const SECONDS = Number(process.env.BENCH_PACE_SECONDS ?? 10)
/** Content chunks a second per turn. */
const RATE = 50
const PERIOD_MS = 1000 / RATE
/** Turns start spread over this long, as requests arrive. */
const STAGGER_MS = 1000
const PREFIX = "pace"
/** `pipeline` (default), or `source` / `normalize` for a part of it only. */
const MODE = process.env.BENCH_PACE_MODE ?? "pipeline"
/** p99 target, in milliseconds. */
const TARGET_MS = 100

const words = [
  "the",
  "stream",
  "of",
  "tokens",
  "arrives",
  "in",
  "small",
  "pieces,",
  "and",
  "Sluice",
  "turns",
  "each",
  "into",
  "events."
]

/** A chunk's text: a few characters (a word cut short) to a few words. */
const pieceText = (turn: number, k: number): string => {
  const n = (turn * 31 + k * 17) % 10
  const word = words[(turn + k * 7) % words.length]!
  if (n < 3) return word.slice(0, 2 + (n % 3))
  let text = ` ${word}`
  for (let i = 1; i < n - 4; i++) text += ` ${words[(turn + k + i * 5) % words.length]}`
  return text
}

const encoder = new TextEncoder()
const base = { id: "chatcmpl-pace", object: "chat.completion.chunk", created: 1, model: "gpt-4o" }
const sseChunk = (data: object) => encoder.encode(`data: ${JSON.stringify({ ...base, ...data })}\n\n`)

// ---------------------------------------------------------------------------------
// Delay histogram: 0.1 ms buckets up to 60 s.

const BUCKETS = 600_000
class Histogram {
  readonly counts = new Uint32Array(BUCKETS + 1)
  total = 0
  max = 0
  add(ms: number) {
    const bucket = Math.min(BUCKETS, Math.max(0, Math.floor(ms * 10)))
    this.counts[bucket]!++
    this.total++
    if (ms > this.max) this.max = ms
  }
  percentile(p: number): number {
    const rank = Math.ceil(this.total * p)
    let seen = 0
    for (let i = 0; i <= BUCKETS; i++) {
      seen += this.counts[i]!
      if (seen >= rank) return (i + 1) / 10
    }
    return this.max
  }
}

/** One turn as the bench drives it: when its content chunks are due, how many were acknowledged. */
interface PacedTurn {
  readonly turnId: string
  readonly index: number
  start: number
  acked: number
}

/**
 * Delivers every turn's chunks as a network does: one timer (as one poll of the event
 * loop hands every socket its data) looks every `TICK_MS` for the chunks that are due
 * and pushes each into its turn's stream, the way a socket's `data` callback feeds a
 * response body. No fiber or timer per chunk: what the bench adds to the pipeline's
 * work is a callback and a queue, about what reading a real response costs.
 */
class Network {
  private readonly open = new Set<Delivery>()
  private timer: ReturnType<typeof setInterval> | undefined
  add(delivery: Delivery) {
    this.open.add(delivery)
    this.timer ??= setInterval(() => this.tick(), TICK_MS)
  }
  remove(delivery: Delivery) {
    this.open.delete(delivery)
    if (this.open.size === 0 && this.timer !== undefined) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }
  private tick() {
    const now = performance.now()
    for (const delivery of this.open) delivery.deliver(now)
  }
}

const TICK_MS = 2

interface Delivery {
  readonly deliver: (now: number) => void
}

/** A turn's body: a role chunk, `SECONDS x RATE` content chunks each due on its period, the end. */
const body = (network: Network, turn: PacedTurn, chunks: number): Stream.Stream<Uint8Array> =>
  Stream.callback<Uint8Array>((queue) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        let next = 0
        Queue.offerUnsafe(
          queue,
          sseChunk({ choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] })
        )
        const delivery: Delivery = {
          deliver: (now) => {
            while (next < chunks && turn.start + (next + 1) * PERIOD_MS <= now) {
              Queue.offerUnsafe(
                queue,
                sseChunk({
                  choices: [{ index: 0, delta: { content: pieceText(turn.index, next) }, finish_reason: null }]
                })
              )
              next++
            }
            if (next < chunks) return
            Queue.offerUnsafe(queue, sseChunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }))
            Queue.offerUnsafe(
              queue,
              sseChunk({
                choices: [],
                usage: { prompt_tokens: 100, completion_tokens: chunks, total_tokens: 100 + chunks }
              })
            )
            Queue.offerUnsafe(queue, encoder.encode("data: [DONE]\n\n"))
            Queue.endUnsafe(queue)
            network.remove(delivery)
          }
        }
        network.add(delivery)
        return delivery
      }),
      (delivery) => Effect.sync(() => network.remove(delivery))
    )
  )

/**
 * The `RedisStreams` in context, with every confirmed Stream A `item_delta` entry
 * recorded against its turn: the k-th delta of a turn is its k-th content chunk.
 */
const observed = (turns: Map<string, PacedTurn>, delays: Histogram) =>
  Layer.effect(
    RedisStreams.RedisStreams,
    Effect.map(RedisStreams.RedisStreams, (inner): RedisStreams.RedisStreamsService => {
      const record = (key: string, entries: ReadonlyArray<RedisStreams.XAddEntry>, ok: (i: number) => boolean) => {
        const turn = turns.get(key)
        if (turn === undefined) return
        const now = performance.now()
        for (let i = 0; i < entries.length; i++) {
          if (!ok(i)) continue
          const fields = entries[i]!.fields
          let delta = false
          for (const [field, value] of fields) if (field === "payloadType") delta = value === "item_delta"
          if (!delta) continue
          delays.add(now - (turn.start + (turn.acked + 1) * PERIOD_MS))
          turn.acked++
        }
      }
      return {
        ...inner,
        xadd: (key, entry, options) =>
          Effect.tap(inner.xadd(key, entry, options), () => Effect.sync(() => record(key, [entry], () => true))),
        xaddAll: (key, entries, options) =>
          Effect.tap(inner.xaddAll(key, entries, options), (results) =>
            Effect.sync(() => record(key, entries, (i) => results[i]?._tag === "Success")))
      }
    })
  )

interface Level {
  readonly turns: number
  readonly seconds: number
  readonly delays: Histogram
  readonly loopP50: number
  readonly loopP99: number
  readonly loopMax: number
  readonly nodeCpu: number
  readonly redisCpu: number | undefined
  readonly rss: number
  readonly offered: number
  readonly wrong: number
  readonly failures: ReadonlyArray<string>
  /** How many turns ended with each status other than `complete`. */
  readonly endings: ReadonlyMap<string, number>
}

const runLevel = async (url: string, pid: () => number | undefined, count: number): Promise<Level> => {
  const chunks = SECONDS * RATE
  const turns: Array<PacedTurn> = Array.from({ length: count }, (_, index) => ({
    turnId: Ids.generateEventId(),
    index,
    start: 0,
    acked: 0
  }))
  const byKey = new Map(turns.map((turn) => [TurnKeys.eventsKey(PREFIX, turn.turnId), turn]))
  const delays = new Histogram()
  const streams = Layer.provide(observed(byKey, delays), RedisStreamsLive.layerFrom({ url }))
  const layer = Layer.provideMerge(TurnPipeline.layer({ publisher: { prefix: PREFIX } }), streams)
  const network = new Network()
  const endings = new Map<string, number>()
  const oneTurn = (turn: PacedTurn) =>
    Effect.andThen(
      Effect.sleep((turn.index / count) * STAGGER_MS),
      Effect.suspend(() => {
        turn.start = performance.now()
        if (MODE === "source") return Stream.runDrain(body(network, turn, chunks))
        if (MODE === "normalize") {
          return Stream.runDrain(
            TurnSource.sse("openai-chat", body(network, turn, chunks))({
              turnId: turn.turnId,
              threadId: "t",
              runId: "r"
            })
          )
        }
        return Effect.map(
          TurnPipeline.run(
            { turnId: turn.turnId, threadId: Ids.generateEventId(), runId: Ids.generateEventId() },
            TurnSource.sse("openai-chat", body(network, turn, chunks))
          ),
          (result) => {
            if (result.turn.status === "complete") return
            const error = result.turn.errors[0]
            const ending = error === undefined
              ? result.turn.status
              : `${result.turn.status} (${error.code}: ${error.message})`
            endings.set(ending, (endings.get(ending) ?? 0) + 1)
          }
        )
      })
    )
  let rss = 0
  const sample = setInterval(() => (rss = Math.max(rss, process.memoryUsage().rss)), 50)
  const loop = monitorEventLoopDelay({ resolution: 10 })
  const program = Effect.gen(function*() {
    const redisBefore = yield* Effect.promise(() => processCpuSeconds(pid()))
    const cpuBefore = process.cpuUsage()
    const start = performance.now()
    loop.enable()
    const failures: Array<string> = []
    yield* Effect.forEach(
      turns,
      (turn) =>
        Effect.catchCause(
          oneTurn(turn),
          (cause) => Effect.sync(() => failures.push(Cause.pretty(cause).split("\n")[0] ?? ""))
        ),
      { concurrency: "unbounded", discard: true }
    )
    loop.disable()
    const seconds = (performance.now() - start) / 1000
    const cpu = process.cpuUsage(cpuBefore)
    const redisAfter = yield* Effect.promise(() => processCpuSeconds(pid()))
    return {
      failures,
      seconds,
      nodeCpu: (cpu.user + cpu.system) / 1e6,
      redisCpu: redisBefore === undefined || redisAfter === undefined ? undefined : redisAfter - redisBefore
    }
  }).pipe(Effect.provide(layer))
  try {
    const result = await Effect.runPromise(program)
    return {
      turns: count,
      ...result,
      delays,
      loopP50: loop.percentile(50) / 1e6,
      loopP99: loop.percentile(99) / 1e6,
      loopMax: loop.max / 1e6,
      rss,
      offered: count * chunks,
      endings,
      wrong: turns.filter((turn) => turn.acked !== chunks).length
    }
  } finally {
    clearInterval(sample)
  }
}

const ms = (value: number) => value < 10 ? value.toFixed(1) : Math.round(value).toLocaleString("en-US")

/** Runs the live-pace benchmark and returns its report. */
export const run = async (): Promise<string> => {
  const server = await startRedisServer()
  const lines = [
    `\n## Live pace: turns of ${SECONDS} s at ${RATE} content chunks/s (OpenAI Chat SSE) through TurnPipeline into Redis`,
    "",
    "| turns | deltas/s offered | p50 delay | p99 delay | max delay | loop delay p50 / p99 / max | Node CPU | Node CPU µs/delta | redis-server CPU | peak RSS | wall s | check |",
    "|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|"
  ]
  let best: number | undefined
  try {
    for (const count of LEVELS) {
      const level = await runLevel(server.url, server.pid, count)
      const p50 = level.delays.percentile(0.5)
      const p99 = level.delays.percentile(0.99)
      if (p99 < TARGET_MS && level.wrong === 0 && level.failures.length === 0) best = Math.max(best ?? 0, count)
      const cpuShare = level.nodeCpu / level.seconds
      lines.push(
        `| ${count.toLocaleString("en-US")} | ${(count * RATE).toLocaleString("en-US")} | ${ms(p50)} ms | ${
          ms(p99)
        } ms | ` +
          `${ms(level.delays.max)} ms | ${ms(level.loopP50)} / ${ms(level.loopP99)} / ${ms(level.loopMax)} ms | ` +
          `${(cpuShare * 100).toFixed(0)}% of a core | ${(level.nodeCpu / level.offered * 1e6).toFixed(1)} | ` +
          `${level.redisCpu === undefined ? "" : `${(level.redisCpu / level.seconds * 100).toFixed(0)}%`} | ` +
          `${(level.rss / 1024 / 1024).toFixed(0)} MB | ${level.seconds.toFixed(1)} | ` +
          `${
            level.wrong === 0
              ? `all ${level.delays.total.toLocaleString("en-US")} deltas acknowledged`
              : `${level.wrong} turns short`
          }` +
          `${level.failures.length === 0 ? "" : `; ${level.failures.length} turns failed, e.g. ${level.failures[0]}`}` +
          `${[...level.endings].map(([status, n]) => `; ${n} ended ${status}`).join("")} |`
      )
    }
  } finally {
    await server.close()
  }
  lines.push(
    "",
    `Delay: from a chunk's due arrival to Redis acknowledging its Stream A entry. Node CPU µs/delta counts all of ` +
      `Node's work (framing, normalizing, both streams, upserts, leases, the pacing timers) per content chunk. ` +
      `Largest N with p99 under ${TARGET_MS} ms: ${
        best === undefined ? "none of the levels run" : best.toLocaleString("en-US")
      }.`
  )
  return lines.join("\n")
}

/**
 * Live pace: N concurrent turns, each an OpenAI Chat Completions SSE body whose
 * content chunks arrive at 50 a second (a few characters to a few words each), through
 * the whole pipeline (`TurnPipeline.run`: framing, normalizing, Stream A, the fold,
 * upserts, Stream B, each turn's lease) into a `redis-server` started for the run.
 *
 * By default the load comes from outside (`paceOutside.ts`): a provider stand-in in
 * its own Node process (`paceProvider.ts`) serves the N bodies over loopback HTTP,
 * one timer pacing all of them, and each turn's source is made as `sluice run` makes
 * it (`ProviderClient` on `FetchHttpClient`, `TurnSource.events`), so Node's HTTP
 * client is in the measured process and the pacing timer is not.
 * `BENCH_PACE_LOAD=inprocess` makes the bodies in the measured process instead
 * (`paceInProcess.ts`, no HTTP).
 *
 * For each N: the delay from a chunk's write on the stand-in's socket (in process: its
 * due time) to Redis acknowledging its Stream A entry (p50, p99, max), how late the
 * stand-in wrote (after the chunk was due), the event loop's delay, the measured
 * process's CPU (per content chunk), the CPU of `redis-server` and of the stand-in
 * (from /proc), peak RSS, the 1-minute load average, how every turn ended, and the
 * largest N whose p99 stays under 100 ms. Both processes take times on the machine's
 * monotonic clock (`monoNow`); the stand-in reports its write times once a level is
 * over, so nothing crosses between the processes per chunk but the body.
 * Acknowledgements are seen by wrapping the `RedisStreams` service's XADD pipelines:
 * the k-th acknowledged `item_delta` of a turn is its k-th content chunk.
 *
 * Real time is fine here: this is a script, never a test. `BENCH_PACE_TURNS`
 * (comma-separated levels) and `BENCH_PACE_SECONDS` set the load, after a warm-up level of
 * `BENCH_PACE_WARMUP` turns (50; 0 for none) that is not reported;
 * `BENCH_PACE_MODE=source` drains each turn's source without the pipeline (no Redis
 * writes, so no delays), to split the CPU when profiling.
 */
import { Ids } from "@sluice/core"
import { TurnAdmission, TurnPipeline } from "@sluice/pipeline"
import { RedisStreams, RedisStreamsLive } from "@sluice/redis"
import { startRedisServer } from "@sluice/testing/redis"
import { TurnKeys } from "@sluice/turns"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { loadavg } from "node:os"
import { monitorEventLoopDelay } from "node:perf_hooks"
import * as PaceInProcess from "./paceInProcess.js"
import type { Load } from "./paceLoad.js"
import * as PaceOutside from "./paceOutside.js"
import { monoNow, RATE } from "./paceShared.js"
import { Histogram, ms } from "./paceStats.js"
import { processCpuSeconds } from "./processCpu.js"

/** The numbers of concurrent turns, one level each, in this order. */
const LEVELS = (process.env.BENCH_PACE_TURNS ?? "250,500,1000,2000,3000").split(",").map(Number)
/** How long each turn streams its content, in seconds. */
const SECONDS = Number(process.env.BENCH_PACE_SECONDS ?? 10)
const CHUNKS = SECONDS * RATE
/** Turns start spread over this long, as requests arrive (`BENCH_PACE_STAGGER_MS`). */
const STAGGER_MS = Number(process.env.BENCH_PACE_STAGGER_MS ?? 1000)
/**
 * The pipeline's limits (`TurnAdmission`), from `BENCH_PACE_MAX_TURNS` and
 * `BENCH_PACE_MAX_LAG_MS`; none by default. A turn refused ends `refused (<limit>)`,
 * its body never asked for, and the delays are those of the turns admitted.
 */
const LIMITS = {
  ...(process.env.BENCH_PACE_MAX_TURNS === undefined ? {} : { maxTurns: Number(process.env.BENCH_PACE_MAX_TURNS) }),
  ...(process.env.BENCH_PACE_MAX_LAG_MS === undefined ? {} : { maxLagMs: Number(process.env.BENCH_PACE_MAX_LAG_MS) })
}
const PREFIX = "pace"
/** `pipeline` (default), or `source` for the turns' sources alone. */
const MODE = process.env.BENCH_PACE_MODE ?? "pipeline"
/** `outside` (default) or `inprocess`. */
const LOAD = process.env.BENCH_PACE_LOAD ?? "outside"
/** Turns of a first level run only to warm up (JIT, connections), not reported; 0 for none. */
const WARMUP = Number(process.env.BENCH_PACE_WARMUP ?? 50)
/** p99 target, in milliseconds. */
const TARGET_MS = 100

/** One turn as the bench sees it: how many of its content chunks Redis acknowledged, and when. */
interface PacedTurn {
  readonly turnId: string
  readonly index: number
  acked: number
}

/**
 * The `RedisStreams` in context, with the time of every confirmed Stream A
 * `item_delta` entry noted against its turn (`acks[index x CHUNKS + k]`).
 */
const observed = (turns: Map<string, PacedTurn>, acks: Float64Array) =>
  Layer.effect(
    RedisStreams.RedisStreams,
    Effect.map(RedisStreams.RedisStreams, (inner): RedisStreams.RedisStreamsService => {
      const record = (key: string, entries: ReadonlyArray<RedisStreams.XAddEntry>, ok: (i: number) => boolean) => {
        const turn = turns.get(key)
        if (turn === undefined) return
        const now = monoNow()
        for (let i = 0; i < entries.length; i++) {
          if (!ok(i)) continue
          let delta = false
          for (const [field, value] of entries[i]!.fields) if (field === "payloadType") delta = value === "item_delta"
          if (!delta) continue
          if (turn.acked < CHUNKS) acks[turn.index * CHUNKS + turn.acked] = now
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
  readonly lateness: Histogram
  readonly loopP50: number
  readonly loopP99: number
  readonly loopMax: number
  readonly nodeCpu: number
  readonly redisCpu: number | undefined
  readonly loadCpu: number | undefined
  readonly rss: number
  readonly offered: number
  readonly wrong: number
  /** Turns the pipeline refused (its limits); their chunks are never written. */
  readonly refused: number
  readonly unsent: number
  readonly requests: number | undefined
  readonly aborted: number
  readonly loadAverage: number
  /** How many turns ended each way: `complete`, another status (with its first error), or failed. */
  readonly endings: ReadonlyMap<string, number>
}

const cpuDelta = (before: number | undefined, after: number | undefined) =>
  before === undefined || after === undefined ? undefined : after - before

const runLevel = async (load: Load, url: string, redisPid: number | undefined, count: number): Promise<Level> => {
  const turns: Array<PacedTurn> = Array.from({ length: count }, (_, index) => ({
    turnId: Ids.generateEventId(),
    index,
    acked: 0
  }))
  const byKey = new Map(turns.map((turn) => [TurnKeys.eventsKey(PREFIX, turn.turnId), turn]))
  const acks = new Float64Array(count * CHUNKS).fill(NaN)
  const streams = Layer.provide(observed(byKey, acks), RedisStreamsLive.layer({ url }))
  const layer = Layer.provideMerge(TurnPipeline.layer({ publisher: { prefix: PREFIX }, ...LIMITS }), streams)
  const endings = new Map<string, number>()
  const ended = (ending: string) => endings.set(ending, (endings.get(ending) ?? 0) + 1)
  const oneTurn = (turn: PacedTurn) =>
    Effect.andThen(
      Effect.sleep((turn.index / count) * STAGGER_MS),
      Effect.suspend(() => {
        const context = { turnId: turn.turnId, threadId: Ids.generateEventId(), runId: Ids.generateEventId() }
        const source = load.source(turn.index)
        if (MODE === "source") return Effect.map(Stream.runDrain(source(context)), () => void ended("drained"))
        return TurnPipeline.run(context, source).pipe(
          Effect.map((result) => {
            const error = result.turn.errors[0]
            ended(error === undefined ? result.turn.status : `${result.turn.status} (${error.code}: ${error.message})`)
          }),
          Effect.catchIf(
            (error): error is TurnAdmission.AtCapacity => error instanceof TurnAdmission.AtCapacity,
            (refused) => Effect.sync(() => void ended(`refused (${refused.limit})`))
          )
        )
      })
    )
  let rss = 0
  const sample = setInterval(() => (rss = Math.max(rss, process.memoryUsage().rss)), 50)
  const loop = monitorEventLoopDelay({ resolution: 10 })
  const program = Effect.gen(function*() {
    const redisBefore = yield* Effect.promise(() => processCpuSeconds(redisPid))
    const loadBefore = yield* Effect.promise(() => processCpuSeconds(load.pid))
    const cpuBefore = process.cpuUsage()
    const start = monoNow()
    loop.enable()
    yield* Effect.forEach(
      turns,
      (turn) =>
        Effect.catchCause(
          oneTurn(turn),
          (cause) => Effect.sync(() => void ended(`failed (${Cause.pretty(cause).split("\n")[0] ?? ""})`))
        ),
      { concurrency: "unbounded", discard: true }
    )
    loop.disable()
    const seconds = (monoNow() - start) / 1000
    const cpu = process.cpuUsage(cpuBefore)
    const redisAfter = yield* Effect.promise(() => processCpuSeconds(redisPid))
    const loadAfter = yield* Effect.promise(() => processCpuSeconds(load.pid))
    return {
      seconds,
      nodeCpu: (cpu.user + cpu.system) / 1e6,
      redisCpu: cpuDelta(redisBefore, redisAfter),
      loadCpu: cpuDelta(loadBefore, loadAfter)
    }
  }).pipe(Effect.provide(layer))
  try {
    const result = await Effect.runPromise(program)
    const loadAverage = loadavg()[0]!
    const sent = await load.sent(count)
    const delays = new Histogram()
    const lateness = new Histogram()
    let unsent = 0
    for (let i = 0; i < count * CHUNKS; i++) {
      const time = sent.times[i]!
      if (Number.isNaN(time)) {
        unsent++
        continue
      }
      lateness.add(time - sent.due[i]!)
      const ack = acks[i]!
      if (!Number.isNaN(ack)) delays.add(ack - time)
    }
    return {
      turns: count,
      ...result,
      delays,
      lateness,
      loopP50: loop.percentile(50) / 1e6,
      loopP99: loop.percentile(99) / 1e6,
      loopMax: loop.max / 1e6,
      rss,
      offered: count * CHUNKS,
      unsent,
      requests: sent.requests,
      aborted: sent.aborted,
      loadAverage,
      endings,
      refused: [...endings].reduce((sum, [ending, n]) => ending.startsWith("refused") ? sum + n : sum, 0),
      wrong: turns.filter((turn) => turn.acked !== CHUNKS).length
    }
  } finally {
    clearInterval(sample)
  }
}

const share = (cpu: number | undefined, seconds: number) =>
  cpu === undefined ? "" : `${(cpu / seconds * 100).toFixed(0)}%`

/** Percentiles and the maximum of a histogram, `p50 / p99 / max ms`; empty without samples. */
const spread = (histogram: Histogram, percentiles: ReadonlyArray<number>): string =>
  histogram.total === 0
    ? ""
    : `${[...percentiles.map((p) => histogram.percentile(p)), histogram.max].map(ms).join(" / ")} ms`

const row = (level: Level): string => {
  const endings = [...level.endings].sort((a, b) => b[1] - a[1]).map(([ending, n]) => `${n} ${ending}`).join("; ")
  const checks = [
    MODE === "source" ? "" : level.wrong === level.refused
      ? `all ${level.delays.total.toLocaleString("en-US")} deltas ${
        level.refused === 0 ? "" : "of admitted turns "
      }acknowledged`
      : `${level.wrong - level.refused} turns short`,
    level.unsent === level.refused * CHUNKS
      ? ""
      : `${(level.unsent - level.refused * CHUNKS).toLocaleString("en-US")} chunks never written`,
    level.requests === undefined || level.requests === level.turns ? "" : `${level.requests} requests`,
    level.aborted === 0 ? "" : `${level.aborted} bodies aborted`
  ].filter((check) => check !== "")
  return `| ${level.turns.toLocaleString("en-US")} | ${(level.turns * RATE).toLocaleString("en-US")} | ` +
    `${spread(level.delays, [0.5, 0.99])} | ${LOAD === "inprocess" ? "" : spread(level.lateness, [0.99])} | ` +
    `${ms(level.loopP50)} / ${ms(level.loopP99)} / ${ms(level.loopMax)} ms | ` +
    `${share(level.nodeCpu, level.seconds)} | ` +
    `${(level.nodeCpu / (level.offered - level.refused * CHUNKS) * 1e6).toFixed(1)} | ` +
    `${share(level.redisCpu, level.seconds)} | ${share(level.loadCpu, level.seconds)} | ` +
    `${(level.rss / 1024 / 1024).toFixed(0)} MB | ${level.seconds.toFixed(1)} | ${level.loadAverage.toFixed(2)} | ` +
    `${endings} | ${checks.join("; ")} |`
}

/** Runs the live-pace benchmark and returns its report. */
export const run = async (): Promise<string> => {
  const server = await startRedisServer()
  const load = LOAD === "inprocess" ? PaceInProcess.make(CHUNKS) : await PaceOutside.make(CHUNKS)
  const lines = [
    `\n## Live pace: turns of ${SECONDS} s at ${RATE} content chunks/s (OpenAI Chat SSE) through TurnPipeline into Redis`,
    "",
    `Load: ${load.name}${MODE === "source" ? "; sources drained without the pipeline" : ""}` +
    `${STAGGER_MS === 1000 ? "" : `; turns started over ${STAGGER_MS / 1000} s`}` +
    `${Object.keys(LIMITS).length === 0 ? "" : `; the pipeline's limits ${JSON.stringify(LIMITS)}`}. ` +
    `Load average before: ${loadavg().map((value) => value.toFixed(2)).join(", ")}.`,
    "",
    "| turns | chunks/s offered | delay p50 / p99 / max | load lateness p99 / max | loop delay p50 / p99 / max | Node CPU | Node CPU µs/chunk | redis-server CPU | stand-in CPU | peak RSS | wall s | load avg (1 min) | turns ended | check |",
    "|---:|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|"
  ]
  let best: number | undefined
  try {
    if (WARMUP > 0) {
      const warm = await runLevel(load, server.url, server.pid(), WARMUP)
      lines.splice(
        4,
        0,
        `Warm-up first (not in the table): ${WARMUP} turns, ${
          [...warm.endings].map(([ending, n]) => `${n} ${ending}`).join("; ")
        }.`,
        ""
      )
    }
    for (const count of LEVELS) {
      const level = await runLevel(load, server.url, server.pid(), count)
      const clean = level.wrong === 0 && level.unsent === 0 && level.endings.get("complete") === count
      if (level.delays.percentile(0.99) < TARGET_MS && clean) best = Math.max(best ?? 0, count)
      lines.push(row(level))
    }
  } finally {
    await load.close()
    await server.close()
  }
  lines.push(
    "",
    `Delay: from a chunk's write on the stand-in's socket (in process: its due time) to Redis acknowledging its ` +
      `Stream A entry. Load lateness: how long after its due time the chunk was written. Loop delay as ` +
      `\`monitorEventLoopDelay\` (10 ms resolution) reports it: the interval of its timer, so 10 ms is a loop on time. CPU shares are of one core ` +
      `over the level's wall time; Node CPU µs/chunk counts all of the measured process's work (${
        LOAD === "inprocess" ? "the pacing timer" : "the HTTP client"
      }, framing, normalizing, both streams, upserts, leases) per content chunk of the turns admitted. ` +
      `Largest N with p99 under ${TARGET_MS} ms and every turn complete: ${
        best === undefined ? "none of the levels run" : best.toLocaleString("en-US")
      }.`
  )
  return lines.join("\n")
}

/**
 * The pipeline load stage by stage (`pnpm bench pipeline-stages`): the same 1,000
 * turns of 500 deltas as `pipeline`, generated the same way, run through a growing
 * prefix of the pipeline's stages, so that the difference between two rows is what one
 * stage costs (Node CPU per event); the last row is the library's `TurnPipeline.run`. The store confirms every entry and keeps none (the
 * in-memory layer with `xaddAll` answering each entry's own id), so neither Redis nor
 * a growing heap is in the figures; with `BENCH_STAGES_REDIS_URL` set, the live layer
 * on that Redis instead. `BENCH_STAGES=0,1` runs only the rows named (for profiling).
 */
import { Ids } from "@sluice/core"
import { TurnPipeline, TurnSource } from "@sluice/pipeline"
import { RedisStreams, RedisStreamsLive, RedisStreamsMemory } from "@sluice/redis"
import { TurnPublisher } from "@sluice/turns"
import { StreamBMessages, UpsertStream } from "@sluice/upserts"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { CHUNK, DELTAS, eventsPerTurn, type Turn, turnEvents, TURNS } from "./pipeline.js"

/** Which rows to run (their 0-based positions, comma-separated); all by default. */
const ONLY = process.env.BENCH_STAGES?.split(",").map(Number)

type Stage = (turn: Turn) => Stream.Stream<unknown, unknown, TurnPublisher.TurnPublisher | TurnPipeline.TurnPipeline>

const events = (turn: Turn) => Stream.fromIteratorSucceed(turnEvents(turn), CHUNK)

const stages: ReadonlyArray<readonly [string, Stage]> = [
  ["the generated events alone", events],
  ["+ publishEvents (Stream A)", (turn) => events(turn).pipe(TurnPublisher.publishEvents(turn.turnId))],
  [
    "+ UpsertStream.upserts",
    (turn) => events(turn).pipe(TurnPublisher.publishEvents(turn.turnId), UpsertStream.upserts())
  ],
  [
    "+ StreamBMessages.wrap",
    (turn) => events(turn).pipe(TurnPublisher.publishEvents(turn.turnId), UpsertStream.upserts(), StreamBMessages.wrap)
  ],
  [
    "+ publishUpserts (Stream B)",
    (turn) =>
      events(turn).pipe(
        TurnPublisher.publishEvents(turn.turnId),
        UpsertStream.upserts(),
        StreamBMessages.wrap,
        TurnPublisher.publishUpserts(turn.turnId)
      )
  ],
  ["the whole pipeline: TurnPipeline.run (+ fold, lease, endings)", (turn) =>
    Stream.fromEffect(
      TurnPipeline.run(
        { turnId: turn.turnId, threadId: Ids.generateEventId(), runId: Ids.generateEventId() },
        TurnSource.events(() => events(turn))
      )
    )],
  ["upserts alone (no publisher)", (turn) => events(turn).pipe(UpsertStream.upserts())]
]

// Confirms every entry under its own id and keeps nothing.
const discarding = Layer.effect(
  RedisStreams.RedisStreams,
  Effect.map(RedisStreams.RedisStreams, (memory): RedisStreams.RedisStreamsService => ({
    ...memory,
    xaddAll: (_key, entries) => Effect.succeed(entries.map((entry) => Result.succeed(entry.id)))
  }))
).pipe(Layer.provide(RedisStreamsMemory.layer))

const measure = async (stage: Stage): Promise<number> => {
  const turns: Array<Turn> = Array.from({ length: TURNS }, (_, index) => ({ turnId: Ids.generateEventId(), index }))
  const store = process.env.BENCH_STAGES_REDIS_URL === undefined
    ? discarding
    : RedisStreamsLive.layer({ url: process.env.BENCH_STAGES_REDIS_URL })
  const layer = Layer.provideMerge(
    Layer.merge(TurnPublisher.layer({ prefix: "stages" }), TurnPipeline.layer({ publisher: { prefix: "stages" } })),
    store
  )
  const program = Effect.forEach(turns, (turn) => Stream.runDrain(stage(turn)), {
    concurrency: "unbounded",
    discard: true
  })
  ;(globalThis as { gc?: () => void }).gc?.()
  const before = process.cpuUsage()
  await Effect.runPromise(Effect.provide(program, layer))
  const cpu = process.cpuUsage(before)
  return (cpu.user + cpu.system) / 1e6
}

/** Runs every prefix twice, alternating, and reports the better round of each. */
export const run = async (): Promise<string> => {
  const total = TURNS * eventsPerTurn
  const best = new Map<string, number>()
  for (let round = 0; round < 2; round++) {
    for (const [i, [name, stage]] of stages.entries()) {
      if (ONLY !== undefined && !ONLY.includes(i)) continue
      const cpu = await measure(stage)
      best.set(name, Math.min(best.get(name) ?? Infinity, cpu))
    }
  }
  const lines = [
    `\n## Pipeline stage by stage: ${TURNS} concurrent turns of ${DELTAS} deltas, ` +
    (process.env.BENCH_STAGES_REDIS_URL === undefined
      ? "a store that keeps nothing"
      : "the live layer on BENCH_STAGES_REDIS_URL"),
    "",
    "| prefix of the pipeline | Node CPU s | µs per event | the last stage's share, µs per event |",
    "|---|---:|---:|---:|"
  ]
  let previous = 0
  for (const [name] of stages) {
    const cpu = best.get(name)
    if (cpu === undefined) continue
    const perEvent = (cpu / total) * 1e6
    const alone = name.startsWith("upserts alone")
    lines.push(
      `| ${name} | ${cpu.toFixed(2)} | ${perEvent.toFixed(1)} | ${alone ? "" : (perEvent - previous).toFixed(1)} |`
    )
    if (!alone) previous = perEvent
  }
  return lines.join("\n")
}

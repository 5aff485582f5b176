/**
 * What a turn in flight holds in memory: N turns run through `TurnPipeline.run`, each
 * on an OpenAI Chat SSE body that is left waiting on the network, either before its
 * first byte or after its first 1,500 bytes (the turn begun, a tool call open). The
 * heap after a full GC with all of them in flight, less the heap before them, over N.
 * The store confirms every entry and keeps none, so what is counted is the pipeline's
 * own (plus, after the first bytes, the folded content of the turn). The fiber count
 * comes from the pipeline's structural test (`packages/pipeline/test/Structure.test.ts`).
 * Needs `--expose-gc` (as `pnpm bench` runs it).
 */
import { TurnContext, TurnPipeline, TurnSource } from "@sluice/pipeline"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"

/** Turns in flight per case. */
const TURNS = Number(process.env.BENCH_MEMORY_TURNS ?? 1000)

const head = new Uint8Array(
  readFileSync(join(process.cwd(), "packages", "pipeline", "test", "fixtures", "openai-chat-tools.sse"))
).slice(0, 1500)

// a store that confirms every entry and keeps none
const keepNone = Layer.effect(
  RedisStreams.RedisStreams,
  Effect.map(RedisStreamsMemory.make, (memory): RedisStreams.RedisStreamsService => ({
    ...memory,
    xaddAll: (_key, entries) => Effect.succeed(entries.map((entry) => Result.succeed(entry.id)))
  }))
)

const collect = (): number => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error("run with --expose-gc")
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

const perTurn = (firstBytes: boolean) =>
  Effect.gen(function*() {
    const pipeline = yield* TurnPipeline.TurnPipeline
    const start = (bytes: boolean) =>
      Effect.gen(function*() {
        const source = yield* Queue.unbounded<Uint8Array>()
        const context = yield* TurnContext.make({ turnId: randomUUID() })
        const fiber = yield* Effect.forkChild(
          pipeline.run(context, TurnSource.sse("openai-chat", Stream.fromQueue(source)))
        )
        if (bytes) yield* Queue.offer(source, head)
        return fiber
      })
    // one turn first, so that what every turn shares (code, caches) is there before
    const warm = yield* start(true)
    yield* Effect.sleep("200 millis")
    const before = collect()
    const running: Array<Fiber.Fiber<unknown, unknown>> = []
    for (let i = 0; i < TURNS; i++) running.push(yield* start(firstBytes))
    yield* Effect.sleep("2 seconds")
    const after = collect()
    yield* Fiber.interruptAll([warm, ...running])
    return (after - before) / TURNS
  }).pipe(
    Effect.provide(TurnPipeline.layer({ publisher: { prefix: "bench-memory" } }).pipe(Layer.provideMerge(keepNone)))
  )

/** Runs the section. */
export const run = async (): Promise<string> => {
  const waiting = await Effect.runPromise(perTurn(false))
  const begun = await Effect.runPromise(perTurn(true))
  const kb = (bytes: number) => (bytes / 1024).toFixed(1)
  return [
    `## Memory of a turn in flight: ${TURNS.toLocaleString("en-US")} turns, a store that keeps nothing`,
    "",
    "| turns waiting | heap per turn |",
    "|---|---:|",
    `| before their first byte | ${kb(waiting)} KB |`,
    `| after their first 1,500 bytes (a tool call open) | ${kb(begun)} KB |`,
    ""
  ].join("\n")
}

/**
 * A turn started in the pipeline's scope (`TurnPipeline.start`), as an HTTP handler
 * uses it: it returns at once; its events come as Stream A confirms them, the same
 * events in the same order; a reader that goes away leaves the turn running to its
 * end; and the pipeline's scope closing lets started turns run to their own end for
 * `graceMs`, then ends those still running `aborted`.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import { transcriptPath } from "@sluice/testing/fixtures"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { readFileSync } from "node:fs"
import { TurnContext, TurnPipeline, TurnSource } from "../src/index.js"

const prefix = "start-test"
const transcript = new Uint8Array(readFileSync(transcriptPath("anthropic-text.sse")))

// Stream A of a turn, decoded
const streamA = (turnId: string) =>
  Effect.flatMap(
    RedisStreams.RedisStreams.use((redis) => redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+")),
    (entries) => Effect.forEach(entries, TurnEntry.toStreamEvent)
  )

describe("TurnPipeline.start", () => {
  it.effect("gives the turn's events as Stream A confirms them, and its result", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make()
      const running = yield* TurnPipeline.start(context, TurnSource.sse("anthropic", Stream.make(transcript)))
      const read = yield* Stream.runCollect(running.events)
      const result = yield* running.result
      const written = yield* streamA(context.turnId)
      expect(result.turn.status).toBe("complete")
      expect(read.length).toBeGreaterThan(3)
      expect(read.map((event) => event.event_id)).toStrictEqual(written.map((event) => event.event_id))
      expect(read.at(-1)?.payload.type).toBe("response_done")
    }).pipe(
      Effect.provide(TurnPipeline.layer({ publisher: { prefix } }).pipe(Layer.provideMerge(RedisStreamsMemory.layer)))
    ))

  it.effect("gives the turn's Stream B entries as Redis holds them, to any number of readers", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make()
      const running = yield* TurnPipeline.start(context, TurnSource.sse("anthropic", Stream.make(transcript)))
      // read while the turn runs, and again once it has ended
      const during = yield* Stream.runCollect(running.upserts)
      yield* running.result
      const after = yield* Stream.runCollect(running.upserts)
      const held = yield* RedisStreams.RedisStreams.use((redis) =>
        redis.xrange(TurnKeys.upsertsKey(prefix, context.turnId), "-", "+")
      )
      expect(held.length).toBeGreaterThan(2)
      expect(after).toStrictEqual(held)
      // a reader during the turn also saw the upserts that later ones superseded (and
      // Redis then deleted), in order, and ended at the same last entry
      expect(held.every((entry) => during.some((seen) => seen.id === entry.id))).toBe(true)
      expect(during.map((entry) => entry.id)).toStrictEqual(
        [...during.map((entry) => entry.id)].sort((a, b) => Number(a.slice(2)) - Number(b.slice(2)))
      )
      expect(TurnEntry.isFinal(during.at(-1)!)).toBe(true)
      expect(during.at(-1)).toStrictEqual(held.at(-1))
    }).pipe(
      Effect.provide(TurnPipeline.layer({ publisher: { prefix } }).pipe(Layer.provideMerge(RedisStreamsMemory.layer)))
    ))

  it.effect("ends the turn cancelled on a cancel right after start, before the turn's fiber ran", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make()
      const source = TurnSource.sse("anthropic", Stream.concat(Stream.make(transcript.subarray(0, 400)), Stream.never))
      const running = yield* TurnPipeline.start(context, source)
      yield* running.cancel
      const result = yield* running.result
      expect(result.turn.status).toBe("cancelled")
      expect(result.stopped).toStrictEqual(Option.some("cancelled"))
    }).pipe(
      // no control stream: the cancel must find the turn in this process
      Effect.provide(
        TurnPipeline.layer({ publisher: { prefix }, followCancels: false }).pipe(
          Layer.provideMerge(RedisStreamsMemory.layer)
        )
      )
    ))

  it.effect("asked for once the pipeline has shut down: refused (shuttingDown), nothing of it written", () =>
    Effect.gen(function*() {
      const pipelineScope = yield* Scope.make()
      const pipeline = yield* TurnPipeline.make({ publisher: { prefix }, maxTurns: 1 }).pipe(
        Scope.provide(pipelineScope)
      )
      yield* Scope.close(pipelineScope, Exit.void)
      const context = yield* TurnContext.make()
      const refused = yield* Effect.flip(pipeline.start(context, TurnSource.sse("anthropic", Stream.make(transcript))))
      expect(refused).toMatchObject({ _tag: "AtCapacity", limit: "shuttingDown" })
      expect(yield* streamA(context.turnId)).toStrictEqual([])
      expect((yield* pipeline.load).full).toMatchObject({ limit: "shuttingDown", measured: 0 })
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("runs to its end when its reader goes away", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make()
      const running = yield* TurnPipeline.start(context, TurnSource.sse("anthropic", Stream.make(transcript)))
      const first = yield* Stream.runCollect(Stream.take(running.events, 2))
      expect(first.length).toBe(2)
      const result = yield* running.result
      expect(result.turn.status).toBe("complete")
      expect((yield* streamA(context.turnId)).at(-1)?.payload.type).toBe("response_done")
    }).pipe(
      Effect.provide(TurnPipeline.layer({ publisher: { prefix } }).pipe(Layer.provideMerge(RedisStreamsMemory.layer)))
    ))

  it.effect("ends a turn still running `aborted` when the pipeline's scope closes (no grace)", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make()
      const pipelineScope = yield* Scope.make()
      // no grace: a turn still running is ended at once
      const pipeline = yield* TurnPipeline.make({ publisher: { prefix }, graceMs: 0 }).pipe(
        Scope.provide(pipelineScope)
      )
      // the first bytes, then a provider that never sends another
      const source = TurnSource.sse("anthropic", Stream.concat(Stream.make(transcript.subarray(0, 400)), Stream.never))
      const running = yield* pipeline.start(context, source)
      const started = yield* Stream.runCollect(Stream.take(running.events, 1))
      expect(started[0]?.payload.type).toBe("response_start")
      yield* Scope.close(pipelineScope, Exit.void)
      const last = (yield* streamA(context.turnId)).at(-1)
      expect(last?.payload.type).toBe("response_done")
      expect(last?.payload.type === "response_done" ? last.payload.status : undefined).toBe("aborted")
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

describe("TurnPipeline.start, when the pipeline closes", () => {
  it.effect("lets started turns run to their own end for graceMs, then ends the rest aborted", () =>
    Effect.gen(function*() {
      const pipelineScope = yield* Scope.make()
      const pipeline = yield* TurnPipeline.make({ publisher: { prefix }, graceMs: 5_000, lease: false }).pipe(
        Scope.provide(pipelineScope)
      )
      // one provider that finishes 3 s after the close begins, one that never does
      const late = Stream.concat(
        Stream.make(transcript.subarray(0, 400)),
        Stream.fromEffect(Effect.as(Effect.sleep("3 seconds"), transcript.subarray(400)))
      )
      const never = Stream.concat(Stream.make(transcript.subarray(0, 400)), Stream.never)
      const finishing = yield* TurnContext.make()
      const stalled = yield* TurnContext.make()
      const first = yield* pipeline.start(finishing, TurnSource.sse("anthropic", late))
      const second = yield* pipeline.start(stalled, TurnSource.sse("anthropic", never))
      yield* Stream.runCollect(Stream.take(first.events, 1))
      yield* Stream.runCollect(Stream.take(second.events, 1))
      const closing = yield* Effect.forkChild(Scope.close(pipelineScope, Exit.void))
      yield* TestClock.adjust("3 seconds")
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(closing)
      const endOf = (turnId: string) =>
        Effect.map(streamA(turnId), (events) => {
          const last = events.at(-1)?.payload
          return last?.type === "response_done" ? last.status : last?.type
        })
      expect(yield* endOf(finishing.turnId)).toBe("complete")
      expect(yield* endOf(stalled.turnId)).toBe("aborted")
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

describe("TurnPipeline.shutdown", () => {
  it.effect("refuses new turns at once; every running turn, run or start, ends aborted within graceMs + drainMs", () =>
    Effect.gen(function*() {
      const pipelineScope = yield* Scope.make()
      const pipeline = yield* TurnPipeline.make({ publisher: { prefix }, graceMs: 4_000, drainMs: 2_000 }).pipe(
        Scope.provide(pipelineScope)
      )
      const never = Stream.concat(Stream.make(transcript.subarray(0, 400)), Stream.never)
      const started = yield* TurnContext.make()
      const ran = yield* TurnContext.make()
      const first = yield* pipeline.start(started, TurnSource.sse("anthropic", never))
      const second = yield* pipeline.run(ran, TurnSource.sse("anthropic", never)).pipe(Effect.forkChild)
      yield* Stream.runCollect(Stream.take(first.events, 1))
      while ((yield* streamA(ran.turnId)).length === 0) yield* Effect.yieldNow
      const shutting = yield* Effect.forkChild(pipeline.shutdown)
      yield* Effect.yieldNow
      // no new turn while it shuts down, and its load says why
      const refused = yield* Effect.flip(pipeline.start(yield* TurnContext.make(), TurnSource.sse("anthropic", never)))
      expect(refused).toMatchObject({ _tag: "AtCapacity", limit: "shuttingDown" })
      expect((yield* pipeline.load).full).toMatchObject({ limit: "shuttingDown", measured: 2 })
      // the grace, then each turn is stopped and writes its ending
      yield* TestClock.adjust("4 seconds")
      yield* Fiber.join(shutting)
      const ranResult = yield* Fiber.join(second)
      const startedResult = yield* first.result
      expect([ranResult.turn.status, startedResult.turn.status]).toStrictEqual(["aborted", "aborted"])
      const endOf = (turnId: string) =>
        Effect.map(streamA(turnId), (events) => {
          const last = events.at(-1)?.payload
          return last?.type === "response_done" ? last.status : last?.type
        })
      expect([yield* endOf(started.turnId), yield* endOf(ran.turnId)]).toStrictEqual(["aborted", "aborted"])
      // a second call, and the scope's close, wait for the first and do nothing more
      yield* pipeline.shutdown
      yield* Scope.close(pipelineScope, Exit.void)
      expect((yield* pipeline.load).turns).toBe(0)
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

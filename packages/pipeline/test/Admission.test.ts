/**
 * A pipeline's limit of turns (`maxTurns`, `TurnAdmission`): while that many turns
 * run, one more is refused at once with `AtCapacity` (from `start` and from `run`
 * alike), before anything of it is written or counted as a turn; a turn that ends,
 * however it ends, gives its place back; a limit that is not a positive integer is
 * refused when the pipeline is made.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import { TurnKeys, TurnMetrics } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Stream from "effect/Stream"
import * as FastCheck from "fast-check"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { TurnAdmission, TurnContext, TurnPipeline, TurnSource } from "../src/index.js"

const prefix = "admission-test"
const transcript = new Uint8Array(readFileSync(join(__dirname, "fixtures", "anthropic-text.sse")))
// a turn that has begun and then waits on its provider until it is stopped
const waiting = TurnSource.sse("anthropic", Stream.concat(Stream.make(transcript.subarray(0, 400)), Stream.never))
const complete = TurnSource.sse("anthropic", Stream.make(transcript))

const limited = (maxTurns: number) =>
  TurnPipeline.layer({ publisher: { prefix }, maxTurns }).pipe(Layer.provideMerge(RedisStreamsMemory.layer))

const refusedCount = Effect.map(Metric.value(TurnMetrics.turnsRefused), (state) => state.count)
const startedCount = Effect.map(Metric.value(TurnMetrics.turnsStarted), (state) => state.count)

// whether Redis holds anything of a turn: either stream, or its lease
const written = (turnId: string) =>
  RedisStreams.RedisStreams.use((redis) =>
    Effect.map(
      Effect.all([
        redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+"),
        redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")
      ]),
      ([events, upserts]) => events.length + upserts.length > 0
    )
  )

describe("TurnPipeline maxTurns", () => {
  it.effect("refuses one turn more than the limit, from start and from run, and writes nothing of it", () =>
    Effect.gen(function*() {
      const first = yield* TurnPipeline.start(yield* TurnContext.make(), waiting)
      const second = yield* TurnPipeline.start(yield* TurnContext.make(), waiting)
      const refusedBefore = yield* refusedCount
      const startedBefore = yield* startedCount

      const third = yield* TurnContext.make()
      const started = yield* Effect.flip(TurnPipeline.start(third, complete))
      expect(started).toBeInstanceOf(TurnAdmission.AtCapacity)
      expect(started).toMatchObject({ _tag: "AtCapacity", turnId: third.turnId, maxTurns: 2 })
      expect(started.message).toContain(third.turnId)
      expect(started.message).toContain("maxTurns")

      const fourth = yield* TurnContext.make()
      const ran = yield* Effect.exit(TurnPipeline.run(fourth, complete))
      expect(ran).toStrictEqual(Exit.fail(new TurnAdmission.AtCapacity({ turnId: fourth.turnId, maxTurns: 2 })))

      expect(yield* written(third.turnId)).toBe(false)
      expect(yield* written(fourth.turnId)).toBe(false)
      expect((yield* refusedCount) - refusedBefore).toBe(2)
      expect((yield* startedCount) - startedBefore).toBe(0)

      // the turns admitted ran on, untouched
      yield* first.cancel
      yield* second.cancel
      expect((yield* first.result).turn.status).toBe("cancelled")
      expect((yield* second.result).turn.status).toBe("cancelled")
    }).pipe(Effect.provide(limited(2))))

  it.effect("gives a place back when a turn ends: completed, cancelled, or interrupted", () =>
    Effect.gen(function*() {
      const pipeline = yield* TurnPipeline.TurnPipeline
      const isFull = Effect.map(
        Effect.exit(pipeline.start(yield* TurnContext.make(), complete)),
        (exit) => Exit.isFailure(exit)
      )
      // completed
      expect((yield* pipeline.run(yield* TurnContext.make(), complete)).turn.status).toBe("complete")
      // cancelled
      const cancelled = yield* pipeline.start(yield* TurnContext.make(), waiting)
      expect(yield* isFull).toBe(true)
      yield* cancelled.cancel
      yield* cancelled.result
      // interrupted: the running fiber of `run` is interrupted, the turn ends aborted
      const context = yield* TurnContext.make()
      const fiber = yield* Effect.forkChild(pipeline.run(context, waiting))
      yield* Effect.yieldNow
      yield* Effect.repeat(isFull, { until: (full) => full })
      yield* Fiber.interrupt(fiber)
      const admitted = yield* pipeline.start(yield* TurnContext.make(), complete)
      expect((yield* admitted.result).turn.status).toBe("complete")
    }).pipe(Effect.provide(limited(1))))

  it.effect(
    "admits exactly the limit of any number of turns asked for at once",
    () =>
      Effect.promise(() =>
        FastCheck.assert(
          FastCheck.asyncProperty(
            FastCheck.integer({ min: 1, max: 6 }),
            FastCheck.integer({ min: 0, max: 12 }),
            (maxTurns, asked) =>
              Effect.runPromise(
                Effect.gen(function*() {
                  const pipeline = yield* TurnPipeline.TurnPipeline
                  const exits = yield* Effect.forEach(
                    Array.from({ length: asked }),
                    () => Effect.flatMap(TurnContext.make(), (context) => Effect.exit(pipeline.start(context, waiting)))
                  )
                  const admitted = exits.filter(Exit.isSuccess)
                  expect(admitted.length).toBe(Math.min(maxTurns, asked))
                  expect(exits.slice(admitted.length).every(Exit.isFailure)).toBe(true)
                  // every admitted turn ends, and all the places are free again
                  yield* Effect.forEach(admitted, (exit) => Effect.andThen(exit.value.cancel, exit.value.result))
                  const again = yield* Effect.forEach(
                    Array.from({ length: maxTurns }),
                    () => Effect.flatMap(TurnContext.make(), (context) => pipeline.start(context, waiting))
                  )
                  yield* Effect.forEach(again, (running) => Effect.andThen(running.cancel, running.result))
                }).pipe(Effect.provide(limited(maxTurns)), Effect.scoped)
              )
          ),
          { numRuns: 25 }
        )
      ),
    60_000
  )

  it.effect("refuses a limit that is not a positive integer when the pipeline is made", () =>
    Effect.gen(function*() {
      for (const maxTurns of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        const made = yield* Effect.flip(Effect.scoped(TurnPipeline.make({ maxTurns })))
        expect(made).toBeInstanceOf(TurnAdmission.InvalidMaxTurns)
        expect(made.message).toBe(`maxTurns must be a positive integer, got ${maxTurns}`)
      }
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

/**
 * A pipeline's limits (`TurnAdmission`): while `maxTurns` turns run, or while the
 * process runs its timers later than `maxLagMs`, a new turn is refused at once with
 * `AtCapacity` (from `start` and from `run` alike), before anything of it is written
 * or counted as a turn; a turn that ends, however it ends, gives its place back; a
 * process whose timers are on time again takes turns again; a limit that is not a
 * positive integer is refused when the pipeline is made.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import { manualClock } from "@sluice/testing/clock"
import { transcriptPath } from "@sluice/testing/fixtures"
import { TurnKeys, TurnMetrics } from "@sluice/turns"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Stream from "effect/Stream"
import * as FastCheck from "fast-check"
import { readFileSync } from "node:fs"
import { TurnAdmission, TurnContext, TurnPipeline, TurnSource } from "../src/index.js"

const prefix = "admission-test"
const transcript = new Uint8Array(readFileSync(transcriptPath("anthropic-text.sse")))
// a turn that has begun and then waits on its provider until it is stopped
const waiting = TurnSource.sse("anthropic", Stream.concat(Stream.make(transcript.subarray(0, 400)), Stream.never))
const complete = TurnSource.sse("anthropic", Stream.make(transcript))

const limited = (maxTurns: number) =>
  TurnPipeline.layer({ publisher: { prefix }, maxTurns }).pipe(Layer.provideMerge(RedisStreamsMemory.layer))

const refusedCount = Effect.map(Metric.value(TurnMetrics.turnsRefused("maxTurns")), (state) => state.count)
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

// A pipeline with a lag limit of 1 s, made and used on a manual clock (the test sets
// its time and fires its timers), in a scope of its own.
const onManualClock = <A, E>(
  body: (
    pipeline: TurnPipeline.TurnPipelineService,
    manual: ReturnType<typeof manualClock>
  ) => Effect.Effect<A, E, RedisStreams.RedisStreams>
) =>
  Effect.suspend(() => {
    const manual = manualClock()
    return Effect.flatMap(
      TurnPipeline.make({ publisher: { prefix }, lease: false, maxLagMs: 1_000 }),
      (pipeline) => Effect.andThen(manual.settle, body(pipeline, manual))
    ).pipe(Effect.scoped, Effect.provideService(Clock.Clock, manual.clock), Effect.provide(RedisStreamsMemory.layer))
  })

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
      expect(started).toMatchObject({
        _tag: "AtCapacity",
        turnId: third.turnId,
        limit: "maxTurns",
        value: 2,
        measured: 2
      })
      expect(started.message).toContain(third.turnId)
      expect(started.message).toContain("maxTurns")

      const fourth = yield* TurnContext.make()
      const ran = yield* Effect.exit(TurnPipeline.run(fourth, complete))
      expect(ran).toStrictEqual(
        Exit.fail(new TurnAdmission.AtCapacity({ turnId: fourth.turnId, limit: "maxTurns", value: 2, measured: 2 }))
      )

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
      // asked only while the one place is taken: a turn admitted here would fail the test
      const isFull = Effect.flatMap(TurnContext.make(), (context) =>
        Effect.match(pipeline.start(context, complete), {
          onFailure: (error) => error._tag === "AtCapacity",
          onSuccess: () => false
        }))
      // completed
      expect((yield* pipeline.run(yield* TurnContext.make(), complete)).turn.status).toBe("complete")
      // cancelled
      const cancelled = yield* pipeline.start(yield* TurnContext.make(), waiting)
      expect(yield* isFull).toBe(true)
      yield* cancelled.cancel
      yield* cancelled.result
      // interrupted: the running fiber of `run` is interrupted, the turn ends aborted
      const context = yield* TurnContext.make()
      const begun = yield* Deferred.make<void>()
      const fiber = yield* Effect.forkChild(
        pipeline.run(context, waiting, { onEvents: () => Deferred.succeed(begun, undefined) })
      )
      yield* Deferred.await(begun)
      expect(yield* isFull).toBe(true)
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
                  for (const exit of exits.slice(admitted.length)) {
                    expect(Exit.isFailure(exit) ? Cause.squash(exit.cause) : exit).toBeInstanceOf(
                      TurnAdmission.AtCapacity
                    )
                  }
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

  it.effect("refuses a turn while the process runs its timers later than maxLagMs, whatever its turns", () =>
    onManualClock((pipeline, manual) =>
      Effect.gen(function*() {
        // the probe's first wake is due at 100 ms: at 1,050 ms it is 950 ms overdue
        yield* manual.setTime(1_050)
        const admitted = yield* pipeline.start(yield* TurnContext.make(), waiting)
        yield* manual.setTime(1_200)
        const context = yield* TurnContext.make()
        const lagRefusals = Effect.map(Metric.value(TurnMetrics.turnsRefused("maxLagMs")), (state) => state.count)
        const before = yield* lagRefusals
        const refused = yield* Effect.flip(pipeline.start(context, complete))
        expect((yield* lagRefusals) - before).toBe(1)
        expect(refused).toStrictEqual(
          new TurnAdmission.AtCapacity({ turnId: context.turnId, limit: "maxLagMs", value: 1_000, measured: 1_100 })
        )
        expect(refused.message).toBe(
          `turn ${context.turnId} refused: this process runs 1100 ms late, past its limit (maxLagMs 1000); ` +
            "try again later or on another process"
        )
        expect(yield* written(context.turnId)).toBe(false)
        yield* admitted.cancel
        expect((yield* admitted.result).turn.status).toBe("cancelled")
      })
    ))

  it.effect("takes turns again once its timers fire on time", () =>
    onManualClock((pipeline, manual) =>
      Effect.gen(function*() {
        const ask = Effect.flatMap(
          TurnContext.make(),
          (context) =>
            Effect.match(pipeline.start(context, waiting), {
              onFailure: (error) => error._tag === "AtCapacity" ? error.measured : Number.NaN,
              onSuccess: (running) => running
            })
        )
        // the probe's wake comes 4.9 s late: late until its next one
        yield* manual.setTime(5_000)
        yield* manual.fire
        expect(yield* ask).toBe(4_900)
        yield* manual.setTime(5_060)
        expect(yield* ask).toBe(4_900)
        // the next wake is on time: no longer late
        yield* manual.setTime(5_100)
        yield* manual.fire
        const admitted = yield* ask
        if (typeof admitted === "number") return expect.fail(`refused, ${admitted} ms late`)
        yield* admitted.cancel
        expect((yield* admitted.result).turn.status).toBe("cancelled")
      })
    ))

  it.effect("tells its load: the turns it runs, and the limit one more would meet", () =>
    Effect.gen(function*() {
      expect(yield* TurnPipeline.load).toStrictEqual({ turns: 0, lagMs: undefined, full: undefined })
      const first = yield* TurnPipeline.start(yield* TurnContext.make(), waiting)
      expect(yield* TurnPipeline.load).toStrictEqual({ turns: 1, lagMs: undefined, full: undefined })
      const second = yield* TurnPipeline.start(yield* TurnContext.make(), waiting)
      const full = yield* TurnPipeline.load
      expect(full).toStrictEqual({ turns: 2, lagMs: undefined, full: { limit: "maxTurns", value: 2, measured: 2 } })
      expect(TurnAdmission.describe(full.full!)).toBe("this process already runs 2 turns, its limit (maxTurns 2)")
      // a refusal is not a turn: the load is the same after one
      yield* Effect.flip(TurnPipeline.start(yield* TurnContext.make(), complete))
      expect(yield* TurnPipeline.load).toStrictEqual(full)
      yield* first.cancel
      yield* first.result
      expect(yield* TurnPipeline.load).toStrictEqual({ turns: 1, lagMs: undefined, full: undefined })
      yield* second.cancel
      yield* second.result
    }).pipe(Effect.provide(limited(2))))

  it.effect("tells how late it runs, and reports it as sluice_process_lag_seconds", () =>
    onManualClock((pipeline, manual) =>
      Effect.gen(function*() {
        const lag = Effect.map(Metric.value(TurnMetrics.processLag), (state) => state.value)
        expect(yield* pipeline.load).toStrictEqual({ turns: 0, lagMs: 0, full: undefined })
        // the probe's first wake, due at 100 ms, comes 300 ms late
        yield* manual.setTime(400)
        yield* manual.fire
        expect(yield* lag).toBe(0.3)
        expect(yield* pipeline.load).toStrictEqual({ turns: 0, lagMs: 300, full: undefined })
        // the next, due at 500 ms, is 1,100 ms overdue: past the limit before it wakes
        yield* manual.setTime(1_600)
        expect(yield* pipeline.load).toStrictEqual({
          turns: 0,
          lagMs: 1_100,
          full: { limit: "maxLagMs", value: 1_000, measured: 1_100 }
        })
        // and on time again once it wakes, then the next
        yield* manual.fire
        yield* manual.setTime(1_700)
        yield* manual.fire
        expect(yield* lag).toBe(0)
        expect(yield* pipeline.load).toStrictEqual({ turns: 0, lagMs: 0, full: undefined })
      })
    ))

  it.effect("refuses a limit that is not a positive integer when the pipeline is made", () =>
    Effect.gen(function*() {
      for (const limit of ["maxTurns", "maxLagMs"] as const) {
        for (const value of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
          const made = yield* Effect.flip(Effect.scoped(TurnPipeline.make({ [limit]: value })))
          expect(made).toStrictEqual(new TurnAdmission.InvalidLimit({ limit, value }))
          expect(made.message).toBe(`${limit} must be a positive integer, got ${value}`)
        }
      }
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

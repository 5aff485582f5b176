/**
 * What a turn in flight costs in fibers, counted (never timed): 200 turns, each with
 * its first bytes read and its source waiting on the network, hold at most 2 fibers
 * each (the turn's own, where its stages run fused, and its source's reader) beyond a
 * constant: the lease renewals, the fallback timers and the stop of every turn are
 * shared (`LeaseKeeper`, `TimerWheel`, the stop signal's hooks).
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import { TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { trackFibers } from "../../../scripts/trackFibers.js"
import { TurnContext, TurnPipeline, TurnSource } from "../src/index.js"

const prefix = "structure-test"
const pipeline = TurnPipeline.layer({ publisher: { prefix } }).pipe(Layer.provideMerge(RedisStreamsMemory.layer))
// the start of a streamed answer: the turn has begun and an item is open
const head = new Uint8Array(readFileSync(join(__dirname, "fixtures", "openai-chat-tools.sse"))).slice(0, 1500)

describe("a turn in flight", () => {
  it.effect("holds at most 2 fibers beyond a constant (200 turns)", () =>
    Effect.gen(function*() {
      const turns = 200
      const fibers = yield* trackFibers
      const pipeline = yield* TurnPipeline.TurnPipeline
      const redis = yield* RedisStreams.RedisStreams
      const before = yield* fibers.active
      const sources: Array<Queue.Queue<Uint8Array>> = []
      const running: Array<Fiber.Fiber<unknown, unknown>> = []
      const ids: Array<string> = []
      for (let i = 0; i < turns; i++) {
        const source = yield* Queue.unbounded<Uint8Array>()
        const context = yield* TurnContext.make({ turnId: randomUUID() })
        sources.push(source)
        ids.push(context.turnId)
        running.push(
          yield* Effect.forkChild(
            fibers.track(pipeline.run(context, TurnSource.sse("openai-chat", Stream.fromQueue(source))))
          )
        )
      }
      for (const source of sources) yield* Queue.offer(source, head)
      // every turn has read its bytes and written its first events
      const started = Effect.forEach(ids, (turnId) => redis.xlen(TurnKeys.eventsKey(prefix, turnId)))
      for (let round = 0; round < 10_000; round++) {
        if ((yield* started).every((length) => length > 0)) break
        yield* Effect.yieldNow
      }
      expect((yield* started).every((length) => length > 0)).toBe(true)
      const perTurn = ((yield* fibers.active) - before) / turns
      expect(perTurn).toBeGreaterThan(0)
      expect(perTurn).toBeLessThanOrEqual(2)
      yield* Fiber.interruptAll(running)
    }).pipe(Effect.provide(pipeline)), 60_000)
})

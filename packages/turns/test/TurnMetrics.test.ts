/**
 * The publisher's metrics: entries confirmed per stream, one latency sample a batch,
 * and a retry counted for each write that found Redis unavailable.
 */
import { describe, expect, it } from "@effect/vitest"
import * as RedisStreamsMemory from "@sluice/redis/RedisStreamsMemory"
import { faulty } from "@sluice/testing/redis"
import { streamEvents, upsertMessages } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as TurnMetrics from "../src/TurnMetrics.js"
import * as TurnPublisher from "../src/TurnPublisher.js"

const count = (metric: Metric.Counter<number>) => Effect.map(Metric.value(metric), (state) => state.count)
const samples = (metric: ReturnType<typeof TurnMetrics.publishLatency>) =>
  Effect.map(Metric.value(metric), (state) => state.count)

describe("TurnMetrics", () => {
  it.effect("a write that found Redis unavailable is a retry; confirmed entries are counted per stream", () => {
    const faults = faulty((call) => call === 0 ? "drop" : "pass")
    const layer = TurnPublisher.layer({ prefix: "metrics-test", retryBaseMs: 10, retryMaxMs: 10 }).pipe(
      Layer.provide(faults.layer),
      Layer.provide(RedisStreamsMemory.layer)
    )
    return Effect.gen(function*() {
      const turnId = "5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69"
      const before = {
        retries: yield* count(TurnMetrics.publishRetries("events")),
        a: yield* count(TurnMetrics.entries("events")),
        b: yield* count(TurnMetrics.entries("upserts")),
        latency: yield* samples(TurnMetrics.publishLatency("events"))
      }
      const fiber = yield* Stream.fromIterable(streamEvents(turnId, 5)).pipe(
        TurnPublisher.publishEvents(turnId),
        Stream.runDrain,
        Effect.forkChild
      )
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      yield* Stream.fromIterable(upsertMessages(turnId, 3)).pipe(TurnPublisher.publishUpserts(turnId), Stream.runDrain)
      expect((yield* count(TurnMetrics.publishRetries("events"))) - before.retries).toBe(1)
      expect((yield* count(TurnMetrics.entries("events"))) - before.a).toBe(5)
      expect((yield* count(TurnMetrics.entries("upserts"))) - before.b).toBe(3)
      // a latency sample for each batch Redis confirmed, none for the dropped one
      expect((yield* samples(TurnMetrics.publishLatency("events"))) - before.latency).toBe(1)
    }).pipe(Effect.provide(layer))
  })
})

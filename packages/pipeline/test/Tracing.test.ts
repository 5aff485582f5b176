/**
 * A replayed turn's trace context: every event carries the caller's traceparent, a bad
 * one is a typed error, and the turn metrics count the turn. The spans themselves,
 * captured through the `sluice` command's exporter, are tested in
 * `packages/cli/test/Tracing.test.ts` (the exporter moved there in 0.2.0).
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import { transcriptPath } from "@sluice/testing/fixtures"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"
import { TraceParent, TurnContext, TurnPipeline, TurnSource } from "../src/index.js"

const prefix = "tracing-test"
const transcript = new Uint8Array(readFileSync(transcriptPath("anthropic-text.sse")))
const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
const traceparent = `00-${traceId}-00f067aa0ba902b7-01`

describe("Tracing", () => {
  it.effect("events made elsewhere get the turn's trace context too", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make({ traceparent })
      const made = TurnSource.sse("anthropic", Stream.make(transcript))
      // a source that ignores the context's trace context
      const source = TurnSource.events(({ traceContext: _, ...ctx }) => made(ctx))
      yield* TurnPipeline.run(context, source)
      const redis = yield* RedisStreams.RedisStreams
      const entries = yield* redis.xrange(TurnKeys.eventsKey(prefix, context.turnId), "-", "+")
      const events = yield* Effect.forEach(entries, TurnEntry.toStreamEvent)
      expect(events.map((event) => event.trace_context.traceparent)).toStrictEqual(events.map(() => traceparent))
    }).pipe(
      Effect.provide(TurnPipeline.layer({ publisher: { prefix } }).pipe(Layer.provideMerge(RedisStreamsMemory.layer)))
    ))

  it.effect("a bad traceparent is a typed error naming it", () =>
    Effect.gen(function*() {
      const bad = yield* Effect.flip(TurnContext.make({ traceparent: "00-xyz-00f067aa0ba902b7-01" }))
      expect(bad._tag).toBe("InvalidTurnContext")
      expect(bad.message).toContain("traceparent")
      const zeros = yield* Effect.flip(TraceParent.parse(`00-${"0".repeat(32)}-00f067aa0ba902b7-01`))
      expect(zeros._tag).toBe("InvalidTraceParent")
      expect(zeros.message).toContain("trace id is all zeros")
      const version = yield* Effect.flip(TraceParent.parse(`ff-${traceId}-00f067aa0ba902b7-01`))
      expect(version.message).toContain("version ff")
      expect(yield* TraceParent.parse(traceparent)).toBe(traceparent)
    }))

  it.effect("the turn metrics count a turn: started, ended by status, events, entries per stream", () =>
    Effect.gen(function*() {
      const read = Effect.gen(function*() {
        const pairs = yield* Metric.snapshot
        const value = (name: string, tag?: readonly [string, string]) =>
          pairs
            .filter((pair) =>
              pair.id === name &&
              (tag === undefined || pair.attributes?.[tag[0]] === tag[1])
            )
            .reduce((sum, pair) => sum + ("count" in pair.state ? Number(pair.state.count) : 0), 0)
        return {
          started: value("sluice_turns_started_total"),
          complete: value("sluice_turns_ended_total", ["status", "complete"]),
          events: value("sluice_events_total"),
          a: value("sluice_stream_entries_total", ["stream", "events"]),
          b: value("sluice_stream_entries_total", ["stream", "upserts"]),
          latency: value("sluice_publish_latency_seconds")
        }
      })
      const before = yield* read
      const context = yield* TurnContext.make()
      const result = yield* TurnPipeline.run(context, TurnSource.sse("anthropic", Stream.make(transcript)))
      const after = yield* read
      const redis = yield* RedisStreams.RedisStreams
      const a = yield* redis.xlen(TurnKeys.eventsKey(prefix, context.turnId))
      expect(after.started - before.started).toBe(1)
      expect(after.complete - before.complete).toBe(1)
      expect(after.events - before.events).toBe(a)
      expect(after.a - before.a).toBe(a)
      expect(after.b - before.b).toBe(result.messages)
      expect(after.latency - before.latency).toBeGreaterThan(0)
    }).pipe(
      Effect.provide(TurnPipeline.layer({ publisher: { prefix } }).pipe(Layer.provideMerge(RedisStreamsMemory.layer)))
    ))
})

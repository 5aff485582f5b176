/**
 * The pipeline runs a turn's stages fused, as calls in one fiber; each stage also
 * stands alone as a `Stream` transformer. For random turns (1 to 4 streamed items,
 * their events interleaved, a random gradient) cut into random chunks, the fused run
 * writes exactly the entries that the composed stages write: the fold
 * (`Accumulator.accumulate`), Stream A (`TurnPublisher.events`), the upsert stage
 * (`UpsertStream.upserts`), the envelope (`StreamBMessages.wrap`) and Stream B
 * (`TurnPublisher.upserts`), on the same events. Entries are compared by type and
 * payload (a Stream B envelope's `eventId` is fresh in each run).
 */
import { describe, expect, it } from "@effect/vitest"
import { Accumulator } from "@sluice/accumulator"
import type { StreamEvent } from "@sluice/core"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import * as F from "@sluice/testing/fixtures"
import { turnArb } from "@sluice/testing/fixtures"
import { checkEffect } from "@sluice/testing/property"
import { TurnKeys, TurnPublisher } from "@sluice/turns"
import { StreamBMessages, UpsertStream } from "@sluice/upserts"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as FastCheck from "fast-check"
import { TurnContext, TurnPipeline, TurnSource } from "../src/index.js"

let serial = 0

interface Case {
  readonly events: ReadonlyArray<StreamEvent.StreamEvent>
  readonly cuts: ReadonlyArray<number>
  readonly gradient: ReadonlyArray<number>
}

/** A turn of 1-4 streamed items whose events interleave arbitrarily, cut into chunks anywhere. */
const caseArb: FastCheck.Arbitrary<Case> = turnArb.chain(({ events, gradient }) =>
  FastCheck.uniqueArray(FastCheck.integer({ min: 1, max: events.length }), { maxLength: 12 }).map((cuts) => ({
    events,
    gradient,
    cuts: [...cuts].sort((x, y) => x - y)
  }))
)

// The events cut into chunks at the given positions.
const chunked = (events: ReadonlyArray<StreamEvent.StreamEvent>, cuts: ReadonlyArray<number>) => {
  const chunks: Array<ReadonlyArray<StreamEvent.StreamEvent>> = []
  let from = 0
  for (const cut of [...cuts.filter((at) => at < events.length), events.length]) {
    if (cut > from) chunks.push(events.slice(from, cut))
    from = cut
  }
  return Stream.fromArrays(...chunks)
}

// A turn's two streams as written: each entry's type and payload.
const written = (prefix: string) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const entries = (stream: TurnKeys.TurnStream) =>
      Effect.map(
        redis.xrange(TurnKeys.streamKey(prefix, F.turnId, stream), "-", "+"),
        (all) => all.map((entry) => [entry.fields[3]?.[1], entry.fields[4]?.[1]])
      )
    return { events: yield* entries("events"), upserts: yield* entries("upserts") }
  })

describe("the fused turn", () => {
  it.effect("writes exactly what the composed stages write, for random turns and chunkings", () =>
    checkEffect(
      caseArb,
      ({ cuts, events, gradient }) =>
        Effect.gen(function*() {
          serial++
          const upserts = { turnId: F.turnId, threadId: F.threadId, batchGradient: gradient }
          const composedPrefix = `composed-${serial}`
          const fusedPrefix = `fused-${serial}`
          const publisher = yield* TurnPublisher.make({ prefix: composedPrefix })
          yield* chunked(events, cuts).pipe(
            Accumulator.accumulate,
            Stream.map((step) => step.event),
            publisher.events(F.turnId),
            UpsertStream.upserts(upserts),
            StreamBMessages.wrap,
            publisher.upserts(F.turnId),
            Stream.runDrain
          )
          const context = yield* TurnContext.make({ turnId: F.turnId, threadId: F.threadId, runId: F.runId })
          yield* Effect.scoped(Effect.gen(function*() {
            const pipeline = yield* TurnPipeline.make({
              publisher: { prefix: fusedPrefix },
              upserts: { batchGradient: gradient },
              lease: false,
              followCancels: false
            })
            yield* pipeline.run(context, TurnSource.events(() => chunked(events, cuts)))
          }))
          const composed = yield* written(composedPrefix)
          const fused = yield* written(fusedPrefix)
          expect(fused.events.length).toBe(events.length)
          expect(fused).toStrictEqual(composed)
        }).pipe(Effect.provide(RedisStreamsMemory.layer)),
      { numRuns: 120 }
    ), 120_000)
})

/**
 * What a turn in flight costs, counted (never timed):
 *
 * - fibers: 200 turns, each with its first bytes read and its source waiting on the
 *   network, hold at most 2 fibers each (the turn's own, where its stages run fused,
 *   and its source's reader) beyond a constant: the lease renewals, the fallback
 *   timers and the stop of every turn are shared (`LeaseKeeper`, `TimerWheel`, the stop
 *   signal's hooks);
 * - heap: 400 turns waiting for their first byte, on a store that confirms every entry
 *   and keeps none (so no content is counted), hold at most 40 KB each beyond a
 *   constant, measured after full collections (`pnpm bench turn-memory` gives the
 *   figure).
 */
import { describe, expect, it } from "@effect/vitest"
import { LlmRequest, ProviderClient } from "@sluice/providers"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import { trackFibers } from "@sluice/testing/fibers"
import { heapAfterCollection } from "@sluice/testing/heap"
import { TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer, type ServerResponse } from "node:http"
import { join } from "node:path"
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

  it.live(
    "a live turn (ProviderClient on fetch, its body idle) holds at most 2 fibers beyond a constant (50 turns)",
    () =>
      Effect.gen(function*() {
        const turns = 50
        const provider = yield* hangingProvider
        const client = yield* ProviderClient.make({
          provider: "openai-chat",
          apiKeys: [Redacted.make("structure-key")],
          baseUrl: provider.url
        }).pipe(Effect.provide(FetchHttpClient.layer))
        const fibers = yield* trackFibers
        const pipeline = yield* TurnPipeline.TurnPipeline
        const redis = yield* RedisStreams.RedisStreams
        const before = yield* fibers.active
        const running: Array<Fiber.Fiber<unknown, unknown>> = []
        const ids: Array<string> = []
        for (let i = 0; i < turns; i++) {
          const context = yield* TurnContext.make({ turnId: randomUUID() })
          ids.push(context.turnId)
          const source = TurnSource.events((turn) =>
            client.stream(LlmRequest.prompt("gpt-4o", `turn ${i}`), {
              runId: turn.runId,
              turnId: turn.turnId,
              threadId: turn.threadId
            })
          )
          running.push(yield* Effect.forkChild(fibers.track(pipeline.run(context, source))))
        }
        // every turn has read the head of its body and written its first events
        const started = Effect.forEach(ids, (turnId) => redis.xlen(TurnKeys.eventsKey(prefix, turnId)))
        while (!(yield* started).every((length) => length > 0)) {
          yield* Effect.yieldNow
        }
        const perTurn = ((yield* fibers.active) - before) / turns
        expect(perTurn).toBeGreaterThan(0)
        expect(perTurn).toBeLessThanOrEqual(2)
        yield* Fiber.interruptAll(running)
      }).pipe(Effect.provide(pipeline), Effect.scoped),
    60_000
  )

  it.effect(
    "holds at most 40 KB of heap beyond a constant (400 turns waiting for their first byte)",
    () =>
      Effect.gen(function*() {
        const turns = 400
        const pipeline = yield* TurnPipeline.TurnPipeline
        const redis = yield* RedisStreams.RedisStreams
        const start = Effect.gen(function*() {
          const source = yield* Queue.unbounded<Uint8Array>()
          const context = yield* TurnContext.make({ turnId: randomUUID() })
          const fiber = yield* Effect.forkChild(
            pipeline.run(context, TurnSource.sse("openai-chat", Stream.fromQueue(source)))
          )
          return { fiber, turnId: context.turnId }
        })
        // every turn holds its lease once it waits on its source
        const waiting = (ids: ReadonlyArray<string>) =>
          Effect.gen(function*() {
            for (let round = 0; round < 10_000; round++) {
              const leases = yield* Effect.forEach(ids, (turnId) => redis.get(TurnKeys.leaseKey(prefix, turnId)))
              if (leases.every(Option.isSome)) return true
              yield* Effect.yieldNow
            }
            return false
          })
        // one turn first, so that what all turns share (code, caches) is there before
        const warm = yield* start
        expect(yield* waiting([warm.turnId])).toBe(true)
        const before = heapAfterCollection()
        const running = yield* Effect.forEach(Array.from({ length: turns }), () => start)
        expect(yield* waiting(running.map((turn) => turn.turnId))).toBe(true)
        const perTurn = (heapAfterCollection() - before) / turns
        expect(perTurn).toBeGreaterThan(0)
        expect(perTurn).toBeLessThanOrEqual(40 * 1024)
        yield* Fiber.interruptAll([warm.fiber, ...running.map((turn) => turn.fiber)])
      }).pipe(Effect.provide(keepingNothing)),
    120_000
  )
})

// a provider that answers every request with the head of an SSE body, and then nothing
const hangingProvider = Effect.acquireRelease(
  Effect.callback<{ readonly url: string; readonly close: Effect.Effect<void> }>((resume) => {
    const responses = new Set<ServerResponse>()
    const server = createServer((request, response) => {
      request.resume()
      request.on("end", () => {
        responses.add(response)
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.write(head)
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resume(Effect.succeed({
        url: `http://127.0.0.1:${port}/v1`,
        close: Effect.callback<void>((done) => {
          for (const response of responses) response.destroy()
          server.close(() => done(Effect.void))
        })
      }))
    })
  }),
  (provider) => provider.close
)

// a pipeline on a store that confirms every entry and keeps none
const keepingNothing = TurnPipeline.layer({ publisher: { prefix } }).pipe(
  Layer.provideMerge(
    Layer.effect(
      RedisStreams.RedisStreams,
      Effect.map(RedisStreamsMemory.make, (memory): RedisStreams.RedisStreamsService => ({
        ...memory,
        xaddAll: (_key, entries) => Effect.succeed(entries.map((entry) => Result.succeed(entry.id)))
      }))
    )
  )
)

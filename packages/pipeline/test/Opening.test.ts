/**
 * A turn started with an opening (`RunOptions.opening`, what `POST /v1/turns` starts):
 * the turn is in Redis before its source is asked for anything, `start` returns once
 * it is, the source's own `response_start` is not written a second time, and a turn
 * whose opening cannot be written fails `start` with Redis's failure, the source never
 * asked and its place given back.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisError, RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import { transcriptPath } from "@sluice/testing/fixtures"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"
import { TurnContext, TurnPipeline, TurnSource } from "../src/index.js"

const prefix = "opening-test"
const transcript = new Uint8Array(readFileSync(transcriptPath("anthropic-text.sse")))
const opening = { modelId: "claude-sonnet-4-5", providerId: "anthropic" }

const payloadTypes = (key: string) =>
  Effect.flatMap(
    RedisStreams.RedisStreams.use((redis) => redis.xrange(key, "-", "+")),
    (entries) => Effect.forEach(entries, (entry) => Effect.map(TurnEntry.toStreamEvent(entry), (e) => e.payload))
  )

const pipeline = TurnPipeline.layer({ publisher: { prefix }, maxTurns: 1 }).pipe(
  Layer.provideMerge(RedisStreamsMemory.layer)
)

describe("TurnPipeline.start with an opening", () => {
  it.effect("the turn is in both streams and the index before its source is asked; start returns then", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make({ prefix })
      const redis = yield* RedisStreams.RedisStreams
      // the provider: says how many entries Stream A held when it was asked, then waits
      const asked = yield* Deferred.make<number>()
      const source = TurnSource.events(() =>
        Stream.unwrap(Effect.map(
          Effect.tap(redis.xlen(TurnKeys.eventsKey(prefix, context.turnId)), (n) => Deferred.succeed(asked, n)),
          () => Stream.never
        ))
      )
      const running = yield* TurnPipeline.start(context, source, { opening })
      const a = yield* payloadTypes(TurnKeys.eventsKey(prefix, context.turnId))
      expect(a).toMatchObject([{
        type: "response_start",
        response_id: context.runId,
        turn_id: context.turnId,
        thread_id: context.threadId,
        model_id: "claude-sonnet-4-5",
        provider_id: "anthropic"
      }])
      const b = yield* redis.xrange(TurnKeys.upsertsKey(prefix, context.turnId), "-", "+")
      expect(b.length).toBe(1)
      const index = yield* redis.zrangeByScore(TurnKeys.turnsKey(prefix), -Infinity, Infinity)
      expect(index.map((member) => member.member)).toContain(context.turnId)
      // the reader of the turn's events gets the opening first
      expect((yield* Stream.runCollect(Stream.take(running.events, 1))).map((e) => e.payload.type)).toStrictEqual([
        "response_start"
      ])
      // the provider, asked once the opening was in Redis, says nothing; cancelled, the
      // turn ends cancelled and gives its place back
      expect(yield* Deferred.await(asked)).toBe(1)
      expect(yield* TurnPipeline.TurnPipeline.use((p) => p.cancelHere(context.turnId))).toBe(true)
      const result = yield* running.result
      expect([result.turn.status, result.stopped]).toStrictEqual(["cancelled", Option.some("cancelled")])
      expect((yield* TurnPipeline.load).turns).toBe(0)
      expect(yield* TurnPipeline.TurnPipeline.use((p) => p.cancelHere(context.turnId))).toBe(false)
    }).pipe(Effect.provide(pipeline)))

  it.effect("the source's own response_start is not written again: one per turn", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make({ prefix })
      const running = yield* TurnPipeline.start(context, TurnSource.sse("anthropic", Stream.make(transcript)), {
        opening
      })
      const result = yield* running.result
      expect(result.turn.status).toBe("complete")
      const a = yield* payloadTypes(TurnKeys.eventsKey(prefix, context.turnId))
      expect(a.filter((payload) => payload.type === "response_start").length).toBe(1)
      expect([a[0]!.type, a.at(-1)!.type]).toStrictEqual(["response_start", "response_done"])
      expect(a[0]).toMatchObject({ model_id: "claude-sonnet-4-5", provider_id: "anthropic" })
    }).pipe(Effect.provide(pipeline)))

  it.effect("Redis unavailable: start fails with its failure, the source is never asked, the place is free", () =>
    Effect.gen(function*() {
      const context = yield* TurnContext.make({ prefix })
      let asked = 0
      const source = TurnSource.events(() =>
        Stream.fromEffect(Effect.sync(() => asked++)).pipe(Stream.flatMap(() => Stream.never))
      )
      const failure = yield* Effect.flip(TurnPipeline.start(context, source, { opening }))
      expect(failure).toMatchObject({ _tag: "RedisError", reason: "Unavailable" })
      expect(asked).toBe(0)
      expect((yield* TurnPipeline.load).turns).toBe(0)
    }).pipe(
      Effect.provide(
        TurnPipeline.layer({ publisher: { prefix }, maxTurns: 1 }).pipe(
          Layer.provide(
            Layer.effect(
              RedisStreams.RedisStreams,
              Effect.map(RedisStreams.RedisStreams, (inner) => ({
                ...inner,
                setPx: (key: string) =>
                  Effect.fail(new RedisError.RedisError({ reason: "Unavailable", command: "SET", key, detail: "down" }))
              }))
            ).pipe(Layer.provide(RedisStreamsMemory.layer))
          )
        )
      )
    ))
})

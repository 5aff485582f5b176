/**
 * One last entry per stream while Redis is frozen past the producers' leases (a
 * dedicated redis-server stopped with SIGSTOP, then SIGCONT): four turns of a quiet
 * provider run through `TurnPipeline`, a reader following each on `/events`. When Redis goes on, each
 * lease has lapsed by Redis's clock; the readers' servers and the producers both try
 * to end the turns, and each stream of each turn ends with exactly one last entry,
 * nothing after it (docs/redis.md#leases-and-endings). Every reader reads to that last
 * entry and its stream closes; every producer's run ends (`producer_lost`, whoever
 * wrote the ending).
 *
 * (Before, a reader's `producer_lost` ending was followed by the producer's own
 * `response_done`, written after it under a larger id.)
 */
import { describe, expect, it } from "@effect/vitest"
import { StreamEvent } from "@sluice/core"
import { TurnContext, TurnPipeline, TurnSource } from "@sluice/pipeline"
import { RedisStreams, RedisStreamsLive } from "@sluice/redis"
import { scopedRedisServer } from "@sluice/testing/redis"
import { bearer, open, openingPayloads, prefix, type Received, received, serve, tokens } from "@sluice/testing/server"
import { TurnEnding, TurnKeys } from "@sluice/turns"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"

const auth = bearer(tokens[0])
const turns = 4

/** A turn from a quiet provider: its message opens, then a delta a minute, until it is stopped. */
const quiet = TurnSource.events((context) =>
  Stream.concat(
    Stream.fromIterable(openingPayloads(context)),
    Stream.iterate(1, (n) => n + 1).pipe(
      Stream.schedule(Schedule.spaced("60 seconds")),
      Stream.map((n): StreamEvent.Payload => ({ type: "item_delta", item_id: "msg-1", delta_content: `w${n} ` }))
    )
  ).pipe(Stream.mapEffect((payload) => StreamEvent.make({ runId: context.runId }, payload)))
)

describe("Redis frozen past the producers' leases", () => {
  it.live(
    "each stream of each turn ends with exactly one last entry; readers and producers all end",
    () =>
      Effect.gen(function*() {
        const server = yield* scopedRedisServer()
        const settings = { url: server.url, commandTimeoutMs: 2_000, connectTimeoutMs: 2_000 }
        // the server and the producers, each on connections of their own
        const served = yield* Layer.build(RedisStreamsLive.layer(settings))
        const base = yield* serve({ leaseCheckMs: 500, awaitTurnMs: 10_000 }).pipe(Effect.provide(served))
        const producers = yield* Layer.build(
          // renewing late in the lease, so that the readers' servers notice first
          TurnPipeline.layer({ publisher: { prefix }, lease: { leaseMs: 6_000, renewEveryMs: 4_000 } }).pipe(
            Layer.provide(RedisStreamsLive.layer(settings))
          )
        )
        const contexts = yield* Effect.forEach(Array.from({ length: turns }), () => TurnContext.make({ prefix }))
        const runs = yield* Effect.forEach(
          contexts,
          (context) => Effect.forkChild(Effect.provide(TurnPipeline.run(context, quiet), producers))
        )
        const readers = yield* Effect.forEach(contexts, (context) =>
          Effect.gen(function*() {
            const opened = yield* open(`${base}/v1/turns/${context.turnId}/events`, { ...auth })
            expect(opened.status).toBe(200)
            const pull = yield* Stream.toPull(opened.events)
            const seen: Array<Received> = []
            while (seen.length < 2) seen.push(...Array.from(yield* pull, received))
            return { pull, seen }
          }))

        const pid = server.pid()
        if (pid === undefined) return yield* Effect.die(new Error("redis-server has no pid"))
        yield* Effect.acquireRelease(
          Effect.sync(() => process.kill(pid, "SIGSTOP")),
          () => Effect.sync(() => process.kill(pid, "SIGCONT"))
        )
        // longer than the lease (6 s): the scenario itself, not a wait for a result
        yield* Effect.sleep("9 seconds")
        process.kill(pid, "SIGCONT")

        // every reader reads to the turn's last entry, and its stream closes
        const ends = yield* Effect.forEach(readers, ({ pull, seen }) =>
          Effect.gen(function*() {
            const end = yield* Effect.flip(
              Effect.forever(Effect.map(pull, (chunk) => seen.push(...Array.from(chunk, received))))
            )
            return { done: Cause.isDone(end), last: seen.at(-1)!.event }
          }), { concurrency: "unbounded" })
        expect(ends).toStrictEqual(Array.from({ length: turns }, () => ({ done: true, last: "response_done" })))
        // every producer's run ends
        const exits = yield* Effect.forEach(runs, Fiber.await)

        const redis = Context.get(served, RedisStreams.RedisStreams)
        const counts = yield* Effect.forEach(contexts, (context) =>
          Effect.gen(function*() {
            const a = yield* redis.xrange(TurnKeys.eventsKey(prefix, context.turnId), "-", "+")
            const b = yield* redis.xrange(TurnKeys.upsertsKey(prefix, context.turnId), "-", "+")
            return {
              lastA: a.filter(TurnEnding.isLast).length,
              lastB: b.filter(TurnEnding.isLast).length,
              endsA: TurnEnding.isLast(a.at(-1)!),
              endsB: TurnEnding.isLast(b.at(-1)!)
            }
          }))
        expect(counts).toStrictEqual(
          Array.from({ length: turns }, () => ({ lastA: 1, lastB: 1, endsA: true, endsB: true }))
        )
        // and ends as the turn did, whoever wrote its ending: stopped, producer_lost
        expect(exits.map((exit) => Exit.isSuccess(exit) ? [exit.value.turn.status, exit.value.stopped] : exit))
          .toStrictEqual(Array.from({ length: turns }, () => ["error", Option.some("producer_lost")]))
      }),
    120_000
  )
})

/**
 * A producer that dies for real: a process runs a turn slowly through `TurnPipeline`
 * against redis-server (the global setup's, or REDIS_URL), a reader follows the turn
 * through the server, and the process is killed with SIGKILL. Once the producer's lease
 * lapses the reader is told (`turn_error`, `producer_lost`, then the last entry
 * `turn_completed`) and its stream closes cleanly, on that last entry (the order and the
 * ending of the events, not a time, are asserted; the test's timeout bounds the wait).
 */
import { describe, expect, layer } from "@effect/vitest"
import { RedisStreams, RedisStreamsLive } from "@sluice/redis"
import { bearer, open, prefix, type Received, received, serve, takeEvents, tokens } from "@sluice/testing/server"
import { TurnEnding, TurnEntry, TurnKeys } from "@sluice/turns"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"
import { spawnScript } from "./support/processes.js"

// A database of its own.
const url = (() => {
  const base = new URL(inject("redisUrl"))
  base.pathname = "/8"
  return base.toString()
})()
const auth = bearer(tokens[0])

layer(RedisStreamsLive.layer({ url }), { timeout: 120_000, excludeTestServices: true })(
  "a producer killed mid-turn",
  (it) => {
    describe("SIGKILL", () => {
      it.effect(
        "a reader gets turn_error producer_lost, then the last entry, and a clean close on it",
        () =>
          Effect.gen(function*() {
            const base = yield* serve()
            const turnId = randomUUID()
            const producer = yield* spawnScript("slowProducer.ts", [url, prefix, turnId, "100"], "running\n")
            const opened = yield* open(`${base}/v1/turns/${turnId}/upserts`, auth)
            expect(opened.status).toBe(200)
            const pull = yield* Stream.toPull(opened.events)
            const seen: Array<Received> = yield* takeEvents(pull, 3)
            yield* producer.kill("SIGKILL")
            expect(yield* producer.exited).toBe("SIGKILL")
            const end = yield* Effect.flip(
              Effect.forever(Effect.map(pull, (chunk) => seen.push(...Array.from(chunk, received))))
            )
            // the stream ended cleanly (not failed, not cut) ...
            expect(Cause.isDone(end)).toBe(true)
            const [error, last] = seen.slice(-2)
            expect([error!.event, last!.event]).toStrictEqual(["turn_event", "turn_event"])
            const lost = { type: "turn_error", turnId, error: { code: "producer_lost" } }
            expect(JSON.parse(error!.data)).toMatchObject(lost)
            // ... on the turn's last entry, which follows the error (an idle close, 10 min
            // away, would end it on another event)
            expect(JSON.parse(last!.data)).toMatchObject({ type: "turn_completed", turnId, status: "error" })
            // Nothing after the ending, in either stream, and both streams end.
            const redis = yield* RedisStreams.RedisStreams
            const streamB = yield* redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")
            expect(streamB.at(-1)!.id).toBe(last!.id)
            expect(streamB.filter(TurnEnding.isLast).length).toBe(1)
            const streamA = yield* redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+")
            expect(streamA.filter(TurnEnding.isLast).length).toBe(1)
            expect(TurnEnding.isLast(streamA.at(-1)!)).toBe(true)
            const lastA = yield* TurnEntry.toStreamEvent(streamA.at(-1)!)
            expect(lastA.payload).toMatchObject({ type: "response_done", status: "error" })
          }),
        120_000
      )
    })
  }
)

/**
 * One last entry per stream, whoever writes it (docs/redis.md#leases-and-endings), with
 * real processes on redis-server: a producer process paused (SIGSTOP) past its lease
 * while a reader follows its turn on `/events`. The reader's server ends the turn
 * `producer_lost`; the producer, resumed (SIGCONT), finds its turn ended and stops
 * without writing anything after the last entry. Each stream holds exactly one last
 * entry, at its end, and a reader resuming after it gets nothing more.
 *
 * (Before, the resumed producer wrote its own `response_done` after the reader's:
 * two last entries in Stream A, and a reader resuming after the first got the second.)
 */
import { describe, expect, layer } from "@effect/vitest"
import { RedisStreams, RedisStreamsLive } from "@sluice/redis"
import { bearer, open, prefix, readAll, type Received, received, serve, tokens } from "@sluice/testing/server"
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
  base.pathname = "/9"
  return base.toString()
})()
const auth = bearer(tokens[0])

/** Each stream's entries, and how many of them are its turn's last entry. */
const streamsOf = (turnId: string) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const a = yield* redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+")
    const b = yield* redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")
    return {
      a,
      b,
      lastA: a.filter(TurnEnding.isLast).length,
      lastB: b.filter(TurnEnding.isLast).length,
      endsA: TurnEnding.isLast(a.at(-1)!),
      endsB: TurnEnding.isLast(b.at(-1)!)
    }
  })

layer(RedisStreamsLive.layer({ url }), { timeout: 120_000, excludeTestServices: true })(
  "a producer paused past its lease",
  (it) => {
    describe("SIGSTOP, the reader ends the turn, SIGCONT", () => {
      it.effect(
        "one last entry per stream; the resumed producer stops and writes nothing after it",
        () =>
          Effect.gen(function*() {
            const base = yield* serve({ leaseCheckMs: 500 })
            const turnId = randomUUID()
            const producer = yield* spawnScript("slowProducer.ts", [url, prefix, turnId, "60000"], "running\n")
            const opened = yield* open(`${base}/v1/turns/${turnId}/events`, auth)
            expect(opened.status).toBe(200)
            const pull = yield* Stream.toPull(opened.events)
            const seen: Array<Received> = []
            while (seen.length < 2) seen.push(...Array.from(yield* pull, received))
            // paused once its message has started: nothing of the turn is left to write
            // but the lease's renewals (its first delta is a minute away)
            yield* producer.kill("SIGSTOP")
            // the reader reads on to the ending its server writes once the lease lapsed
            const end = yield* Effect.flip(
              Effect.forever(Effect.map(pull, (chunk) => seen.push(...Array.from(chunk, received))))
            )
            expect(Cause.isDone(end)).toBe(true)
            const last = seen.at(-1)!
            expect(last.event).toBe("response_done")
            expect(JSON.parse(seen.at(-2)!.data)).toMatchObject({
              type: "response_error",
              payload: { error: { code: "producer_lost" } }
            })
            yield* producer.kill("SIGCONT")
            // the producer finds its turn ended, stops, and exits on its own
            const exited = yield* producer.exited

            const streams = yield* streamsOf(turnId)
            expect({
              lastA: streams.lastA,
              lastB: streams.lastB,
              endsA: streams.endsA,
              endsB: streams.endsB
            }).toStrictEqual({ lastA: 1, lastB: 1, endsA: true, endsB: true })
            expect(streams.a.at(-1)!.id).toBe(last.id)
            const lastA = yield* TurnEntry.toStreamEvent(streams.a.at(-1)!)
            expect(lastA.payload).toMatchObject({ type: "response_done", status: "error" })
            // a reader resuming after the last entry gets nothing more, in either stream
            expect(yield* readAll(`${base}/v1/turns/${turnId}/events?after=${last.id}`, auth)).toStrictEqual([])
            const lastB = streams.b.at(-1)!.id
            expect(yield* readAll(`${base}/v1/turns/${turnId}/upserts?after=${lastB}`, auth)).toStrictEqual([])
            // its run ended as the turn did: stopped, producer_lost, not failed
            expect({ exited, output: producer.output() }).toMatchObject({
              exited: 0,
              output: expect.stringContaining("ended error")
            })
          }),
        120_000
      )
    })
  }
)

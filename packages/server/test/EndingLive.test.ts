/**
 * A `producer_lost` ending lands whole when the only reader of a killed producer's
 * turn is an `/events` reader or a UI message stream reader: a process runs a turn
 * through `TurnPipeline` against redis-server, one reader follows it through the
 * server, the process is killed with SIGKILL. The reader reads the ending to the turn's
 * last entry and closes; Stream A ends `response_error`, `response_done` and Stream B
 * `turn_error`, `turn_completed`, one last entry each, nothing after it. (Before, the
 * reader's tail closed at `response_error` and its closing cut the watcher that was
 * writing the ending: Stream A had no `response_done`, Stream B no ending.)
 */
import { describe, expect, layer } from "@effect/vitest"
import { RedisStreams, RedisStreamsLive, type StreamEntry } from "@sluice/redis"
import { bearer, open, prefix, received, serve, takeEvents, tokens } from "@sluice/testing/server"
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
  base.pathname = "/11"
  return base.toString()
})()
const auth = bearer(tokens[0])

const payloadTypeOf = (entry: StreamEntry.StreamEntry) => entry.fields.find(([name]) => name === "payloadType")?.[1]

/** Both streams of the turn end whole: the error, then the last entry, once each. */
const expectWholeEnding = (turnId: string) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const a = yield* redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+")
    const b = yield* redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")
    expect(a.slice(-2).map(payloadTypeOf)).toStrictEqual(["response_error", "response_done"])
    const lastB = yield* Effect.forEach(b.slice(-2), TurnEntry.toStreamBMessage)
    expect(lastB.map((message) => JSON.parse(message.payload) as unknown)).toMatchObject([
      { type: "turn_error", turnId, error: { code: "producer_lost" } },
      { type: "turn_completed", turnId, status: "error" }
    ])
    expect([a.filter(TurnEnding.isLast).length, b.filter(TurnEnding.isLast).length]).toStrictEqual([1, 1])
    expect(a.filter((entry) => payloadTypeOf(entry) === "response_error").length).toBe(1)
    return { a, b }
  })

layer(RedisStreamsLive.layer({ url }), { timeout: 120_000, excludeTestServices: true })(
  "a producer killed with one reader attached",
  (it) => {
    describe("SIGKILL", () => {
      it.effect(
        "an /events reader reads response_error then response_done; both streams end whole",
        () =>
          Effect.gen(function*() {
            const base = yield* serve()
            const turnId = randomUUID()
            const producer = yield* spawnScript("slowProducer.ts", [url, prefix, turnId, "100"], "running\n")
            const opened = yield* open(`${base}/v1/turns/${turnId}/events`, auth)
            expect(opened.status).toBe(200)
            const pull = yield* Stream.toPull(opened.events)
            const seen = yield* takeEvents(pull, 2)
            yield* producer.kill("SIGKILL")
            expect(yield* producer.exited).toBe("SIGKILL")
            // the rest of the stream, until the server closes it
            const end = yield* Effect.flip(
              Effect.forever(Effect.map(pull, (chunk) => seen.push(...Array.from(chunk, received))))
            )
            expect(Cause.isDone(end)).toBe(true)
            expect(seen.slice(-2).map((event) => event.event)).toStrictEqual(["response_error", "response_done"])
            const { a } = yield* expectWholeEnding(turnId)
            // the reader got every entry of Stream A, the last one last
            expect(seen.map((event) => event.id)).toStrictEqual(a.map((entry) => entry.id))
          }),
        120_000
      )

      it.effect(
        "a UI message stream reader gets the error, finish and [DONE]; both streams end whole",
        () =>
          Effect.gen(function*() {
            const base = yield* serve()
            const turnId = randomUUID()
            const producer = yield* spawnScript("slowProducer.ts", [url, prefix, turnId, "100"], "running\n")
            const opened = yield* open(`${base}/v1/turns/${turnId}/ui-message-stream`, auth)
            expect(opened.status).toBe(200)
            yield* producer.kill("SIGKILL")
            expect(yield* producer.exited).toBe("SIGKILL")
            const decoder = new TextDecoder()
            const text = (yield* Stream.runCollect(opened.bytes)).map((bytes) =>
              decoder.decode(bytes, { stream: true })
            ).join("")
            // a frame's data line (the last frame of an entry's chunks opens with its `id:` line)
            const chunks = text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6))
            const types = chunks.map((
              chunk
            ) => (chunk === "[DONE]" ? chunk : (JSON.parse(chunk) as { type?: string }).type))
            expect(types.slice(-4)).toStrictEqual(["error", "finish-step", "finish", "[DONE]"])
            expect(types.filter((type) => type === "[DONE]").length).toBe(1)
            expect(chunks.find((chunk) => chunk.includes("producer_lost"))).toBeDefined()
            yield* expectWholeEnding(turnId)
          }),
        120_000
      )
    })
  }
)

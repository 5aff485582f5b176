/**
 * Readers that stop reading, against the server in a process of its own on redis-server
 * (docs/http.md#slow-readers). Counts and sizes, never timings.
 *
 * - 100 raw connections send `GET /v1/turns/:turnId/events` and never read, while the
 *   turn writes 3,000 entries of 8 KB (24 MB): the server's resident memory grows by
 *   less than 1 MiB a paused reader more than that of a server reading the same turn
 *   without them. Before, each held up to 1,024 entries waiting (8 MB here) and a
 *   whole page in its write: 5.7 MB a reader here; the adversarial run saw 79 MB ->
 *   1,001 MB for 200 such readers.
 * - A reader that takes no byte for `writeTimeoutMs` is closed (before, never), and
 *   resuming with the last id it read whole gets the rest of the turn exactly once.
 */
import { describe, expect, layer } from "@effect/vitest"
import type { StreamEvent } from "@sluice/core"
import { RedisStreams, RedisStreamsLive } from "@sluice/redis"
import { bearer, open, prefix, publishEvents, publishHalted, received, tokens } from "@sluice/testing/server"
import { streamEvents } from "@sluice/testing/turns"
import { TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { request as httpRequest } from "node:http"
import { connect, type Socket } from "node:net"
import { inject } from "vitest"
import { metric, metricUntil, residentBytes, served } from "./support/served.js"

// A database of its own.
const url = (() => {
  const base = new URL(inject("redisUrl"))
  base.pathname = "/13"
  return base.toString()
})()

const entryText = "x".repeat(8_000)

// A turn's Stream A: response_start, item_start, then `deltas` deltas of 8,000
// characters, and response_done when it ends.
const turnEvents = (turnId: string, deltas: number, end: boolean): Array<StreamEvent.StreamEvent> => {
  const events = streamEvents(turnId, deltas + 3).map((event) =>
    event.payload.type === "item_delta" ? { ...event, payload: { ...event.payload, delta_content: entryText } } : event
  )
  return end ? events : events.slice(0, -1)
}

// A connection that asks for the stream and never reads a byte of the answer.
const pausedReader = (base: string, path: string) =>
  Effect.acquireRelease(
    Effect.callback<Socket, Error>((resume) => {
      const { hostname, port } = new URL(base)
      const socket = connect(Number(port), hostname, () => {
        socket.write(
          `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${tokens[0]}\r\n\r\n`
        )
        resume(Effect.succeed(socket))
      })
      socket.on("error", (error) => resume(Effect.fail(error)))
    }),
    (socket) => Effect.sync(() => socket.destroy())
  )

const readers = 100

layer(RedisStreamsLive.layer({ url }), { timeout: 240_000, excludeTestServices: true })(
  "readers that stop reading",
  (it) => {
    describe("GET /v1/turns/:turnId/events", () => {
      it.effect(
        "100 paused readers of a 24 MB turn: the server holds less than 1 MiB for each",
        () =>
          Effect.gen(function*() {
            // two servers read the same turn, one with the paused readers: what the
            // turn itself costs a server (its entries read, framed once) is in both
            const server = yield* served(url, prefix, { maxStreamsPerToken: readers + 10 })
            const alone = yield* served(url, prefix)
            const turnId = randomUUID()
            const events = turnEvents(turnId, 3_000, false)
            const turn = yield* publishHalted(turnId, events, 2)
            const path = `/v1/turns/${turnId}/events`
            // a reader that reads, on each server: once it has an entry, every paused
            // reader of its server was handed it
            const controls = yield* Effect.forEach([server, alone], (each) =>
              Effect.gen(function*() {
                const control = yield* open(`${each.base}${path}`, bearer(tokens[0]))
                const pull = yield* Stream.toPull(control.events)
                let seen = 0
                return (n: number) =>
                  Effect.gen(function*() {
                    while (seen < n) seen += (yield* pull).filter((event) => event.id !== undefined).length
                  })
              }))
            yield* Effect.forEach(controls, (readUpTo) => readUpTo(2))
            const before = [residentBytes(server.pid), residentBytes(alone.pid)] as const
            yield* Effect.forEach(Array.from({ length: readers }), () => pausedReader(server.base, path), {
              concurrency: 10
            })
            yield* metricUntil(server.base, "sluice_sse_readers", (open) => open === readers + 1, "stream=\"events\"")
            yield* turn.release
            yield* Effect.forEach(controls, (readUpTo) => readUpTo(events.length), { concurrency: 2 })
            const grown = residentBytes(server.pid) - before[0]
            const grownAlone = residentBytes(alone.pid) - before[1]
            expect((grown - grownAlone) / readers).toBeLessThan(1024 * 1024)
            // every paused reader is still open, and left the tail once its bound was passed
            expect(yield* metric(server.base, "sluice_sse_readers", "stream=\"events\"")).toBe(readers + 1)
            expect(yield* metric(server.base, "sluice_shared_tail_fell_behind_total")).toBeGreaterThanOrEqual(readers)
          }),
        240_000
      )

      it.effect(
        "a reader that takes no byte for writeTimeoutMs is closed; resuming after its last whole entry gets the rest once",
        () =>
          Effect.gen(function*() {
            const server = yield* served(url, prefix, { writeTimeoutMs: 1_000 })
            const turnId = randomUUID()
            yield* publishEvents(turnId, turnEvents(turnId, 1_500, true))
            const redis = yield* RedisStreams.RedisStreams
            const all = (yield* redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+")).map((entry) => entry.id)
            const path = `/v1/turns/${turnId}/events`
            // a reader that stops reading once the answer's head is in
            const paused = yield* Effect.acquireRelease(
              Effect.callback<{ readonly text: Effect.Effect<string> }, Error>((resume) => {
                const req = httpRequest(`${server.base}${path}`, {
                  agent: false,
                  headers: { authorization: `Bearer ${tokens[0]}` }
                }, (res) => {
                  res.pause()
                  res.setEncoding("utf8")
                  // cut by the server: the end of what it was sent
                  res.on("error", () => {})
                  resume(Effect.succeed({
                    // everything it was sent, read once the server has closed it
                    text: Effect.callback<string>((done) => {
                      let text = ""
                      res.on("data", (chunk: string) => void (text += chunk))
                      res.on("close", () => done(Effect.succeed(text)))
                      res.resume()
                    })
                  }))
                })
                req.on("error", (error) => resume(Effect.fail(error)))
                req.end()
              }),
              () => Effect.void
            )
            expect(yield* metricUntil(server.base, "sluice_sse_readers_dropped_total", (n) => n >= 1)).toBe(1)
            expect(yield* metricUntil(server.base, "sluice_sse_readers", (n) => n === 0, "stream=\"events\"")).toBe(0)
            const text = yield* paused.text
            // the frames it got whole (a frame ends with a blank line)
            const whole = text.slice(0, text.lastIndexOf("\n\n") + 2)
            const got = Array.from(whole.matchAll(/^id: (\S+)$/gm), (match) => match[1]!)
            expect(got.length).toBeGreaterThan(0)
            expect(got.length).toBeLessThan(all.length)
            expect(got).toStrictEqual(all.slice(0, got.length))
            const rest = yield* Effect.scoped(Effect.flatMap(
              open(`${server.base}${path}`, { ...bearer(tokens[0]), "last-event-id": got[got.length - 1]! }),
              (opened) => Stream.runCollect(opened.events)
            ))
            const resumed = Array.from(rest, received).flatMap((event) => (event.id === undefined ? [] : [event.id]))
            expect([...got, ...resumed]).toStrictEqual(all)
          }),
        120_000
      )
    })
  }
)

/**
 * `POST /v1/turns/:turnId/cancel` on the in-memory store: who may cancel (bearer
 * tokens, `control` page tokens, a server without tokens; not `read` page tokens), and
 * what it answers for a running, finished, lost or unknown turn. The request goes to
 * the control stream that producers follow (`TurnControl`); the live flow, a producer
 * that stops, is in `CancelLive.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import {
  bearer,
  prefix,
  producer,
  publishEvents,
  publishUpserts,
  request,
  serve,
  serveWith,
  tokens,
  unrenewedLease
} from "@sluice/testing/server"
import { streamEvents, upsertMessages } from "@sluice/testing/turns"
import { TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import { randomUUID } from "node:crypto"
import type * as TurnSnapshot from "../src/TurnSnapshot.js"
import * as ViewerToken from "../src/ViewerToken.js"

const key = ViewerToken.deriveKey(tokens)
const auth = bearer(tokens[0])

const post = (url: string, headers: Record<string, string> = {}) => request(url, headers, "POST")

// The turns whose cancel was requested, in order.
const requested = Effect.flatMap(
  RedisStreams.RedisStreams,
  (redis) =>
    Effect.map(
      redis.xrange(TurnKeys.controlKey(prefix), "-", "+"),
      (entries) => entries.map((entry) => Object.fromEntries(entry.fields))
    )
)

// A turn in progress: Stream A's first events and Stream B's first messages.
const runningTurn = Effect.gen(function*() {
  const turnId = randomUUID()
  yield* publishEvents(turnId, streamEvents(turnId, 20).slice(0, 4))
  const produce = yield* producer(turnId, upsertMessages(turnId, 20))
  yield* produce.release(3)
  return turnId
})

describe("POST /v1/turns/:turnId/cancel", () => {
  it.effect("a running turn: 202, and the request is on the control stream for its producer", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const turnId = yield* runningTurn
      const reply = yield* post(`${base}/v1/turns/${turnId}/cancel`, auth)
      expect(reply.status).toBe(202)
      expect(reply.body).toStrictEqual({ turnId, cancel: "requested" })
      expect(yield* requested).toStrictEqual([{ type: "cancel", turnId }])
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("a finished turn is 409 turn_finished; an unknown one 404 turn_not_found; a bad id 400; nothing is requested", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const finished = randomUUID()
      yield* publishUpserts(finished, upsertMessages(finished, 6))
      yield* publishEvents(finished, streamEvents(finished, 5))
      const done = yield* post(`${base}/v1/turns/${finished}/cancel`, auth)
      expect(done.status).toBe(409)
      expect(done.body).toMatchObject({ error: { code: "turn_finished" } })
      const unknown = yield* post(`${base}/v1/turns/${randomUUID()}/cancel`, auth)
      expect(unknown.status).toBe(404)
      expect(unknown.body).toMatchObject({ error: { code: "turn_not_found" } })
      for (const bad of ["not-a-uuid", "%zz"]) {
        const reply = yield* post(`${base}/v1/turns/${bad}/cancel`, auth)
        expect(reply.status).toBe(400)
        expect(reply.body).toMatchObject({ error: { code: "invalid_turn_id" } })
      }
      expect(yield* requested).toStrictEqual([])
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("a turn whose producer's lease lapsed is ended with producer_lost and is 409", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const turnId = randomUUID()
      yield* unrenewedLease(turnId)
      yield* publishEvents(turnId, streamEvents(turnId, 20).slice(0, 4))
      const produce = yield* producer(turnId, upsertMessages(turnId, 20))
      yield* produce.release(3)
      yield* TestClock.adjust(6_000)
      const reply = yield* post(`${base}/v1/turns/${turnId}/cancel`, auth)
      expect(reply.status).toBe(409)
      const snapshot = (yield* request(`${base}/v1/turns/${turnId}`, auth)).body as TurnSnapshot.TurnSnapshot
      expect(snapshot).toMatchObject({ status: "error", error: { code: "producer_lost" } })
      expect(yield* requested).toStrictEqual([])
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("who may cancel: bearer tokens and control page tokens; a read page token is 403; none is 401", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const turnId = yield* runningTurn
      const url = `${base}/v1/turns/${turnId}/cancel`
      const read = yield* ViewerToken.issue(key, 60_000)
      const control = yield* ViewerToken.issue(key, 60_000, "control")
      expect(control).toMatch(/^v1\.\d+\.control\./)
      const forbidden = yield* post(`${url}?access_token=${read}`)
      expect(forbidden.status).toBe(403)
      expect(forbidden.body).toMatchObject({ error: { code: "forbidden" } })
      // a read token is checked for its scope before the turn: no turn is revealed
      expect((yield* post(`${base}/v1/turns/${randomUUID()}/cancel?access_token=${read}`)).status).toBe(403)
      expect((yield* post(url)).status).toBe(401)
      expect(yield* requested).toStrictEqual([])
      expect((yield* post(`${url}?access_token=${control}`)).status).toBe(202)
      expect((yield* post(url, bearer(tokens[1]))).status).toBe(202)
      expect(yield* requested).toStrictEqual([{ type: "cancel", turnId }, { type: "cancel", turnId }])
      // a control token reads like a read token
      expect((yield* request(`${base}/v1/turns/${turnId}?access_token=${control}`)).status).toBe(200)
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("a server without tokens (insecure-local) lets its callers cancel", () =>
    Effect.gen(function*() {
      const base = yield* serveWith({ insecureLocal: true })
      const turnId = yield* runningTurn
      expect((yield* post(`${base}/v1/turns/${turnId}/cancel`)).status).toBe(202)
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("the read routes do not take POST, nor the cancel route GET", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const turnId = yield* runningTurn
      expect((yield* request(`${base}/v1/turns/${turnId}/cancel`, auth)).status).toBe(404)
      expect((yield* post(`${base}/v1/turns/${turnId}`, auth)).status).toBe(404)
      expect(yield* requested).toStrictEqual([])
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

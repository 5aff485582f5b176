/**
 * Access control and bad input over real HTTP: tokens, turn ids, resume points,
 * query values, unknown routes, stream limits, Redis down. Each gets its status and a
 * JSON error body, never an internal error.
 */
import { describe, expect, it } from "@effect/vitest"
import { DurableStoreMemory } from "@sluice/durable-streams"
import { RedisError, RedisStreams, RedisStreamsMemory } from "@sluice/redis"
import { bearer, open, publishUpserts, type Reply, request, serve, serveWith, tokens } from "@sluice/testing/server"
import { upsertMessages } from "@sluice/testing/turns"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as FastCheck from "fast-check"
import { randomUUID } from "node:crypto"
import { ApiErrorBody } from "../src/ApiError.js"
import * as ViewerToken from "../src/ViewerToken.js"

const auth = bearer(tokens[0])
const isErrorBody = Schema.is(ApiErrorBody)

// Asserts a JSON error reply with the status and code.
const expectError = (reply: Reply, status: number, code: string) => {
  expect({ status: reply.status, body: reply.body }).toMatchObject({ status, body: { error: { code } } })
  expect(isErrorBody(reply.body)).toBe(true)
  expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
}

// A server on the in-memory store with one finished turn.
const withTurn = (options: Parameters<typeof serve>[0] = {}) =>
  Effect.gen(function*() {
    const base = yield* serve(options)
    const turnId = randomUUID()
    yield* publishUpserts(turnId, upsertMessages(turnId, 6))
    return { base, turnId }
  })

const routes = (
  turnId: string
) => ["/v1/turns", `/v1/turns/${turnId}`, `/v1/turns/${turnId}/upserts`, `/v1/turns/${turnId}/events`]

describe("bearer tokens", () => {
  it.effect("no token, a wrong token, another scheme: 401 on every route, unknown ones included", () =>
    Effect.gen(function*() {
      const { base, turnId } = yield* withTurn()
      const wrong = [
        {},
        bearer("token-alpha-012345678"),
        bearer("token-alpha-01234567890"),
        bearer(tokens[0].toUpperCase()),
        { authorization: `Basic ${Buffer.from(`user:${tokens[0]}`).toString("base64")}` },
        { authorization: tokens[0] },
        { authorization: "Bearer" },
        { authorization: `Bearer ${tokens[0]} ${tokens[1]}` }
      ]
      for (const path of [...routes(turnId), "/nowhere", `/v1/turns/not-a-uuid`]) {
        for (const headers of wrong) {
          const reply = yield* request(`${base}${path}`, headers)
          expectError(reply, 401, "unauthorized")
          expect(reply.headers.get("www-authenticate")).toBe("Bearer realm=\"sluice\"")
        }
      }
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("each configured token is accepted; the scheme is case-insensitive", () =>
    Effect.gen(function*() {
      const { base, turnId } = yield* withTurn()
      for (const headers of [bearer(tokens[0]), bearer(tokens[1]), { authorization: `bearer ${tokens[1]}` }]) {
        expect((yield* request(`${base}/v1/turns/${turnId}`, headers)).status).toBe(200)
      }
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("tokens from SLUICE_API_TOKENS", () =>
    Effect.gen(function*() {
      const base = yield* serveWith({}).pipe(
        Effect.provideService(
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromEnvRecord({ SLUICE_API_TOKENS: " env-token-1 , env-token-2," })
        )
      )
      expect((yield* request(`${base}/v1/turns`, bearer("env-token-2"))).status).toBe(200)
      expectError(yield* request(`${base}/v1/turns`, auth), 401, "unauthorized")
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("an insecure-local server without tokens answers without a token", () =>
    Effect.gen(function*() {
      const base = yield* serve({ tokens: [], insecureLocal: true })
      expect((yield* request(`${base}/v1/turns`)).status).toBe(200)
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

describe("turn ids", () => {
  const bad = [
    "abc",
    "not-a-uuid",
    "0",
    "%2E%2E%2Fcodex%3Aturns",
    "a%2Fb",
    "%7Bx%7D",
    "*",
    "%E0%A4%A",
    "%",
    "12345678-1234-1234-1234-1234567890ab0",
    "12345678-1234-1234-1234-1234567890a",
    "12345678123412341234123456789abc",
    "g2345678-1234-1234-1234-1234567890ab",
    "{12345678-1234-1234-1234-1234567890ab}",
    "12345678-1234-1234-1234-1234567890ab%0A",
    "%00"
  ]

  it.effect("anything but a UUID is 400 invalid_turn_id on every turn route", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      for (const turnId of bad) {
        for (const path of routes(turnId).slice(1)) {
          expectError(yield* request(`${base}${path}`, auth), 400, "invalid_turn_id")
        }
      }
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("a UUID without a turn is 404 turn_not_found", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      for (const path of routes(randomUUID()).slice(1)) {
        expectError(yield* request(`${base}${path}`, auth), 404, "turn_not_found")
      }
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

describe("resume points", () => {
  const garbage = [
    "abc",
    "1",
    "1-",
    "-1",
    "-1-0",
    "1-2-3",
    "0x1-0",
    "1 -0",
    "1.5-0",
    "18446744073709551616-0",
    "1-18446744073709551616",
    "0-1, 0-2",
    "*",
    "$",
    "+",
    "-",
    "(0-1",
    ""
  ]

  it.effect("a Last-Event-ID or ?after= that is not an entry id is 400 invalid_last_event_id", () =>
    Effect.gen(function*() {
      const { base, turnId } = yield* withTurn()
      for (const stream of ["upserts", "events"]) {
        const url = `${base}/v1/turns/${turnId}/${stream}`
        for (const value of garbage) {
          expectError(yield* request(url, { ...auth, "last-event-id": value }), 400, "invalid_last_event_id")
          expectError(yield* request(`${url}?after=${encodeURIComponent(value)}`, auth), 400, "invalid_last_event_id")
        }
        // Spaces around a header value belong to HTTP, but not to a query value.
        expectError(yield* request(`${url}?after=%201-0`, auth), 400, "invalid_last_event_id")
        expectError(yield* request(`${url}?after=0-1&after=0-2`, auth), 400, "invalid_query")
      }
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect(
    "any printable Last-Event-ID gets a 200 stream or a 400, never a server error",
    () =>
      Effect.gen(function*() {
        const run = Effect.runPromiseWith(yield* Effect.context<never>())
        yield* Effect.promise(() =>
          FastCheck.assert(
            FastCheck.asyncProperty(FastCheck.stringMatching(/^[\x21-\x7E]{0,30}$/), (value) =>
              run(Effect.scoped(
                Effect.gen(function*() {
                  const { base, turnId } = yield* withTurn()
                  const status = yield* Effect.scoped(Effect.map(
                    open(`${base}/v1/turns/${turnId}/upserts`, { ...auth, "last-event-id": value }),
                    (opened) => opened.status
                  ))
                  expect([200, 400]).toContain(status)
                  expect(status === 200).toBe(/^\d{1,20}-\d{1,20}$/.test(value) && fits(value))
                }).pipe(Effect.provide(RedisStreamsMemory.layer))
              ))),
            { numRuns: 40 }
          )
        )
      }),
    120_000
  )
})

// Both parts of an id fit in 64 bits.
const fits = (value: string) => value.split("-").every((part) => BigInt(part) < 2n ** 64n)

describe("routes and queries", () => {
  it.effect("unknown routes and methods are 404 not_found", () =>
    Effect.gen(function*() {
      const { base, turnId } = yield* withTurn()
      for (
        const path of ["/index.html", "/v1", "/v2/turns", `/v1/turns/${turnId}/other`, `/v1/turns/${turnId}/upserts/x`]
      ) {
        expectError(yield* request(`${base}${path}`, auth), 404, "not_found")
      }
      for (const method of ["POST", "DELETE", "PUT"]) {
        expectError(yield* request(`${base}/v1/turns/${turnId}`, auth, method), 404, "not_found")
        expectError(yield* request(`${base}/`, auth, method), 404, "not_found")
      }
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("?limit= outside 1..maxListLimit or not an integer is 400 invalid_query", () =>
    Effect.gen(function*() {
      const base = yield* serve({ maxListLimit: 50 })
      for (const limit of ["0", "-1", "51", "1.5", "abc", "", "1e2", "0010"]) {
        expectError(yield* request(`${base}/v1/turns?limit=${limit}`, auth), 400, "invalid_query")
      }
      expect((yield* request(`${base}/v1/turns?limit=50`, auth)).status).toBe(200)
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

describe("stream limits", () => {
  it.effect("past maxStreamsPerToken open streams a token gets 429; other tokens are counted apart", () =>
    Effect.gen(function*() {
      const base = yield* serve({ maxStreamsPerToken: 2 })
      const turnId = randomUUID()
      // A turn that does not end, so its streams stay open.
      yield* publishUpserts(turnId, upsertMessages(turnId, 6).slice(0, 3))
      const url = `${base}/v1/turns/${turnId}/upserts`
      const first = yield* open(url, auth)
      const second = yield* open(url, auth)
      expect([first.status, second.status]).toStrictEqual([200, 200])
      // Both are streaming: their first events have arrived, and they stay open.
      yield* Effect.flatten(Stream.toPull(second.events))
      yield* Effect.flatten(Stream.toPull(first.events))
      expectError(yield* request(url, auth), 429, "too_many_streams")
      const other = yield* open(url, bearer(tokens[1]))
      expect(other.status).toBe(200)
      yield* other.abort
      // Snapshots and lists are not streams.
      expect((yield* request(`${base}/v1/turns/${turnId}`, auth)).status).toBe(200)
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("each page token (each viewer link) has its own maxStreamsPerToken slots", () =>
    Effect.gen(function*() {
      const base = yield* serve({ maxStreamsPerToken: 2 })
      const turnId = randomUUID()
      // A turn that does not end, so its streams stay open.
      yield* publishUpserts(turnId, upsertMessages(turnId, 6).slice(0, 3))
      const key = ViewerToken.deriveKey(tokens)
      // two links, told apart by their expiry (and so by their signature)
      const now = Date.now()
      const link = (n: number) => ViewerToken.sign(key, { expiresAt: now + 600_000 + n * 1_000, scope: "read" })
      const [first, second] = [link(1), link(2)]
      const url = (token: string) => `${base}/v1/turns/${turnId}/upserts?access_token=${encodeURIComponent(token)}`
      const held = [yield* open(url(first), {}), yield* open(url(first), {})]
      expect(held.map((each) => each.status)).toStrictEqual([200, 200])
      for (const each of held) yield* Effect.flatten(Stream.toPull(each.events))
      // the first link is at its bound; the second link and the bearer token are not
      expectError(yield* request(url(first), {}), 429, "too_many_streams")
      const other = yield* open(url(second), {})
      expect(other.status).toBe(200)
      yield* Effect.flatten(Stream.toPull(other.events))
      const bearerStream = yield* open(`${base}/v1/turns/${turnId}/upserts`, auth)
      expect(bearerStream.status).toBe(200)
      yield* other.abort
      yield* bearerStream.abort
    }).pipe(Effect.provide(RedisStreamsMemory.layer)), 30_000)
})

describe("live Durable Streams reads", () => {
  it.effect("take a slot of their token, as an SSE stream of a turn does", () =>
    Effect.gen(function*() {
      const base = yield* serve({ maxStreamsPerToken: 1 })
      const stream = `${base}/v1/stream/notes-${randomUUID()}`
      expect((yield* request(stream, { ...auth, "content-type": "text/plain" }, "PUT")).status).toBe(201)
      const live = yield* open(`${stream}?offset=now&live=sse`, auth)
      expect(live.status).toBe(200)
      // the token's one slot is held: another live read, and a turn stream, are refused
      expect((yield* request(`${stream}?offset=now&live=sse`, auth)).status).toBe(429)
      const turnId = randomUUID()
      yield* publishUpserts(turnId, upsertMessages(turnId, 6).slice(0, 3))
      expectError(yield* request(`${base}/v1/turns/${turnId}/upserts`, auth), 429, "too_many_streams")
      // another token's slots are its own
      const other = yield* open(`${stream}?offset=now&live=sse`, bearer(tokens[1]))
      expect(other.status).toBe(200)
      yield* other.abort
      yield* live.abort
    }).pipe(Effect.provide(Layer.merge(RedisStreamsMemory.layer, DurableStoreMemory.layer))), 30_000)
})

describe("Redis down", () => {
  const down = Layer.succeed(RedisStreams.RedisStreams, unavailable())

  it.effect("every route answers 503 redis_unavailable", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      for (const path of routes(randomUUID())) {
        expectError(yield* request(`${base}${path}`, auth), 503, "redis_unavailable")
      }
    }).pipe(Effect.provide(down)))
})

// A RedisStreams whose every command fails as Unavailable.
function unavailable(): RedisStreams.RedisStreamsService {
  const fail = (command: string) =>
    new RedisError.RedisError({ reason: "Unavailable", command, detail: "connection refused" })
  return {
    xadd: () => Effect.fail(fail("XADD")),
    xaddAll: () => Effect.fail(fail("XADD")),
    xaddAfter: () => Effect.fail(fail("EVAL")),
    xrange: () => Effect.fail(fail("XRANGE")),
    xdel: () => Effect.fail(fail("XDEL")),
    xlen: () => Effect.fail(fail("XLEN")),
    xlast: () => Effect.fail(fail("XREVRANGE")),
    setPx: () => Effect.fail(fail("SET")),
    get: () => Effect.fail(fail("GET")),
    tail: () => Stream.fail(fail("XREAD")),
    pexpire: () => Effect.fail(fail("PEXPIRE")),
    pttl: () => Effect.fail(fail("PTTL")),
    zadd: () => Effect.fail(fail("ZADD")),
    zrangeByScore: () => Effect.fail(fail("ZRANGE")),
    zremRangeByScore: () => Effect.fail(fail("ZREMRANGEBYSCORE"))
  }
}

/**
 * The protocol's routes served alone by an `HttpRouter`, over the in-memory stores:
 * authentication only where it is due, names with slashes and percent-escapes, the
 * subscription routes and their refusals, and a pull-wake's event written by the
 * engine through the append operation.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as DurableRefusal from "../src/DurableRefusal.js"
import * as DurableStoreMemory from "../src/DurableStoreMemory.js"
import * as DurableStreams from "../src/DurableStreams.js"
import * as DurableSubscriptions from "../src/DurableSubscriptions.js"
import * as SubscriptionEngine from "../src/internal/subscriptionEngine.js"

class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {}) {}

interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
}

// The routes in a router of their own; `Bearer w` writes, `Bearer r` reads, and
// anything else is refused (401 here); `authentications` counts the calls.
const harness = (
  options: {
    readonly store: boolean
    readonly subscriptions: boolean
    readonly maxJsonDepth?: number
    readonly callers?: DurableStreams.Callers<{ readonly mayWrite: boolean; readonly token: string }>
  }
) =>
  Effect.gen(function*() {
    const store = yield* DurableStoreMemory.make
    const subscriptionStore = yield* Effect.provide(
      Effect.service(DurableSubscriptions.DurableSubscriptions),
      DurableSubscriptions.layerMemory
    )
    const client = HttpClient.make((request) => Effect.die(`no webhook expected: ${request.url}`))
    const engine = options.subscriptions
      ? yield* SubscriptionEngine.make(store, subscriptionStore, {
        ...SubscriptionEngine.defaultOptions,
        policy: { loopbackHttp: true, allowHosts: [] }
      }).pipe(Effect.provideService(HttpClient.HttpClient, client))
      : undefined
    const context: DurableStreams.Context = {
      store: options.store ? Option.some(store) : Option.none(),
      longPollMs: 1_000,
      closing: Effect.never,
      subscriptions: engine,
      baseUrl: "http://example.test",
      maxJsonDepth: options.maxJsonDepth
    }
    const authentications = yield* Ref.make(0)
    const authenticate = Effect.gen(function*() {
      yield* Ref.update(authentications, (n) => n + 1)
      const request = yield* HttpServerRequest.HttpServerRequest
      const token = request.headers.authorization
      if (token === "Bearer w") return { mayWrite: true, token: "w" }
      if (token === "Bearer r") return { mayWrite: false, token: "r" }
      return yield* new Unauthorized()
    })
    const app = yield* HttpRouter.toHttpEffect(
      HttpRouter.addAll(DurableStreams.routes(context, authenticate, options.callers))
    )
    const call = (
      method: string,
      path: string,
      init: { readonly token?: string; readonly body?: string; readonly type?: string } = {}
    ) =>
      app.pipe(
        Effect.catchTag("Unauthorized", () => Effect.succeed(HttpServerResponse.text("unauthorized", { status: 401 }))),
        Effect.provideService(
          HttpServerRequest.HttpServerRequest,
          HttpServerRequest.fromWeb(
            new Request(`http://example.test/v1/stream/${path}`, {
              method,
              headers: {
                ...(init.token === undefined ? {} : { authorization: `Bearer ${init.token}` }),
                ...(init.type === undefined ? {} : { "content-type": init.type })
              },
              // a web request without a body has none to read: an empty one instead
              ...(method === "GET" || method === "HEAD" ? {} : { body: init.body ?? "" })
            })
          )
        ),
        Effect.scoped,
        Effect.flatMap((response) =>
          Effect.promise(async (): Promise<Reply> => {
            const web = HttpServerResponse.toWeb(response)
            return { status: web.status, headers: web.headers, text: await web.text() }
          })
        )
      )
    return { call, authentications: Ref.get(authentications), store }
  })

describe("DurableStreams.routes", () => {
  it.effect("serves a stream whose name has slashes and percent-escapes, and one past 100 characters", () =>
    Effect.gen(function*() {
      const { call } = yield* harness({ store: true, subscriptions: true })
      const name = "chat/room%201/log"
      const created = yield* call("PUT", name, { token: "w", body: "[1]", type: "application/json" })
      expect(created.status).toBe(201)
      expect(created.headers.get("location")).toBe(`http://example.test/v1/stream/${name}`)
      expect(created.headers.get("access-control-allow-origin")).toBe("*")
      expect((yield* call("POST", name, { token: "w", body: "[2, 3]", type: "application/json" })).status).toBe(204)
      const read = yield* call("GET", `${name}?offset=-1`, { token: "r" })
      expect([read.status, read.text]).toStrictEqual([200, "[1,2,3]"])
      expect((yield* call("HEAD", name, { token: "r" })).headers.get("stream-up-to-date")).toBeNull()
      expect((yield* call("GET", "chat/room1/log?offset=-1", { token: "r" })).status).toBe(404)
      const long = `a/${"x".repeat(300)}`
      expect((yield* call("PUT", long, { token: "w", type: "text/plain" })).status).toBe(201)
      expect((yield* call("DELETE", long, { token: "w" })).status).toBe(204)
      expect((yield* call("DELETE", long, { token: "w" })).status).toBe(404)
    }))

  it.effect("answers the preflight and the signing keys without authenticating, everything else after", () =>
    Effect.gen(function*() {
      const { authentications, call } = yield* harness({ store: true, subscriptions: true })
      const preflight = yield* call("OPTIONS", "__ds/jwks.json")
      expect([preflight.status, preflight.headers.get("access-control-allow-methods")]).toStrictEqual([
        204,
        "GET, POST, PUT, DELETE, HEAD, OPTIONS"
      ])
      const keys = yield* call("GET", "__ds/jwks.json")
      expect([keys.status, keys.headers.get("content-type")]).toStrictEqual([200, "application/jwk-set+json"])
      const callback = yield* call("POST", "__ds/subscriptions/s1/callback", { body: "{}" })
      expect([callback.status, JSON.parse(callback.text).error.code]).toStrictEqual([401, "TOKEN_INVALID"])
      expect(yield* authentications).toBe(0)
      expect((yield* call("GET", "s", {})).status).toBe(401)
      expect((yield* call("GET", "__ds/subscriptions/s1", {})).status).toBe(401)
      expect(yield* authentications).toBe(2)
    }))

  it.effect("keeps the statuses of refusals: bad ids before authentication, 403, 404, 405 with Allow, 501", () =>
    Effect.gen(function*() {
      const { call } = yield* harness({ store: true, subscriptions: true })
      const badId = yield* call("GET", "__ds/subscriptions/a%20b")
      expect([badId.status, JSON.parse(badId.text).error.code]).toStrictEqual([400, "INVALID_REQUEST"])
      const unknown = yield* call("GET", "__ds/elsewhere", { token: "r" })
      expect([unknown.status, JSON.parse(unknown.text).error]).toStrictEqual([
        404,
        { code: "NOT_FOUND", message: "no subscription route __ds/elsewhere" }
      ])
      const forbidden = yield* call("PUT", "__ds/subscriptions/s1", { token: "r", body: "{}" })
      expect([forbidden.status, JSON.parse(forbidden.text).error.code]).toStrictEqual([403, "FORBIDDEN"])
      const wrongMethod = yield* call("PATCH", "__ds/subscriptions/s1", { token: "w" })
      expect([wrongMethod.status, JSON.parse(wrongMethod.text).error.code]).toStrictEqual([405, "INVALID_REQUEST"])
      const patch = yield* call("PATCH", "s", { token: "w" })
      expect([patch.status, patch.headers.get("allow"), patch.text]).toStrictEqual([
        405,
        "GET, HEAD, PUT, POST, DELETE",
        "PATCH is not a Durable Streams method"
      ])
      expect([(yield* call("POST", "s", { token: "r", body: "x" })).text]).toStrictEqual([
        "this token may not write durable streams"
      ])
      const storeless = yield* harness({ store: false, subscriptions: false })
      const refused = yield* storeless.call("PUT", "s", { token: "w" })
      expect([refused.status, refused.text]).toStrictEqual([501, "this server keeps no durable streams of its own"])
      // without subscriptions, `__ds/...` is a stream name like any other
      expect((yield* storeless.call("GET", "__ds/jwks.json", { token: "r" })).status).toBe(501)
    }))

  it.effect("a pull-wake subscription's wake is an event appended to its wake stream", () =>
    Effect.gen(function*() {
      const { call } = yield* harness({ store: true, subscriptions: true })
      const id = "s".repeat(200)
      expect((yield* call("PUT", "wakes", { token: "w", type: "application/json" })).status).toBe(201)
      expect((yield* call("PUT", "jobs/1", { token: "w", type: "text/plain" })).status).toBe(201)
      const subscribed = yield* call("PUT", `__ds/subscriptions/${id}`, {
        token: "w",
        type: "application/json",
        body: JSON.stringify({ type: "pull-wake", pattern: "jobs/*", wake_stream: "wakes" })
      })
      expect([subscribed.status, subscribed.text]).toStrictEqual([201, expect.any(String)])
      expect((yield* call("POST", "jobs/1", { token: "w", type: "text/plain", body: "work" })).status).toBe(204)
      const wakes = yield* call("GET", "wakes?offset=-1", { token: "r" })
      expect(JSON.parse(wakes.text)).toMatchObject([
        { type: "wake", subscription_id: id, stream: "jobs/1", generation: 1 }
      ])
      const unlinked = yield* call("DELETE", `__ds/subscriptions/${id}/streams/jobs%2F1`, { token: "w" })
      expect(unlinked.status).toBe(204)
    }))

  it.effect(
    "refuses JSON nested deeper than the context's maxJsonDepth: a write's body, a subscription's",
    () =>
      Effect.gen(function*() {
        const { call } = yield* harness({ store: true, subscriptions: true, maxJsonDepth: 3 })
        const json = "application/json"
        expect((yield* call("PUT", "deep", { token: "w", type: json, body: "[[[1]]]" })).status).toBe(201)
        const appended = yield* call("POST", "deep", { token: "w", type: json, body: "[[[[1]]]]" })
        expect([appended.status, appended.text]).toStrictEqual([
          400,
          "the JSON nests 4 levels deep, more than the 3 accepted"
        ])
        const created = yield* call("PUT", "deep-create", {
          token: "w",
          type: json,
          body: "{\"a\":{\"b\":{\"c\":[]}}}"
        })
        expect([created.status, created.text]).toStrictEqual([
          400,
          "the JSON nests 4 levels deep, more than the 3 accepted"
        ])
        const subscribed = yield* call("PUT", "__ds/subscriptions/deep", {
          token: "w",
          type: json,
          body: JSON.stringify({ type: "pull-wake", pattern: "a/*", wake_stream: "w", x: [[[]]] })
        })
        expect([subscribed.status, JSON.parse(subscribed.text).error]).toStrictEqual([
          400,
          { code: "INVALID_REQUEST", message: "the JSON nests 4 levels deep, more than the 3 accepted" }
        ])
        // brackets inside strings do not count
        const quoted = yield* call("POST", "deep", { token: "w", type: json, body: "[\"[[[[[[\"]" })
        expect(quoted.status).toBe(204)
        const read = yield* call("GET", "deep?offset=-1", { token: "r" })
        expect([read.status, read.text]).toStrictEqual([200, "[[[1]],\"[[[[[[\"]"])
      }),
    30_000
  )

  it.effect(
    "a live read takes one of its caller's slots for as long as it waits; a refused slot is the answer",
    () =>
      Effect.gen(function*() {
        const open = yield* Ref.make(new Map<string, number>())
        const count = (token: string, delta: number) =>
          Ref.update(open, (counts) => new Map(counts).set(token, (counts.get(token) ?? 0) + delta))
        const taken = yield* Ref.make(0)
        const callers: DurableStreams.Callers<{ readonly mayWrite: boolean; readonly token: string }> = {
          liveRead: (access) =>
            Effect.acquireRelease(
              Effect.flatMap(Ref.get(open), (counts) =>
                (counts.get(access.token) ?? 0) >= 2
                  ? Effect.fail(DurableRefusal.make(429, `token ${access.token} holds 2 live reads already`))
                  : Effect.andThen(count(access.token, 1), Ref.update(taken, (n) => n + 1))),
              () => count(access.token, -1)
            )
        }
        const { call } = yield* harness({ store: true, subscriptions: false, callers })
        expect((yield* call("PUT", "live", { token: "w", type: "text/plain" })).status).toBe(201)
        const first = yield* Effect.forkChild(call("GET", "live?offset=now&live=long-poll", { token: "r" }))
        const second = yield* Effect.forkChild(call("GET", "live?offset=now&live=long-poll", { token: "r" }))
        while ((yield* Ref.get(open)).get("r") !== 2) yield* Effect.yieldNow
        const third = yield* call("GET", "live?offset=now&live=sse", { token: "r" })
        expect([third.status, third.text]).toStrictEqual([429, "token r holds 2 live reads already"])
        // another caller's slots are its own; a catch-up read takes none
        expect((yield* call("GET", "live?offset=-1", { token: "r" })).status).toBe(200)
        const other = yield* Effect.forkChild(call("GET", "live?offset=now&live=long-poll", { token: "w" }))
        while ((yield* Ref.get(open)).get("w") !== 1) yield* Effect.yieldNow
        expect((yield* call("POST", "live", { token: "w", type: "text/plain", body: "x" })).status).toBe(204)
        const texts = [yield* Fiber.join(first), yield* Fiber.join(second), yield* Fiber.join(other)].map((r) => r.text)
        expect(texts).toStrictEqual(["x", "x", "x"])
        // given back when the reads ended
        expect([(yield* Ref.get(open)).get("r"), (yield* Ref.get(open)).get("w")]).toStrictEqual([0, 0])
        expect(yield* Ref.get(taken)).toBe(3)
      }),
    30_000
  )
})

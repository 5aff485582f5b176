/**
 * The subscription APIs (`/v1/stream/__ds/...`) through `DurableStreams.routes` on the
 * in-memory stores, with a scripted webhook receiver and the TestClock: requests that
 * are refused (and how), webhook retries while the receiver is down, leases that end.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"
import { createPublicKey, verify } from "node:crypto"
import * as DurableStoreMemory from "../src/DurableStoreMemory.js"
import * as DurableStreams from "../src/DurableStreams.js"
import * as DurableSubscriptions from "../src/DurableSubscriptions.js"
import * as SubscriptionEngine from "../src/internal/subscriptionEngine.js"
import { globMatches, type WebhookPolicy, webhookUrlProblem } from "../src/internal/subscriptionWire.js"
import { serve } from "./support/routes.js"

interface Post {
  readonly body: Record<string, unknown> & {
    readonly wake_id: string
    readonly generation: number
    readonly callback_token: string
    readonly streams: ReadonlyArray<{ readonly path: string; readonly tail_offset: string }>
  }
  readonly raw: string
  readonly signature: string
  readonly at: number
}

type Answer = { readonly status: number; readonly body: string | ReadableStream<Uint8Array> } | "unreachable"

const writer: DurableStreams.Access = { mayWrite: true }
const reader: DurableStreams.Access = { mayWrite: false }
const local: WebhookPolicy = { loopbackHttp: true, allowHosts: [] }
const hook = "http://127.0.0.1:9/hook"

interface Reply {
  readonly status: number
  readonly json: unknown
}

// The server's stores in memory, a receiver answering as `answer` says, and requests.
const harness = (
  answer: (post: Post, index: number) => Answer,
  policy: WebhookPolicy = local,
  lookup?: (host: string) => Effect.Effect<ReadonlyArray<string>, Error>
) =>
  Effect.gen(function*() {
    const store = yield* DurableStoreMemory.make
    const subscriptions = yield* Effect.provide(
      Effect.service(DurableSubscriptions.DurableSubscriptions),
      DurableSubscriptions.layerMemory
    )
    const posts: Array<Post> = []
    const client = HttpClient.make((request) =>
      Effect.flatMap(Clock.currentTimeMillis, (at) => {
        const raw = request.body._tag === "Uint8Array" ? new TextDecoder().decode(request.body.body) : ""
        const post: Post = { body: JSON.parse(raw), raw, signature: request.headers["webhook-signature"] ?? "", at }
        posts.push(post)
        const answered = answer(post, posts.length - 1)
        return answered === "unreachable"
          ? Effect.fail(
            new HttpClientError.HttpClientError({
              reason: new HttpClientError.TransportError({ request, description: "refused" })
            })
          )
          : Effect.succeed(
            HttpClientResponse.fromWeb(request, new Response(answered.body, { status: answered.status }))
          )
      })
    )
    const engine = yield* SubscriptionEngine.make(store, subscriptions, {
      ...SubscriptionEngine.defaultOptions,
      policy,
      lookup
    }).pipe(Effect.provideService(HttpClient.HttpClient, client))
    const context: DurableStreams.Context = {
      store: Option.some(store),
      longPollMs: 1_000,
      closing: Effect.never,
      subscriptions: engine,
      baseUrl: "http://127.0.0.1:8787"
    }
    const respond = (response: HttpServerResponse.HttpServerResponse) =>
      Effect.promise(async () => {
        const web = HttpServerResponse.toWeb(response)
        const text = await web.text()
        return { status: web.status, json: text === "" ? undefined : JSON.parse(text) } satisfies Reply
      })
    const build = (method: string, path: string, body?: unknown, token?: string) =>
      HttpServerRequest.fromWeb(
        new Request(`http://127.0.0.1:8787/v1/stream/${path}`, {
          method,
          headers: {
            "content-type": "application/json",
            host: "127.0.0.1:8787",
            ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
          },
          ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
        })
      )
    const call = (method: string, path: string, body?: unknown, credentials: DurableStreams.Access = writer) =>
      Effect.flatMap(serve(context, build(method, path, body), Effect.succeed(credentials)), respond)
    // a wake's own routes, as they arrive before the server's authentication
    const callOpen = (method: string, path: string, token: string, body: unknown) =>
      Effect.flatMap(
        serve(context, build(method, path, body, token), Effect.die(new Error(`${path} is not an open route`))),
        respond
      )
    const postsAtLeast = (n: number) =>
      Effect.gen(function*() {
        for (let i = 0; i < 10_000 && posts.length < n; i++) yield* Effect.yieldNow
        expect(posts.length).toBeGreaterThanOrEqual(n)
        return posts[n - 1]!
      })
    // subscription s1 (webhook, events/*, 1 s lease) woken by a first write to events/a
    const firstWake = Effect.gen(function*() {
      yield* call("PUT", "__ds/subscriptions/s1", webhook())
      yield* call("PUT", "events/a", { n: 1 })
      return yield* postsAtLeast(1)
    })
    return { call, callOpen, firstWake, posts, postsAtLeast, store }
  })

const errorOf = (reply: Reply) => (reply.json as { error: { code: string; message: string } }).error

const webhook = (extra: Record<string, unknown> = {}) => ({
  type: "webhook",
  pattern: "events/*",
  webhook: { url: hook },
  lease_ttl_ms: 1_000,
  ...extra
})

describe("subscription requests refused", () => {
  it.effect("a bad body is 400 INVALID_REQUEST naming the field", () =>
    Effect.gen(function*() {
      const { call } = yield* harness(() => ({ status: 200, body: "{}" }))
      const short = yield* call("PUT", "__ds/subscriptions/s1", webhook({ lease_ttl_ms: 10 }))
      expect(short.status).toBe(400)
      expect(errorOf(short).code).toBe("INVALID_REQUEST")
      expect(errorOf(short).message).toContain("lease_ttl_ms")
      const kind = yield* call("PUT", "__ds/subscriptions/s1", { ...webhook(), type: "push" })
      expect(errorOf(kind).message).toContain("type")
      const nothing = yield* call("PUT", "__ds/subscriptions/s1", { type: "webhook", webhook: { url: hook } })
      expect(errorOf(nothing).message).toBe("pattern or streams is required")
      const noUrl = yield* call("PUT", "__ds/subscriptions/s1", { type: "webhook", pattern: "events/*" })
      expect(errorOf(noUrl).message).toBe("webhook.url is required")
      const noWakeStream = yield* call("PUT", "__ds/subscriptions/s1", { type: "pull-wake", pattern: "events/*" })
      expect(errorOf(noWakeStream).message).toContain("wake_stream")
      const reserved = yield* call("PUT", "__ds/subscriptions/s1", webhook({ streams: ["__ds/x"] }))
      expect(errorOf(reserved).message).toContain("streams.0")
      const notJson = yield* call("PUT", "__ds/subscriptions/s1", "{")
      expect([notJson.status, errorOf(notJson).message]).toEqual([400, "the body is not JSON"])
      const badId = yield* call("PUT", "__ds/subscriptions/a%20b", webhook())
      expect([badId.status, errorOf(badId).code]).toEqual([400, "INVALID_REQUEST"])
    }))

  it.effect("unsafe webhook URLs are 400 WEBHOOK_URL_REJECTED", () =>
    Effect.gen(function*() {
      const { call } = yield* harness(() => ({ status: 200, body: "{}" }), { loopbackHttp: false, allowHosts: [] })
      for (
        const url of [
          "http://10.0.0.1/hook",
          "https://169.254.169.254/latest",
          "https://[::1]/hook",
          "https://service.internal/hook",
          "http://127.0.0.1:9/hook",
          "ftp://example.com/hook",
          "https://user:pw@example.com/hook"
        ]
      ) {
        const refused = yield* call("PUT", "__ds/subscriptions/s1", webhook({ webhook: { url } }))
        expect([url, refused.status, errorOf(refused).code]).toEqual([url, 400, "WEBHOOK_URL_REJECTED"])
      }
      const accepted = yield* call(
        "PUT",
        "__ds/subscriptions/s1",
        webhook({ webhook: { url: "https://hooks.example.com/x" } })
      )
      expect(accepted.status).toBe(201)
    }))

  it("the webhook URL policy: loopback http on an insecure-local server, and the allow-list", () => {
    expect(webhookUrlProblem("http://127.0.0.1:9/hook", local)).toBeUndefined()
    expect(webhookUrlProblem("http://localhost/hook", local)).toBeUndefined()
    expect(webhookUrlProblem("http://10.0.0.1/hook", local)).toBeDefined()
    const allowed = { loopbackHttp: false, allowHosts: ["10.0.0.1", "hooks.lan:8080"] }
    expect(webhookUrlProblem("http://10.0.0.1/hook", allowed)).toBeUndefined()
    expect(webhookUrlProblem("http://hooks.lan:8080/hook", allowed)).toBeUndefined()
    expect(webhookUrlProblem("http://hooks.lan:8081/hook", allowed)).toBeDefined()
  })

  it("glob patterns: * within a segment, ** across segments", () => {
    expect(globMatches("events/*", "events/a")).toBe(true)
    expect(globMatches("events/*", "events/a/b")).toBe(false)
    expect(globMatches("events/*", "events")).toBe(false)
    expect(globMatches("events/**", "events")).toBe(true)
    expect(globMatches("events/**", "events/a/b")).toBe(true)
    expect(globMatches("**/done", "a/b/done")).toBe(true)
    expect(globMatches("chat-*/x", "chat-42/x")).toBe(true)
    expect(globMatches("chat-*/x", "chats/x")).toBe(false)
    expect(globMatches("a.b/*", "axb/c")).toBe(false)
  })

  it.effect("an unknown subscription is 404; another configuration under its id is 409; a reader may not write", () =>
    Effect.gen(function*() {
      const { call } = yield* harness(() => ({ status: 200, body: "{}" }))
      for (
        const [method, path, body] of [
          ["GET", "__ds/subscriptions/nope", undefined],
          ["DELETE", "__ds/subscriptions/nope", undefined],
          ["POST", "__ds/subscriptions/nope/streams", { streams: ["a"] }],
          ["POST", "__ds/subscriptions/nope/claim", { worker: "w" }]
        ] as const
      ) {
        const missing = yield* call(method, path, body)
        expect([path, missing.status, errorOf(missing).code]).toEqual([path, 404, "SUBSCRIPTION_NOT_FOUND"])
      }
      expect((yield* call("PUT", "__ds/subscriptions/s1", webhook())).status).toBe(201)
      expect((yield* call("PUT", "__ds/subscriptions/s1", webhook())).status).toBe(200)
      const other = yield* call("PUT", "__ds/subscriptions/s1", webhook({ lease_ttl_ms: 2_000 }))
      expect([other.status, errorOf(other).code]).toEqual([409, "SUBSCRIPTION_ALREADY_EXISTS"])
      const forbidden = yield* call("DELETE", "__ds/subscriptions/s1", undefined, reader)
      expect([forbidden.status, errorOf(forbidden).code]).toEqual([403, "FORBIDDEN"])
      expect((yield* call("GET", "__ds/subscriptions/s1", undefined, reader)).status).toBe(200)
      const route = yield* call("GET", "__ds/nothing")
      expect([route.status, errorOf(route).code]).toEqual([404, "NOT_FOUND"])
    }))
})

describe("webhook delivery", () => {
  it.effect("signs each notification (Ed25519, the key of the JWK Set); done acks the wake's tails", () =>
    Effect.gen(function*() {
      const { call, postsAtLeast } = yield* harness(() => ({ status: 200, body: "{\"done\":true}" }))
      const created = yield* call("PUT", "__ds/subscriptions/s1", webhook())
      const jwks = (yield* call("GET", "__ds/jwks.json")).json as { keys: Array<Record<string, string>> }
      yield* call("PUT", "events/a", { n: 1 })
      const post = yield* postsAtLeast(1)
      const match = /^t=(\d+),kid=([^,]+),ed25519=([\w-]+)$/.exec(post.signature)!
      expect(match[2]).toBe((created.json as { webhook: { signing: { kid: string } } }).webhook.signing.kid)
      const key = createPublicKey({ key: jwks.keys.find((k) => k.kid === match[2])!, format: "jwk" })
      expect(verify(null, Buffer.from(`${match[1]}.${post.raw}`), key, Buffer.from(match[3]!, "base64url"))).toBe(true)
      expect(verify(null, Buffer.from(`${match[1]}.${post.raw} `), key, Buffer.from(match[3]!, "base64url"))).toBe(
        false
      )
      expect(post.body.callback_url).toBe("http://127.0.0.1:8787/v1/stream/__ds/subscriptions/s1/callback")
      const tail = post.body.streams.find((stream) => stream.path === "events/a")!.tail_offset
      for (let i = 0; i < 100; i++) yield* Effect.yieldNow
      const state = (yield* call("GET", "__ds/subscriptions/s1")).json as {
        streams: Array<{ path: string; acked_offset: string }>
      }
      expect(state.streams).toEqual([{ path: "events/a", link_type: "glob", acked_offset: tail }])
    }))

  it.effect("a receiver that is down: retried after 1 s, 2 s, 4 s (±20%), status failed, the same wake; then delivered", () =>
    Effect.gen(function*() {
      const { call, posts, postsAtLeast } = yield* harness((_, index) =>
        index < 3 ? (index === 0 ? "unreachable" : { status: 503, body: "" }) : { status: 200, body: "{\"done\":true}" }
      )
      yield* call("PUT", "__ds/subscriptions/s1", webhook())
      yield* call("PUT", "events/a", { n: 1 })
      yield* postsAtLeast(1)
      const status = () =>
        Effect.map(call("GET", "__ds/subscriptions/s1"), (reply) => (reply.json as { status: string }).status)
      for (let i = 0; i < 100; i++) yield* Effect.yieldNow
      expect(yield* status()).toBe("failed")
      // the clock moves 50 ms at a time until the fourth post
      for (let step = 0; step < 400 && posts.length < 4; step++) {
        yield* TestClock.adjust(50)
        for (let i = 0; i < 20; i++) yield* Effect.yieldNow
      }
      const gaps = posts.slice(1).map((post, i) => post.at - posts[i]!.at)
      expect(gaps.length).toBe(3)
      gaps.forEach((gap, i) => {
        expect(gap).toBeGreaterThanOrEqual(800 * 2 ** i)
        expect(gap).toBeLessThanOrEqual(1_200 * 2 ** i + 50)
      })
      for (let i = 0; i < 100; i++) yield* Effect.yieldNow
      expect(posts.map((post) => [post.body.generation, post.body.wake_id])).toEqual(
        posts.map(() => [1, posts[0]!.body.wake_id])
      )
      expect(yield* status()).toBe("active")
    }))

  it.effect("a reply past 64 KiB is read no further and fails the post: no ack, status failed", () =>
    Effect.gen(function*() {
      // a receiver that answers 200 with a body that never ends, 16 KiB a pull
      let pulled = 0
      const endless = () =>
        new ReadableStream<Uint8Array>({
          pull: (controller) => {
            pulled += 16 * 1024
            controller.enqueue(new Uint8Array(16 * 1024).fill(32))
          }
        })
      const { call, postsAtLeast } = yield* harness(() => ({ status: 200, body: endless() }))
      yield* call("PUT", "__ds/subscriptions/s1", webhook())
      yield* call("PUT", "events/a", { n: 1 })
      const post = yield* postsAtLeast(1)
      const tail = post.body.streams.find((stream) => stream.path === "events/a")!.tail_offset
      for (let i = 0; i < 200; i++) yield* Effect.yieldNow
      const state = (yield* call("GET", "__ds/subscriptions/s1")).json as {
        status: string
        streams: Array<{ path: string; acked_offset: string }>
      }
      expect(state.status).toBe("failed")
      expect(state.streams.map((stream) => stream.acked_offset)).not.toContain(tail)
      // the limit, and what the stream had queued ahead of the reader
      expect(pulled).toBeGreaterThan(64 * 1024)
      expect(pulled).toBeLessThanOrEqual(64 * 1024 + 4 * 16 * 1024)
    }))

  it.effect("a lease that ends without a callback wakes again (next generation); the old wake is fenced", () =>
    Effect.gen(function*() {
      const { callOpen, firstWake, postsAtLeast } = yield* harness(() => ({ status: 200, body: "{}" }))
      const first = yield* firstWake
      expect(first.body.generation).toBe(1)
      yield* TestClock.adjust(1_000)
      const second = yield* postsAtLeast(2)
      expect(second.body.generation).toBe(2)
      const ack = (post: Post, done: boolean) => ({
        wake_id: post.body.wake_id,
        generation: post.body.generation,
        acks: [{ stream: "events/a", offset: post.body.streams[0]!.tail_offset }],
        done
      })
      const callback = (token: string, body: unknown) => callOpen("POST", "__ds/subscriptions/s1/callback", token, body)
      const refused = (reply: Reply) => [reply.status, errorOf(reply).code]
      const offset = (n: number) => `0000000000000000_000000000000000${n}`
      expect(refused(yield* callback(first.body.callback_token, ack(first, true)))).toEqual([409, "FENCED"])
      expect(refused(yield* callback(first.body.callback_token, ack(second, true)))).toEqual([409, "FENCED"])
      expect(refused(yield* callback("x.y", ack(second, true)))).toEqual([401, "TOKEN_INVALID"])
      const token = second.body.callback_token
      const beyond = { ...ack(second, false), acks: [{ stream: "events/a", offset: offset(9) }] }
      expect(refused(yield* callback(token, beyond))).toEqual([409, "INVALID_OFFSET"])
      const unknown = { ...ack(second, false), acks: [{ stream: "events/b", offset: offset(1) }] }
      expect(refused(yield* callback(token, unknown))).toEqual([409, "INVALID_OFFSET"])
      const malformed = { ...ack(second, false), acks: [{ stream: "events/a", offset: "-1" }] }
      expect(refused(yield* callback(token, malformed))).toEqual([400, "INVALID_REQUEST"])
      const done = yield* callback(token, ack(second, true))
      expect(done).toEqual({ status: 200, json: { ok: true, next_wake: false } })
    }))

  it.effect("a callback for a deleted subscription fails and moves no cursor", () =>
    Effect.gen(function*() {
      const { call, callOpen, firstWake } = yield* harness(() => ({ status: 200, body: "{}" }))
      const post = yield* firstWake
      expect((yield* call("DELETE", "__ds/subscriptions/s1")).status).toBe(204)
      const late = yield* callOpen("POST", "__ds/subscriptions/s1/callback", post.body.callback_token, {
        wake_id: post.body.wake_id,
        generation: 1,
        done: true
      })
      expect([late.status, errorOf(late).code]).toEqual([404, "SUBSCRIPTION_NOT_FOUND"])
    }))
})

describe("webhook hosts and existing streams", () => {
  it.effect("a public name that resolves to a private address is never posted to: the delivery fails", () =>
    Effect.gen(function*() {
      const addresses: Record<string, ReadonlyArray<string>> = {
        "inside.example.com": ["93.184.216.34", "10.1.2.3"],
        "outside.example.com": ["93.184.216.34"]
      }
      const { call, posts, postsAtLeast } = yield* harness(
        () => ({ status: 200, body: "{\"done\":true}" }),
        { loopbackHttp: false, allowHosts: [] },
        (host) => Effect.succeed(addresses[host] ?? [])
      )
      const subscribe = (id: string, host: string, pattern: string) =>
        call("PUT", `__ds/subscriptions/${id}`, webhook({ pattern, webhook: { url: `https://${host}/hook` } }))
      expect((yield* subscribe("inside", "inside.example.com", "in/*")).status).toBe(201)
      expect((yield* subscribe("outside", "outside.example.com", "out/*")).status).toBe(201)
      yield* call("PUT", "in/a", { n: 1 })
      yield* call("PUT", "out/a", { n: 1 })
      yield* postsAtLeast(1)
      for (let i = 0; i < 100; i++) yield* Effect.yieldNow
      expect(posts.map((post) => post.body.subscription_id)).toEqual(["outside"])
      const inside = yield* call("GET", "__ds/subscriptions/inside")
      expect((inside.json as { status: string }).status).toBe("failed")
    }))

  it.effect("a new pattern links the streams that exist at their tail: only later entries wake it", () =>
    Effect.gen(function*() {
      const { call, postsAtLeast } = yield* harness(() => ({ status: 200, body: "{}" }))
      yield* call("PUT", "events/old", { n: 1 })
      yield* call("POST", "events/old", { n: 2 })
      yield* call("PUT", "other/x", { n: 1 })
      yield* call("PUT", "__ds/subscriptions/s1", webhook())
      const linked = (yield* call("GET", "__ds/subscriptions/s1")).json as { streams: unknown }
      expect(linked.streams).toEqual([
        { path: "events/old", link_type: "glob", acked_offset: "0000000000000000_0000000000000002" }
      ])
      yield* call("POST", "events/old", { n: 3 })
      const post = yield* postsAtLeast(1)
      expect(post.body.streams).toEqual([{
        path: "events/old",
        link_type: "glob",
        acked_offset: "0000000000000000_0000000000000002",
        tail_offset: "0000000000000000_0000000000000003",
        has_pending: true
      }])
    }))
})

describe("pull-wake", () => {
  it.effect("wake events, one claim at a time, a lease that ends frees the claim and fences its holder", () =>
    Effect.gen(function*() {
      const { call, callOpen, store } = yield* harness(() => ({ status: 200, body: "{}" }))
      expect((yield* call("PUT", "wake/pool", [])).status).toBe(201)
      const created = yield* call("PUT", "__ds/subscriptions/p1", {
        type: "pull-wake",
        pattern: "events/*",
        wake_stream: "wake/pool",
        lease_ttl_ms: 1_000
      })
      expect(created.status).toBe(201)
      const idle = yield* call("POST", "__ds/subscriptions/p1/claim", { worker: "w1" })
      expect([idle.status, errorOf(idle).code]).toEqual([409, "NO_PENDING_WORK"])
      yield* call("PUT", "events/a", { n: 1 })
      const wakes = yield* call("GET", "wake/pool?offset=-1")
      expect(wakes.json).toEqual([{ type: "wake", subscription_id: "p1", stream: "events/a", generation: 1, ts: 0 }])
      const claim = yield* call("POST", "__ds/subscriptions/p1/claim", { worker: "w1" })
      const claimed = claim.json as { token: string; wake_id: string; generation: number }
      expect([claim.status, claimed.generation]).toEqual([200, 1])
      const busy = yield* call("POST", "__ds/subscriptions/p1/claim", { worker: "w2" })
      expect(busy).toEqual({
        status: 409,
        json: {
          error: {
            code: "ALREADY_CLAIMED",
            message: "worker w1 holds subscription p1",
            current_holder: "w1",
            generation: 1
          }
        }
      })
      // an ack without done renews the lease
      yield* TestClock.adjust(600)
      const beat = yield* callOpen("POST", "__ds/subscriptions/p1/ack", claimed.token, {
        wake_id: claimed.wake_id,
        generation: 1
      })
      expect(beat.json).toEqual({ ok: true, next_wake: false })
      yield* TestClock.adjust(600)
      expect((yield* call("POST", "__ds/subscriptions/p1/claim", { worker: "w2" })).status).toBe(409)
      // the lease ends: a new wake, and w2 claims it
      yield* TestClock.adjust(1_000)
      const again = yield* call("POST", "__ds/subscriptions/p1/claim", { worker: "w2" })
      expect([again.status, (again.json as { generation: number }).generation]).toEqual([200, 2])
      const stale = yield* callOpen("POST", "__ds/subscriptions/p1/release", claimed.token, {
        wake_id: claimed.wake_id,
        generation: 1
      })
      expect([stale.status, errorOf(stale).code]).toEqual([409, "FENCED"])
      const events = Option.getOrThrow(yield* store.load("wake/pool"))
      expect(events.tail).toBe("0-2")
    }))
})

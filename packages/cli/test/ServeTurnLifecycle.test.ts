/**
 * A turn started over HTTP on a real `sluice serve` process, on redis-server, against a
 * loopback provider (docs/http.md#starting-a-turn):
 *
 * - a turn exists from the moment its id is given out: before its provider has sent
 *   anything but its start, it is in Redis (Stream A's `response_start`), shown by its
 *   snapshot and listed; `POST .../cancel` cancels it (within the process, without
 *   Redis), its provider request is closed, its answer ends `abort` and `[DONE]`, and
 *   its `--max-turns` place is free for the next turn;
 * - a client that goes away from its `POST` answer leaves the turn running, persisted:
 *   it can still be followed and cancelled;
 * - with Redis frozen or gone, `POST /v1/turns` is 503 `redis_unavailable` before any
 *   header, and the provider is not asked;
 * - SIGTERM while a turn waits on a silent provider: the turn ends `aborted` in both
 *   streams inside the shutdown budget, its answer gets that ending and `[DONE]` before
 *   the connection closes, the provider request is closed, and the process exits 143.
 *
 * (Before: XLEN 0 and a 404 snapshot, cancel 404 `turn_not_found`, the provider left
 * open and the place taken; a 200 with an empty stream with Redis down; the server
 * waiting 20 s for the answer, cutting it without `[DONE]`, then the pipeline 10 s more.)
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams, RedisStreamsLive } from "@sluice/redis"
import * as Loopback from "@sluice/testing/providers"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { inject } from "vitest"
// the type of inject("redisUrl"), which the redis package's global setup provides
import type {} from "@sluice/testing/redis/globalSetup"
import { scopedRedisServer } from "@sluice/testing/redis"
import { serveProcess } from "@sluice/testing/serve"

const recorded = readFileSync(join(import.meta.dirname, "..", "samples", "anthropic-weather.sse"), "utf8")
const redisUrl = inject("redisUrl")
// a busy test machine runs its timers late: no turn here is refused for it
const lag = { SLUICE_MAX_LAG_MS: "600000" }

const request = {
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  messages: [{ _tag: "user", text: "What's the weather in Lisbon?" }]
}

const post = (base: string, signal?: AbortSignal) =>
  Effect.promise(() =>
    fetch(`${base}/v1/turns`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(request),
      ...(signal === undefined ? {} : { signal })
    })
  )

const json = (url: string, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const response = await fetch(url, init)
    return { status: response.status, body: (await response.json()) as unknown }
  })

/** The RedisStreams of `url`, for the length of the scope. */
const redisAt = (url: string) =>
  Effect.map(
    Layer.build(RedisStreamsLive.layer({ url })),
    (context) => Context.get(context, RedisStreams.RedisStreams)
  )

/** Each stream's last entry's payload, decoded: Stream A's `response_done`, Stream B's `turn_completed`. */
const endingsOf = (redis: RedisStreams.RedisStreamsService, prefix: string, turnId: string) =>
  Effect.gen(function*() {
    const a = yield* redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+")
    const b = yield* redis.xrange(TurnKeys.upsertsKey(prefix, turnId), "-", "+")
    const lastA = yield* TurnEntry.toStreamEvent(a.at(-1)!)
    const lastB = JSON.parse((yield* TurnEntry.toStreamBMessage(b.at(-1)!)).payload) as { type: string; status: string }
    return {
      starts: a.filter((entry) => TurnEntry.toJson(entry).payloadType === "response_start").length,
      lastA: a.filter(TurnEntry.isFinal).length,
      lastB: b.filter(TurnEntry.isFinal).length,
      a: lastA.payload.type === "response_done" ? [lastA.payload.type, lastA.payload.status] : [lastA.payload.type],
      b: [lastB.type, lastB.status]
    }
  })

/**
 * A loopback provider with `replies`, and `sluice serve` (insecure-local, a prefix of
 * its own) on the Redis at `url` with that provider's Anthropic endpoint.
 */
const served = (replies: ReadonlyArray<Loopback.Reply>, url: string, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const prefix = `sluice-lifecycle-${randomUUID().slice(0, 8)}`
    const provider = yield* Loopback.serve(replies)
    const server = yield* serveProcess(
      { ...lag, SLUICE_REDIS_URL: url, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: provider.url, ...env },
      "--insecure-local",
      "--prefix",
      prefix
    )
    return { prefix, provider, server }
  })

/**
 * A turn that ended `status` (`cancelled`, `aborted`) while its provider had sent
 * nothing: its answer ends with the `abort` chunk and `[DONE]`, its provider request is
 * closed, and each stream holds one start and one last entry, with that status.
 */
const endedAs = (
  redis: RedisStreams.RedisStreamsService,
  prefix: string,
  turnId: string,
  answer: string,
  provider: Loopback.Loopback,
  status: "cancelled" | "aborted"
) =>
  Effect.gen(function*() {
    expect(answer).toContain(`"type":"abort","reason":"${status}"`)
    expect(answer.trimEnd().endsWith("data: [DONE]")).toBe(true)
    yield* provider.hungClosed
    expect(yield* endingsOf(redis, prefix, turnId)).toStrictEqual({
      starts: 1,
      lastA: 1,
      lastB: 1,
      a: ["response_done", status],
      b: ["turn_completed", status]
    })
  })

describe("sluice serve, a turn started over HTTP", () => {
  it.live(
    "exists once its id is given out: in Redis, shown, listed; cancelled, it ends and frees its provider and its place",
    () =>
      Effect.gen(function*() {
        // the first turn's provider sends its start and then nothing; the next answers whole
        const { prefix, provider, server } = yield* served(
          [{ _tag: "hang", body: recorded, events: 1 }, { _tag: "sse", body: recorded }],
          redisUrl,
          { SLUICE_MAX_TURNS: "1" }
        )
        const redis = yield* redisAt(redisUrl)
        const answer = yield* post(server.base)
        expect(answer.status).toBe(200)
        const turnId = answer.headers.get("x-sluice-turn-id")!
        yield* provider.hungWritten
        // in Redis, shown and listed, though its provider has said nothing but its start
        expect(yield* redis.xlen(TurnKeys.eventsKey(prefix, turnId))).toBe(1)
        expect(yield* json(`${server.base}/v1/turns/${turnId}`)).toMatchObject({
          status: 200,
          body: { turnId, status: "streaming", providerId: "anthropic" }
        })
        const listed = yield* json(`${server.base}/v1/turns`)
        expect(listed.body).toMatchObject({ turns: [{ turnId, status: "streaming" }] })
        // cancelled: 202, its answer ends, its provider request is closed
        expect(yield* json(`${server.base}/v1/turns/${turnId}/cancel`, { method: "POST" })).toStrictEqual({
          status: 202,
          body: { turnId, cancel: "requested" }
        })
        yield* endedAs(redis, prefix, turnId, yield* Effect.promise(() => answer.text()), provider, "cancelled")
        // its place is free: the next turn is taken and runs to its end
        const next = yield* post(server.base)
        expect(next.status).toBe(200)
        const nextText = yield* Effect.promise(() => next.text())
        expect(nextText).toContain(`"type":"finish"`)
        expect(provider.requests().length).toBe(2)
        // cancelling a turn that has ended is 409
        expect((yield* json(`${server.base}/v1/turns/${turnId}/cancel`, { method: "POST" })).status).toBe(409)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "a client that goes away from its POST answer leaves the turn running: followed, then cancelled",
    () =>
      Effect.gen(function*() {
        const { prefix, provider, server } = yield* served([{ _tag: "hang", body: recorded, events: 1 }], redisUrl)
        const redis = yield* redisAt(redisUrl)
        const controller = new AbortController()
        const answer = yield* post(server.base, controller.signal)
        expect(answer.status).toBe(200)
        const turnId = answer.headers.get("x-sluice-turn-id")!
        yield* provider.hungWritten
        controller.abort()
        // the turn goes on, persisted: a reader follows it from Redis until it is cancelled
        const events = yield* Effect.forkChild(
          Effect.promise(async () => (await fetch(`${server.base}/v1/turns/${turnId}/events`)).text())
        )
        expect((yield* json(`${server.base}/v1/turns/${turnId}`)).body).toMatchObject({ status: "streaming" })
        expect((yield* json(`${server.base}/v1/turns/${turnId}/cancel`, { method: "POST" })).status).toBe(202)
        const followed = yield* Fiber.join(events)
        expect(followed.match(/^event: response_done$/gm)?.length).toBe(1)
        yield* provider.hungClosed
        expect((yield* endingsOf(redis, prefix, turnId)).a).toStrictEqual(["response_done", "cancelled"])
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "with Redis frozen, then gone: 503 redis_unavailable before any header, the provider not asked",
    () =>
      Effect.gen(function*() {
        const own = yield* scopedRedisServer()
        const { provider, server } = yield* served([{ _tag: "sse", body: recorded }], own.url)
        const pid = own.pid()
        if (pid === undefined) return yield* Effect.die(new Error("redis-server has no pid"))
        const refused = (response: Response) =>
          Effect.promise(async () => {
            const text = await response.text()
            return {
              status: response.status,
              turnId: response.headers.get("x-sluice-turn-id"),
              body: response.status === 200 ? text : (JSON.parse(text) as unknown)
            }
          })
        // frozen: the turn cannot be written
        // frozen until it goes on below at the latest (it is gone by the end)
        yield* Effect.acquireRelease(
          Effect.sync(() => process.kill(pid, "SIGSTOP")),
          () => Effect.ignore(Effect.try(() => process.kill(pid, "SIGCONT")))
        )
        expect(yield* refused(yield* post(server.base))).toMatchObject({
          status: 503,
          turnId: null,
          body: { error: { code: "redis_unavailable" } }
        })
        expect(provider.requests().length).toBe(0)
        // going on: turns are taken again
        process.kill(pid, "SIGCONT")
        const taken = yield* post(server.base)
        expect(taken.status).toBe(200)
        expect((yield* Effect.promise(() => taken.text())).trimEnd().endsWith("data: [DONE]")).toBe(true)
        expect(provider.requests().length).toBe(1)
        // gone
        yield* Effect.promise(() => own.kill())
        expect(yield* refused(yield* post(server.base))).toMatchObject({
          status: 503,
          turnId: null,
          body: { error: { code: "redis_unavailable" } }
        })
        expect(provider.requests().length).toBe(1)
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "SIGTERM while a turn waits on a silent provider: it ends aborted in both streams, its answer gets the ending and [DONE], exit 143",
    () =>
      Effect.gen(function*() {
        const { prefix, provider, server } = yield* served([{ _tag: "silent" }], redisUrl)
        const redis = yield* redisAt(redisUrl)
        const answer = yield* post(server.base)
        expect(answer.status).toBe(200)
        const turnId = answer.headers.get("x-sluice-turn-id")!
        const text = yield* Effect.forkChild(Effect.promise(() => answer.text().catch(() => "(cut)")))
        while (provider.requests().length === 0) yield* Effect.sleep("20 millis")
        yield* server.kill("SIGTERM")
        expect(yield* server.exited).toBe(143)
        yield* endedAs(redis, prefix, turnId, yield* Fiber.join(text), provider, "aborted")
      }).pipe(Effect.scoped),
    120_000
  )
})

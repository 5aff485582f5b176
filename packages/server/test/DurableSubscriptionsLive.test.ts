/**
 * Webhook subscriptions through two turn servers that share one redis-server (the
 * global setup's), behind bearer tokens, with a real receiver on loopback (allowed by
 * `webhookAllowHosts`): both servers sign with the one stored key, a wake issued by
 * one is acknowledged through the other, and a wake's routes take the wake's token,
 * not the server's.
 */
import { describe, expect, it } from "@effect/vitest"
import { DurableStoreLive, DurableSubscriptions } from "@sluice/durable-streams"
import { RedisStreamsLive } from "@sluice/redis"
import { serveWith, tokens } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import { inject } from "vitest"

interface Notification {
  readonly subscription_id: string
  readonly wake_id: string
  readonly generation: number
  readonly callback_url: string
  readonly callback_token: string
  readonly streams: ReadonlyArray<{ readonly path: string; readonly tail_offset: string }>
}

// A webhook receiver on loopback: what it was sent, and a wait for the n-th post.
const receiver = Effect.acquireRelease(
  Effect.promise(async () => {
    const received: Array<Notification> = []
    const waiters: Array<() => void> = []
    const server = createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        received.push(JSON.parse(Buffer.concat(chunks).toString("utf8")))
        for (const wake of waiters.splice(0)) wake()
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    const nth = async (n: number) => {
      while (received.length < n) await new Promise<void>((resolve) => waiters.push(resolve))
      return received[n - 1]!
    }
    return { port, url: `http://127.0.0.1:${port}/hook`, received, nth, server }
  }),
  ({ server }) =>
    Effect.promise(() => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    })
)

const request = (url: string, init: RequestInit & { readonly token?: string | undefined } = {}) =>
  Effect.promise(async () => {
    const { token, ...rest } = init
    const response = await fetch(url, {
      ...rest,
      headers: {
        "content-type": "application/json",
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
      }
    })
    const text = await response.text()
    return { status: response.status, json: text === "" ? undefined : JSON.parse(text) }
  })

describe("subscriptions on redis-server through two servers", () => {
  it.effect(
    "a wake issued by one server is acknowledged through the other; wake routes take the wake's token",
    () =>
      Effect.gen(function*() {
        const url = inject("redisUrl")
        const prefix = `subscriptions-live-${randomUUID()}`
        const hook = yield* receiver
        const server = () =>
          Effect.flatMap(
            Layer.build(
              Layer.mergeAll(
                RedisStreamsLive.layer({ url }),
                DurableStoreLive.layer({ url, prefix }),
                DurableSubscriptions.layer({ url, prefix })
              )
            ),
            (stores) =>
              Effect.provide(
                serveWith({ tokens: [...tokens], prefix, webhookAllowHosts: [`127.0.0.1:${hook.port}`] }),
                stores
              )
          )
        const [a, b] = [yield* server(), yield* server()]
        const token = tokens[0]
        const subscription = `${a}/v1/stream/__ds/subscriptions/s1`
        const body = JSON.stringify({ type: "webhook", pattern: "events/*", webhook: { url: hook.url } })
        expect((yield* request(subscription, { method: "PUT", body })).status).toBe(401)
        const created = yield* request(subscription, { method: "PUT", body, token })
        expect(created.status).toBe(201)
        // both servers publish the one key, without a token
        const jwksA = yield* request(`${a}/v1/stream/__ds/jwks.json`)
        const jwksB = yield* request(`${b}/v1/stream/__ds/jwks.json`)
        expect(jwksB).toEqual(jwksA)
        expect(jwksA.json.keys[0].kid).toBe(created.json.webhook.signing.kid)

        const path = `events/${randomUUID()}`
        const put = yield* request(`${b}/v1/stream/${path}`, { method: "PUT", body: "{\"n\":1}", token })
        expect(put.status).toBe(201)
        const first = yield* Effect.promise(() => hook.nth(1))
        expect([first.subscription_id, first.generation]).toEqual(["s1", 1])
        expect(first.callback_url).toBe(`${a}/v1/stream/__ds/subscriptions/s1/callback`)

        const callback = `${b}/v1/stream/__ds/subscriptions/s1/callback`
        const ack = JSON.stringify({
          wake_id: first.wake_id,
          generation: first.generation,
          acks: [{ stream: path, offset: first.streams.find((stream) => stream.path === path)!.tail_offset }],
          done: true
        })
        const withoutToken = yield* request(callback, { method: "POST", body: ack })
        expect([withoutToken.status, withoutToken.json.error.code]).toEqual([401, "TOKEN_INVALID"])
        const withServerToken = yield* request(callback, { method: "POST", body: ack, token })
        expect([withServerToken.status, withServerToken.json.error.code]).toEqual([401, "TOKEN_INVALID"])
        const done = yield* request(callback, { method: "POST", body: ack, token: first.callback_token })
        expect(done).toEqual({ status: 200, json: { ok: true, next_wake: false } })

        yield* request(`${a}/v1/stream/${path}`, { method: "POST", body: "{\"n\":2}", token })
        const second = yield* Effect.promise(() => hook.nth(2))
        expect(hook.received.map((notification) => notification.generation)).toEqual([1, 2])
        expect(second.wake_id).not.toBe(first.wake_id)
        const state = yield* request(`${b}/v1/stream/__ds/subscriptions/s1`, { token })
        expect(state.json.streams).toEqual([{
          path,
          link_type: "glob",
          acked_offset: first.streams.find((stream) => stream.path === path)!.tail_offset
        }])
        expect((yield* request(`${b}/v1/stream/__ds/subscriptions/s1`, { method: "DELETE", token })).status).toBe(204)
      }),
    { timeout: 60_000 }
  )
})

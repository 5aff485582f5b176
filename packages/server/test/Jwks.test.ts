/**
 * The URLs the server writes into its answers (docs/http.md#limits; `jwks_url` once
 * reflected the request's `Host`): a subscription's `jwks_url`, a webhook's
 * `callback_url` and a created stream's `Location` start with the configured
 * `publicUrl`, else with the address the server listens on, whatever `Host` says.
 */
import { describe, expect, it } from "@effect/vitest"
import { DurableStoreMemory, DurableSubscriptions } from "@sluice/durable-streams"
import { RedisStreamsMemory } from "@sluice/redis"
import { serveWith } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { rawRequest } from "./support/bodyLimitsHttp.js"

const stores = Layer.mergeAll(RedisStreamsMemory.layer, DurableStoreMemory.layer, DurableSubscriptions.layerMemory)

// A webhook receiver on loopback: its URL, and the first notification's body.
const receiver = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ url: string; first: Promise<{ callback_url: string }>; close: () => void }>((resolve) => {
      let received: (body: { callback_url: string }) => void = () => {}
      const first = new Promise<{ callback_url: string }>((done) => (received = done))
      const server = createServer((request, response) => {
        const parts: Array<Buffer> = []
        request.on("data", (part: Buffer) => parts.push(part))
        request.on("end", () => {
          response.writeHead(200, { "content-type": "application/json" }).end("{}")
          received(JSON.parse(Buffer.concat(parts).toString("utf8")))
        })
      })
      server.listen(0, "127.0.0.1", () =>
        resolve({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
          first,
          close: () => server.close()
        }))
    })
  ),
  (hook) => Effect.sync(() => hook.close())
)

// A request with `Host: evil.example` and a JSON body.
const fromEvil = (port: number, method: string, path: string, body?: unknown) => {
  const text = body === undefined ? "" : JSON.stringify(body)
  return rawRequest(
    port,
    `${method} /v1/stream/${path} HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: ${
      Buffer.byteLength(text)
    }`,
    text === "" ? undefined : { chunk: Buffer.from(text), total: Buffer.byteLength(text), chunked: false }
  )
}

describe("URLs in answers", () => {
  it.effect("start with publicUrl whatever Host says: jwks_url, callback_url, Location", () =>
    Effect.gen(function*() {
      const hook = yield* receiver
      const base = yield* serveWith({ insecureLocal: true, publicUrl: "https://sluice.example.com/api/" })
      const port = Number(new URL(base).port)
      const subscription = { type: "webhook", pattern: "events/*", webhook: { url: hook.url } }
      const created = yield* fromEvil(port, "PUT", "__ds/subscriptions/s1", subscription)
      expect(created.status).toBe(201)
      const jwks = "https://sluice.example.com/api/v1/stream/__ds/jwks.json"
      expect(JSON.parse(created.body).webhook.signing.jwks_url).toBe(jwks)
      const read = yield* fromEvil(port, "GET", "__ds/subscriptions/s1")
      expect(JSON.parse(read.body).webhook.signing.jwks_url).toBe(jwks)
      const stream = yield* fromEvil(port, "PUT", "events/a", { n: 1 })
      expect([stream.status, stream.headers.location]).toEqual([
        201,
        "https://sluice.example.com/api/v1/stream/events/a"
      ])
      const notification = yield* Effect.promise(() => hook.first)
      expect(notification.callback_url).toBe("https://sluice.example.com/api/v1/stream/__ds/subscriptions/s1/callback")
    }).pipe(Effect.scoped, Effect.provide(stores)), 30_000)

  it.effect("without publicUrl, start with the address the server listens on, not Host", () =>
    Effect.gen(function*() {
      const base = yield* serveWith({ insecureLocal: true })
      const port = Number(new URL(base).port)
      const created = yield* fromEvil(port, "PUT", "__ds/subscriptions/s1", {
        type: "webhook",
        pattern: "events/*",
        webhook: { url: "http://127.0.0.1:9/hook" }
      })
      expect(JSON.parse(created.body).webhook.signing.jwks_url).toBe(
        `http://127.0.0.1:${port}/v1/stream/__ds/jwks.json`
      )
      const stream = yield* fromEvil(port, "PUT", "events/b", { n: 1 })
      expect(stream.headers.location).toBe(`http://127.0.0.1:${port}/v1/stream/events/b`)
    }).pipe(Effect.provide(stores)), 30_000)
})

/**
 * CORS preflights (docs/http.md#access; `OPTIONS /v1/turns` once got 401). A preflight
 * carries no credentials, so it is answered before authentication: the turn routes
 * with 204, their `Allow` and no `Access-Control-Allow-Origin` (they are for their
 * own origin: a browser refuses a cross-origin page there, as CORS says, instead of
 * meeting a 401), the Durable Streams routes with the protocol's CORS grant.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreamsMemory } from "@sluice/redis"
import { bearer, request, serve, tokens } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"

// What a browser sends before a cross-origin request with a bearer token.
const preflight = (method: string) => ({
  origin: "https://app.example.com",
  "access-control-request-method": method,
  "access-control-request-headers": "authorization"
})

describe("CORS preflights", () => {
  it.effect("turn routes: 204 with Allow, before authentication, granting no other origin", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const turnId = randomUUID()
      const routes = [
        ["/v1/turns", "GET", "GET, HEAD, POST, OPTIONS"],
        ["/v1/turns?limit=5", "GET", "GET, HEAD, POST, OPTIONS"],
        [`/v1/turns/${turnId}`, "GET", "GET, HEAD, OPTIONS"],
        [`/v1/turns/${turnId}/upserts`, "GET", "GET, HEAD, OPTIONS"],
        [`/v1/turns/${turnId}/events`, "GET", "GET, HEAD, OPTIONS"],
        [`/v1/turns/${turnId}/ui-message-stream`, "GET", "GET, HEAD, OPTIONS"],
        [`/v1/turns/${turnId}/cancel`, "POST", "POST, OPTIONS"],
        ["/metrics", "GET", "GET, HEAD, OPTIONS"]
      ] as const
      for (const [path, method, allow] of routes) {
        const reply = yield* request(`${base}${path}`, preflight(method), "OPTIONS")
        expect([path, reply.status, reply.headers.get("allow")]).toEqual([path, 204, allow])
        expect(reply.headers.get("access-control-allow-origin")).toBeNull()
        expect(reply.headers.get("access-control-allow-headers")).toBeNull()
      }
      // the request itself still needs its token
      expect((yield* request(`${base}/v1/turns`, { origin: "https://app.example.com" })).status).toBe(401)
      expect((yield* request(`${base}/v1/turns`, bearer(tokens[0]))).status).toBe(200)
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("an unknown route: 404 not_found, not 401", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const reply = yield* request(`${base}/nowhere`, preflight("GET"), "OPTIONS")
      expect([reply.status, reply.body]).toEqual([404, {
        error: { code: "not_found", message: "no route for OPTIONS /nowhere" }
      }])
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("Durable Streams routes: 204 with the protocol's CORS grant (any origin)", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const reply = yield* request(`${base}/v1/stream/turns/${randomUUID()}/events`, preflight("GET"), "OPTIONS")
      expect([reply.status, reply.headers.get("access-control-allow-origin")]).toEqual([204, "*"])
      expect(reply.headers.get("access-control-allow-headers")).toContain("authorization")
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

/**
 * Page tokens: signing and checking (form, scope, signature, expiry on the `Clock`),
 * and over real HTTP: a signed token in `?access_token=` opens the read API and its SSE
 * streams, an expired, altered or foreign one is 401, bearer tokens keep working, and
 * the page itself needs no credential.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreamsMemory } from "@sluice/redis"
import {
  bearer,
  open,
  prefix,
  publishEvents,
  publishUpserts,
  type Reply,
  request,
  serve,
  tokens
} from "@sluice/testing/server"
import { streamEvents, upsertMessages } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as FastCheck from "fast-check"
import { createHmac, randomUUID } from "node:crypto"
import * as TurnServer from "../src/TurnServer.js"
import * as ViewerToken from "../src/ViewerToken.js"

const key = ViewerToken.deriveKey(tokens)

const refusal = (token: string) => Effect.flip(ViewerToken.verify(key, token)).pipe(Effect.map((error) => error.reason))

// One character of the token replaced by another of the same alphabet.
const altered = (token: string, at: number, by: string) => `${token.slice(0, at)}${by}${token.slice(at + 1)}`

describe("ViewerToken", () => {
  it.effect("a token it issued verifies until it expires, by the Clock", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_700_000_000_000)
      const token = yield* ViewerToken.issue(key, 60_000)
      expect(token).toMatch(/^v1\.1700000060000\.read\.[A-Za-z0-9_-]{43}$/)
      expect(yield* ViewerToken.verify(key, token)).toStrictEqual({ expiresAt: 1_700_000_060_000, scope: "read" })
      yield* TestClock.adjust(59_999)
      expect((yield* ViewerToken.verify(key, token)).scope).toBe("read")
      yield* TestClock.adjust(1)
      expect(yield* refusal(token)).toBe("Expired")
    }))

  it.effect("the key depends on the set of tokens, not their order", () =>
    Effect.gen(function*() {
      const token = ViewerToken.sign(key, { expiresAt: 60_000, scope: "read" })
      expect((yield* ViewerToken.verify(ViewerToken.deriveKey([tokens[1], tokens[0]]), token)).scope).toBe("read")
      for (const other of [[tokens[0]], [...tokens, "token-gamma"], ["token-alpha-0123456789x", tokens[1]]]) {
        expect(yield* Effect.flip(ViewerToken.verify(ViewerToken.deriveKey(other), token))).toMatchObject({
          reason: "BadSignature"
        })
      }
    }))

  it.effect("malformed tokens, unknown scopes, a later expiry or a changed signature are refused", () =>
    Effect.gen(function*() {
      const token = ViewerToken.sign(key, { expiresAt: 60_000, scope: "read" })
      const mac = token.split(".")[3]!
      for (
        const text of [
          "",
          "v1",
          "v1.60000.read",
          `v2.60000.read.${mac}`,
          `v1.-1.read.${mac}`,
          `v1.60000.read.${mac}=`,
          ` ${token}`,
          `${token}.x`
        ]
      ) {
        expect(yield* refusal(text)).toBe("Malformed")
      }
      expect(yield* refusal(`v1.600000.read.${mac}`)).toBe("BadSignature")
      const write = ViewerToken.sign(key, { expiresAt: 60_000, scope: "read" }).replace(".read.", ".write.")
      expect(yield* refusal(write)).toBe("BadSignature")
      // A scope this server does not know, signed with its key.
      const forged = `v1.60000.write.${createHmac("sha256", key.bytes).update("v1.60000.write").digest("base64url")}`
      expect(yield* refusal(forged)).toBe("UnknownScope")
    }))

  it.effect(
    "any single character of the signature changed is refused (the unused bits of the last one too)",
    () =>
      Effect.gen(function*() {
        const run = Effect.runPromiseWith(yield* Effect.context<never>())
        yield* Effect.promise(() =>
          FastCheck.assert(
            FastCheck.asyncProperty(
              FastCheck.nat({ max: 42 }),
              FastCheck.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
              (at, by) =>
                run(Effect.gen(function*() {
                  const token = ViewerToken.sign(key, { expiresAt: 60_000, scope: "read" })
                  const start = token.lastIndexOf(".") + 1
                  if (token[start + at] === by) return
                  expect(yield* refusal(altered(token, start + at, by))).toBe("BadSignature")
                }))
            ),
            { numRuns: 100 }
          )
        )
      }),
    60_000
  )
})

const expectUnauthorized = (reply: Reply, message: RegExp) => {
  expect({ status: reply.status, body: reply.body }).toMatchObject({
    status: 401,
    body: { error: { code: "unauthorized" } }
  })
  expect(JSON.stringify(reply.body)).toMatch(message)
}

// A server with the test tokens, one finished turn, and its page tokens.
// The clock is set first: the in-memory store expires keys on it.
const withTurn = Effect.gen(function*() {
  yield* TestClock.setTime(1_700_000_000_000)
  const base = yield* serve()
  const turnId = randomUUID()
  yield* publishUpserts(turnId, upsertMessages(turnId, 6))
  yield* publishEvents(turnId, streamEvents(turnId, 5))
  return { base, turnId }
})

const readRoutes = (
  turnId: string
) => ["/v1/turns", `/v1/turns/${turnId}`, `/v1/turns/${turnId}/upserts`, `/v1/turns/${turnId}/events`]

describe("page tokens over HTTP", () => {
  it.effect("a signed token in ?access_token= opens every read route, SSE included; bearer tokens still work", () =>
    Effect.gen(function*() {
      const { base, turnId } = yield* withTurn
      const token = yield* ViewerToken.issue(key, 60_000)
      for (const path of readRoutes(turnId)) {
        const joiner = path.includes("?") ? "&" : "?"
        expect((yield* request(`${base}${path}${joiner}access_token=${token}`)).status).toBe(200)
        expect((yield* request(`${base}${path}`, bearer(tokens[1]))).status).toBe(200)
      }
      const list = yield* request(`${base}/v1/turns?limit=5&access_token=${token}`)
      expect(list.body).toMatchObject({ turns: [{ turnId, startedAt: expect.any(Number) }] })
      // The SSE stream replays the turn for the page as for a bearer token.
      const stream = yield* open(`${base}/v1/turns/${turnId}/upserts?after=0-2&access_token=${token}`)
      expect(stream.status).toBe(200)
      const ids = Array.from(yield* Stream.runCollect(stream.events), (event) => event.id)
      expect(ids).toStrictEqual(["0-3", "0-4", "0-5", "0-6"])
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("an expired, altered or foreign token is 401 on every route; so is a repeated one or one sent as a bearer", () =>
    Effect.gen(function*() {
      const { base, turnId } = yield* withTurn
      const token = yield* ViewerToken.issue(key, 60_000)
      const [version, expiry, scope, mac] = token.split(".")
      const foreign = ViewerToken.sign(ViewerToken.deriveKey(["another-server-token"]), {
        expiresAt: 1_700_000_060_000,
        scope: "read"
      })
      const cases: ReadonlyArray<readonly [string, RegExp]> = [
        [`access_token=${version}.${Number(expiry) + 3_600_000}.${scope}.${mac}`, /signature does not match/],
        [
          `access_token=${altered(token, token.length - 1, token.endsWith("A") ? "B" : "A")}`,
          /signature does not match/
        ],
        [`access_token=${foreign}`, /signature does not match/],
        [`access_token=${tokens[0]}`, /not a page token/],
        [`access_token=${token}&access_token=${token}`, /given 2 times/],
        ["access_token=", /not a page token/]
      ]
      for (const path of [...readRoutes(turnId), "/nowhere"]) {
        const joiner = path.includes("?") ? "&" : "?"
        for (const [query, message] of cases) {
          expectUnauthorized(yield* request(`${base}${path}${joiner}${query}`), message)
        }
        expectUnauthorized(yield* request(`${base}${path}`, bearer(token)), /invalid bearer token/)
      }
      yield* TestClock.adjust(60_000)
      for (const path of readRoutes(turnId)) {
        expectUnauthorized(yield* request(`${base}${path}?access_token=${token}`), /expired/)
        expect((yield* request(`${base}${path}`, bearer(tokens[0]))).status).toBe(200)
      }
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("the page and its assets need no credential and carry a strict content security policy", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const page = yield* request(`${base}/`)
      expect(page.status).toBe(200)
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
      expect(page.headers.get("content-security-policy")).toMatch(/default-src 'none'; script-src 'self'/)
      expect(page.headers.get("referrer-policy")).toBe("no-referrer")
      expect(String(page.body)).toContain(`<script defer src="/viewer.js"></script>`)
      expect((yield* request(`${base}/viewer.js`)).headers.get("content-type")).toBe("text/javascript; charset=utf-8")
      expect((yield* request(`${base}/viewer.css`)).headers.get("content-type")).toBe("text/css; charset=utf-8")
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it.effect("pageUrl: a signed link in the fragment, or the bare page on an insecure-local server", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_700_000_000_000)
      const secured = yield* Layer.build(TurnServer.layer({ port: 0, host: "127.0.0.1", prefix, tokens: [...tokens] }))
      const link = yield* Effect.provide(TurnServer.pageUrl(60_000), secured)
      expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#access_token=v1\.1700000060000\.read\.[A-Za-z0-9_-]{43}$/)
      const token = link.split("#access_token=")[1]!
      expect(yield* ViewerToken.verify(key, token)).toStrictEqual({ expiresAt: 1_700_000_060_000, scope: "read" })
      const open = yield* Layer.build(TurnServer.layer({ port: 0, prefix, insecureLocal: true }))
      expect(yield* Effect.provide(TurnServer.pageUrl(60_000), open)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
      const signer = yield* Effect.provide(ViewerToken.Signer, open)
      expect(yield* signer.issue(60_000)).toStrictEqual(Option.none())
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))
})

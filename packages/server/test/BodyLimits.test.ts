/**
 * Request bodies under their route's limit (docs/http.md#limits): a body over the limit
 * is answered 413 without the server reading it (counted in bytes, never timed); the
 * credentials of a request, the wake's token of a subscription callback or ack
 * included, are checked before a byte of its body is read; a body is read in one pass
 * (its chunks joined once: a 16 MiB append costs one copy of 16 MiB, where joining
 * each chunk onto what came before, as Effect 3's body reader did, copies 8 GiB).
 */
import { describe, expect, it } from "@effect/vitest"
import { DurableStoreMemory, DurableSubscriptions } from "@sluice/durable-streams"
import { RequestBody } from "@sluice/durable-streams"
import { RedisStreamsMemory } from "@sluice/redis"
import { serve, serveWith, tokens } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { rawRequest } from "./support/bodyLimitsHttp.js"

const MiB = 1024 * 1024
const stores = Layer.mergeAll(RedisStreamsMemory.layer, DurableStoreMemory.layer, DurableSubscriptions.layerMemory)
const portOf = (base: string) => Number(new URL(base).port)
const auth = `Authorization: Bearer ${tokens[0]}`

// `count` chunks of `size` bytes (chunk i filled with i % 251), made only as they are
// pulled; `pulled` counts the bytes pulled.
const chunks = (count: number, size: number) => {
  const pulled = { bytes: 0 }
  const stream = Stream.fromIterable(Array.from({ length: count }, (_, i) => i)).pipe(
    Stream.rechunk(1),
    Stream.map((i) => {
      pulled.bytes += size
      return new Uint8Array(size).fill(i % 251)
    })
  )
  return { stream, pulled }
}

// A join that counts its calls and the bytes it copies.
const countingJoin = () => {
  const counted = { joins: 0, copied: 0 }
  const join: RequestBody.Join = (parts, total) => {
    counted.joins++
    const joined = new Uint8Array(total)
    let at = 0
    for (const part of parts) {
      joined.set(part, at)
      at += part.length
      counted.copied += part.length
    }
    return joined
  }
  return { join, counted }
}

describe("reading a body", () => {
  it.effect("16 MiB in 1,024 chunks: joined once, each byte copied once", () =>
    Effect.gen(function*() {
      const { pulled, stream } = chunks(1024, 16 * 1024)
      const { counted, join } = countingJoin()
      const body = yield* RequestBody.collect(stream, 32 * MiB, join)
      expect(body.length).toBe(16 * MiB)
      expect(counted).toEqual({ joins: 1, copied: 16 * MiB })
      expect(pulled.bytes).toBe(16 * MiB)
      expect([body[0], body[16 * 1024], body[16 * MiB - 1]]).toEqual([0, 1, 1023 % 251])
    }))

  it.effect("the copies grow linearly with the size: 1, 4 and 16 MiB cost 1, 4 and 16 MiB", () =>
    Effect.gen(function*() {
      const copied: Array<number> = []
      for (const mib of [1, 4, 16]) {
        const { counted, join } = countingJoin()
        yield* RequestBody.collect(chunks(mib * 64, 16 * 1024).stream, 32 * MiB, join)
        copied.push(counted.copied / MiB)
      }
      expect(copied).toEqual([1, 4, 16])
    }))

  it.effect("over the limit: refused as soon as it goes over, the rest never pulled", () =>
    Effect.gen(function*() {
      const { pulled, stream } = chunks(64, MiB)
      const { counted, join } = countingJoin()
      const refused = yield* Effect.flip(RequestBody.collect(stream, 4 * MiB, join))
      expect(refused).toBeInstanceOf(RequestBody.BodyTooLarge)
      expect(pulled.bytes).toBe(5 * MiB)
      expect(counted.joins).toBe(0)
    }))

  it.effect("an empty body, and one chunk, are not copied", () =>
    Effect.gen(function*() {
      const { counted, join } = countingJoin()
      expect((yield* RequestBody.collect(Stream.empty, 10, join)).length).toBe(0)
      expect(yield* RequestBody.collect(Stream.make(new Uint8Array([1, 2, 3])), 10, join)).toEqual(
        new Uint8Array([1, 2, 3])
      )
      expect(counted.joins).toBe(0)
    }))
})

describe("Durable Streams writes over HTTP", () => {
  it.effect(
    "a declared body over the limit: 413 before a byte of it is sent, then the connection closes",
    () =>
      Effect.gen(function*() {
        const base = yield* serve({ maxBodyBytes: MiB })
        const port = portOf(base)
        const created = yield* rawRequest(
          port,
          `PUT /v1/stream/big HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/octet-stream\r\nContent-Length: 0`
        )
        expect(created.status).toBe(201)
        for (const method of ["POST", "PUT"]) {
          const name = method === "POST" ? "big" : "other"
          const reply = yield* rawRequest(
            port,
            `${method} /v1/stream/${name} HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${
              64 * MiB
            }`
          )
          expect([reply.status, reply.headers.connection, reply.sent]).toEqual([413, "close", 0])
          expect(reply.body).toBe(
            `the request body (Content-Length ${64 * MiB}) is larger than ${MiB} bytes, this route's limit`
          )
        }
        // a client that waits for 100 Continue gets the 413 instead
        const waiting = yield* rawRequest(
          port,
          `POST /v1/stream/big HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/octet-stream\r\nExpect: 100-continue\r\nContent-Length: ${
            64 * MiB
          }`
        )
        expect([waiting.status, waiting.sent]).toEqual([413, 0])
      }).pipe(Effect.provide(stores)),
    60_000
  )

  it.effect(
    "a chunked body over the limit: 413 once the limit is passed, and far less than the body is taken",
    () =>
      Effect.gen(function*() {
        const base = yield* serve({ maxBodyBytes: MiB })
        const port = portOf(base)
        yield* rawRequest(
          port,
          `PUT /v1/stream/big HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/octet-stream\r\nContent-Length: 0`
        )
        const reply = yield* rawRequest(
          port,
          `POST /v1/stream/big HTTP/1.1\r\nHost: x\r\n${auth}\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked`,
          { chunk: new Uint8Array(64 * 1024).fill(1), total: 256 * MiB, chunked: true }
        )
        expect(reply.status).toBe(413)
        expect(reply.body).toBe(`the request body is larger than ${MiB} bytes, this route's limit`)
        // what the socket buffers hold besides the limit, never the whole body
        expect(reply.sent).toBeGreaterThan(MiB)
        expect(reply.sent).toBeLessThan(32 * MiB)
        // nothing of it was stored
        const read = yield* Effect.promise(() =>
          fetch(`${base}/v1/stream/big?offset=-1`, { headers: { authorization: `Bearer ${tokens[0]}` } })
        )
        expect([read.status, (yield* Effect.promise(() => read.arrayBuffer())).byteLength]).toEqual([200, 0])
      }).pipe(Effect.provide(stores)),
    60_000
  )

  it.effect(
    "16 MiB appended under a raised limit is stored whole; the default limit (8 MiB) refuses 10 MB",
    () =>
      Effect.gen(function*() {
        const raised = yield* serve({ maxBodyBytes: 32 * MiB })
        const headers = { authorization: `Bearer ${tokens[0]}`, "content-type": "application/octet-stream" }
        const body = new Uint8Array(16 * MiB)
        for (let i = 0; i < body.length; i += 4096) body[i] = (i / 4096) % 256
        const statuses = yield* Effect.promise(async () => {
          const put = await fetch(`${raised}/v1/stream/large`, { method: "PUT", headers })
          const post = await fetch(`${raised}/v1/stream/large`, { method: "POST", headers, body })
          return [put.status, post.status]
        })
        expect(statuses).toEqual([201, 204])
        const stored = yield* Effect.promise(async () => {
          const read = await fetch(`${raised}/v1/stream/large?offset=-1`, { headers })
          return new Uint8Array(await read.arrayBuffer())
        })
        expect(stored.length).toBe(16 * MiB)
        expect(Buffer.compare(stored, body)).toBe(0)

        const byDefault = yield* serve()
        const refused = yield* Effect.promise(async () => {
          await fetch(`${byDefault}/v1/stream/large`, { method: "PUT", headers })
          const post = await fetch(`${byDefault}/v1/stream/large`, {
            method: "POST",
            headers,
            body: new Uint8Array(10_000_000)
          })
          return post.status
        })
        expect(refused).toBe(413)
      }).pipe(Effect.provide(stores)),
    60_000
  )

  it.effect("without a valid token a write is refused before its body is read", () =>
    Effect.gen(function*() {
      const port = portOf(yield* serve({ maxBodyBytes: 64 * MiB }))
      for (const authorization of ["", "Authorization: Bearer not-a-token\r\n"]) {
        const reply = yield* rawRequest(
          port,
          `POST /v1/stream/big HTTP/1.1\r\nHost: x\r\n${authorization}Content-Type: application/octet-stream\r\nContent-Length: ${
            32 * MiB
          }`
        )
        expect([reply.status, reply.sent]).toEqual([401, 0])
      }
    }).pipe(Effect.provide(stores)), 60_000)
})

describe("subscription routes over HTTP", () => {
  // A server without tokens and a pull-wake subscription p1 with a wake claimed: the
  // claim's token, and the wake.
  const claimed = (options: Parameters<typeof serveWith>[0] = {}) =>
    Effect.gen(function*() {
      const base = yield* serveWith({ insecureLocal: true, ...options })
      const call = (method: string, path: string, body: unknown, token?: string) =>
        Effect.promise(async () => {
          const response = await fetch(`${base}/v1/stream/${path}`, {
            method,
            headers: {
              "content-type": "application/json",
              ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
            },
            body: JSON.stringify(body)
          })
          const text = await response.text()
          return { status: response.status, json: text === "" ? undefined : JSON.parse(text) }
        })
      expect((yield* call("PUT", "wake/pool", [])).status).toBe(201)
      for (const id of ["p1", "p2"]) {
        const created = yield* call("PUT", `__ds/subscriptions/${id}`, {
          type: "pull-wake",
          pattern: "events/*",
          wake_stream: "wake/pool"
        })
        expect(created.status).toBe(201)
      }
      expect((yield* call("PUT", "events/a", { n: 1 })).status).toBe(201)
      const claim = yield* call("POST", "__ds/subscriptions/p2/claim", { worker: "w" })
      expect(claim.status).toBe(200)
      const wake = claim.json as { token: string; wake_id: string; generation: number }
      return { port: portOf(base), call, wake }
    })

  it.effect(
    "a callback, ack or release with a bad token: 401 before a byte of its body is sent",
    () =>
      Effect.gen(function*() {
        const { port, wake } = yield* claimed()
        for (const action of ["callback", "ack", "release"]) {
          for (
            const authorization of [
              "",
              "Authorization: Bearer any-string\r\n",
              "Authorization: Basic abc\r\n",
              // a real token, of another subscription's wake
              `Authorization: Bearer ${wake.token}\r\n`
            ]
          ) {
            const reply = yield* rawRequest(
              port,
              `POST /v1/stream/__ds/subscriptions/p1/${action} HTTP/1.1\r\nHost: x\r\n${authorization}Content-Type: application/json\r\nContent-Length: ${
                32 * MiB
              }`
            )
            expect([action, reply.status, JSON.parse(reply.body).error.code, reply.sent]).toEqual([
              action,
              401,
              "TOKEN_INVALID",
              0
            ])
          }
        }
      }).pipe(Effect.provide(stores)),
    60_000
  )

  it.effect(
    "the wake's own token with a body over the limit: 413 PAYLOAD_TOO_LARGE, unread; within it, answered",
    () =>
      Effect.gen(function*() {
        const { call, port, wake } = yield* claimed({ maxSubscriptionBodyBytes: 4096 })
        const over = yield* rawRequest(
          port,
          `POST /v1/stream/__ds/subscriptions/p2/ack HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${wake.token}\r\nContent-Type: application/json\r\nContent-Length: ${
            32 * MiB
          }`
        )
        expect([over.status, JSON.parse(over.body).error.code, over.sent]).toEqual([413, "PAYLOAD_TOO_LARGE", 0])
        const padded = yield* call(
          "POST",
          "__ds/subscriptions/p2/ack",
          { wake_id: wake.wake_id, generation: wake.generation, pad: "x".repeat(5000) },
          wake.token
        )
        expect([padded.status, padded.json.error.code]).toEqual([413, "PAYLOAD_TOO_LARGE"])
        const ack = yield* call(
          "POST",
          "__ds/subscriptions/p2/ack",
          { wake_id: wake.wake_id, generation: wake.generation },
          wake.token
        )
        expect(ack).toEqual({ status: 200, json: { ok: true, next_wake: false } })
        // the routes of the server's tokens have the same limit
        const create = yield* call("PUT", "__ds/subscriptions/p3", {
          type: "pull-wake",
          pattern: "events/*",
          wake_stream: "wake/pool",
          description: "x".repeat(5000)
        })
        expect([create.status, create.json.error.code]).toEqual([413, "PAYLOAD_TOO_LARGE"])
      }).pipe(Effect.provide(stores)),
    60_000
  )
})

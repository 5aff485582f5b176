/**
 * Response compression: the `Accept-Encoding` negotiation as a table, entity tags of
 * the two representations, and over real HTTP (read with `node:http`, which leaves
 * the body as sent) a Durable Streams catch-up read and a turn's snapshot gzipped
 * byte-exact for a client that asks, as they are for one that does not, conditional
 * GETs for either representation, live reads never compressed, and the switch off.
 */
import { describe, expect, it } from "@effect/vitest"
import { DurableStoreMemory } from "@sluice/durable-streams"
import { HttpCompression as Compression } from "@sluice/durable-streams"
import { RedisStreamsMemory } from "@sluice/redis"
import { acceptEncodings } from "@sluice/testing/fixtures"
import { bearer, publishUpserts, serve, tokens } from "@sluice/testing/server"
import { upsertMessages } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import { get, type IncomingHttpHeaders } from "node:http"
import { gunzipSync } from "node:zlib"

const auth = bearer(tokens[0])
const stores = Layer.merge(RedisStreamsMemory.layer, DurableStoreMemory.layer)

interface Raw {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
}

/** A GET whose body is read as sent: no coding undone, no header added. */
const rawGet = (url: string, headers: Record<string, string> = {}): Effect.Effect<Raw> =>
  Effect.callback<Raw>((resume) => {
    const request = get(url, { headers: { ...auth, ...headers } }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on(
        "end",
        () =>
          resume(
            Effect.succeed({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) })
          )
      )
      response.on("error", (error) => resume(Effect.die(error)))
    })
    request.on("error", (error) => resume(Effect.die(error)))
    return Effect.sync(() => request.destroy())
  })

const gzip = { "accept-encoding": "gzip" }

describe("Accept-Encoding negotiation", () => {
  for (const [header, expected] of acceptEncodings) {
    it(`${JSON.stringify(header)} is ${expected}`, () => {
      expect(Compression.negotiate(header)).toBe(expected)
    })
  }

  it("compression off never compresses", () => {
    expect(Compression.encodingFor(false, "gzip")).toBeUndefined()
    expect(Compression.encodingFor(true, "gzip")).toBe("gzip")
  })
})

describe("entity tags", () => {
  it("the gzip representation's tag has -gzip inside the quotes", () => {
    expect(Compression.etagOf("\"abc:-1:00_01\"", "gzip")).toBe("\"abc:-1:00_01-gzip\"")
    expect(Compression.etagOf("\"abc\"", "identity")).toBe("\"abc\"")
  })

  it("If-None-Match matches either representation, weakly, in a list, or as *", () => {
    const tags = ["\"abc\"", "\"abc-gzip\""]
    expect(Compression.matching(undefined, tags)).toBeUndefined()
    expect(Compression.matching("\"abc\"", tags)).toBe("\"abc\"")
    expect(Compression.matching("\"abc-gzip\"", tags)).toBe("\"abc-gzip\"")
    expect(Compression.matching("W/\"abc-gzip\"", tags)).toBe("\"abc-gzip\"")
    expect(Compression.matching("\"other\", \"abc\"", tags)).toBe("\"abc\"")
    expect(Compression.matching("*", tags)).toBe("\"abc\"")
    expect(Compression.matching("\"abd\"", tags)).toBeUndefined()
    expect(Compression.matching("\"abc-gzip-gzip\"", tags)).toBeUndefined()
  })
})

// A JSON stream of the server's own with `count` values of about 200 bytes each.
const jsonStream = (base: string, count: number) =>
  Effect.gen(function*() {
    const url = `${base}/v1/stream/compressed/${randomUUID()}`
    const values = Array.from({ length: count }, (_, i) => ({ i, text: `value ${i} `.repeat(20) }))
    yield* Effect.promise(() =>
      fetch(url, {
        method: "PUT",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify(values)
      })
    )
    return { url, values }
  })

describe("compressed responses over HTTP", () => {
  it.effect("a catch-up read is gzipped for a client that accepts it, byte-exact; as it is without Accept-Encoding", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const { url, values } = yield* jsonStream(base, 50)
      const plain = yield* rawGet(`${url}?offset=-1`)
      expect(plain.status).toBe(200)
      expect(plain.headers["content-encoding"]).toBeUndefined()
      expect(plain.headers.vary).toBe("accept-encoding")
      expect(JSON.parse(plain.body.toString("utf8"))).toStrictEqual(values)

      const zipped = yield* rawGet(`${url}?offset=-1`, gzip)
      expect(zipped.status).toBe(200)
      expect(zipped.headers["content-encoding"]).toBe("gzip")
      expect(zipped.headers.vary).toBe("accept-encoding")
      expect(zipped.headers["content-type"]).toBe("application/json")
      expect(Number(zipped.headers["content-length"])).toBe(zipped.body.length)
      expect(zipped.body.length).toBeLessThan(plain.body.length / 4)
      expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true)
      expect(zipped.headers["stream-next-offset"]).toBe(plain.headers["stream-next-offset"])
      expect(zipped.headers.etag).toBe(Compression.etagOf(plain.headers.etag!, "gzip"))
      expect(zipped.headers.etag).not.toBe(plain.headers.etag)

      // gzip refused, or not offered above identity: as it is
      for (const refusing of ["gzip;q=0", "identity, gzip;q=0.5", "br"]) {
        const reply = yield* rawGet(`${url}?offset=-1`, { "accept-encoding": refusing })
        expect(reply.headers["content-encoding"]).toBeUndefined()
        expect(reply.body.equals(plain.body)).toBe(true)
      }
    }).pipe(Effect.provide(stores)))

  it.effect("a body under 1 KiB goes as it is, with Vary", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const { url } = yield* jsonStream(base, 1)
      const reply = yield* rawGet(`${url}?offset=-1`, gzip)
      expect(reply.body.length).toBeLessThan(Compression.minBytes)
      expect(reply.headers["content-encoding"]).toBeUndefined()
      expect(reply.headers.vary).toBe("accept-encoding")
    }).pipe(Effect.provide(stores)))

  it.effect("conditional GETs: If-None-Match with either representation's tag is 304, a stale one 200", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const { url } = yield* jsonStream(base, 50)
      const read = `${url}?offset=-1`
      const plainTag = (yield* rawGet(read)).headers.etag!
      const gzipTag = (yield* rawGet(read, gzip)).headers.etag!
      for (const [tag, headers] of [[gzipTag, gzip], [plainTag, gzip], [plainTag, {}], [gzipTag, {}]] as const) {
        const reply = yield* rawGet(read, { ...headers, "if-none-match": tag })
        expect(reply.status).toBe(304)
        expect(reply.headers.etag).toBe(tag)
        expect(reply.body.length).toBe(0)
      }
      const stale = yield* rawGet(read, { ...gzip, "if-none-match": "\"stale-gzip\"" })
      expect(stale.status).toBe(200)
      expect(stale.headers["content-encoding"]).toBe("gzip")
      // an append changes both tags
      yield* Effect.promise(() =>
        fetch(url, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({ more: true })
        })
      )
      const after = yield* rawGet(read, { ...gzip, "if-none-match": gzipTag })
      expect(after.status).toBe(200)
      expect(after.headers.etag).not.toBe(gzipTag)
    }).pipe(Effect.provide(stores)))

  it.effect("live reads are never compressed: a long-poll with data and SSE", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const { url } = yield* jsonStream(base, 50)
      const poll = yield* rawGet(`${url}?offset=-1&live=long-poll`, gzip)
      expect(poll.status).toBe(200)
      expect(poll.headers["content-encoding"]).toBeUndefined()
      expect(poll.headers.vary).toBeUndefined()
      expect(JSON.parse(poll.body.toString("utf8"))).toHaveLength(50)
      // a closed stream ends its SSE response after the data
      yield* Effect.promise(() => fetch(url, { method: "POST", headers: { ...auth, "stream-closed": "true" } }))
      const sse = yield* rawGet(`${url}?offset=-1&live=sse`, gzip)
      expect(sse.headers["content-type"]).toMatch(/^text\/event-stream/)
      expect(sse.headers["content-encoding"]).toBeUndefined()
      expect(sse.body.toString("utf8")).toContain("streamClosed")
    }).pipe(Effect.provide(stores)))

  it.effect("a turn's stream and its snapshot are gzipped byte-exact; as they are without Accept-Encoding", () =>
    Effect.gen(function*() {
      const base = yield* serve()
      const turnId = randomUUID()
      yield* publishUpserts(turnId, upsertMessages(turnId, 200))
      for (const path of [`/v1/turns/${turnId}`, `/v1/stream/turns/${turnId}/upserts?offset=-1`]) {
        const plain = yield* rawGet(`${base}${path}`)
        const zipped = yield* rawGet(`${base}${path}`, { "accept-encoding": "gzip, deflate, br" })
        expect([plain.status, zipped.status]).toStrictEqual([200, 200])
        expect(plain.headers["content-encoding"]).toBeUndefined()
        expect(zipped.headers["content-encoding"]).toBe("gzip")
        expect(zipped.headers.vary).toBe("accept-encoding")
        expect(zipped.headers["content-type"]).toMatch(/^application\/json/)
        expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true)
      }
      const snapshot = yield* rawGet(`${base}/v1/turns/${turnId}`, gzip)
      expect(snapshot.headers["cache-control"]).toBe("no-store")
      expect(JSON.parse(gunzipSync(snapshot.body).toString("utf8"))).toMatchObject({ turnId, status: "complete" })
    }).pipe(Effect.provide(stores)))

  it.effect("compression: false sends every body as it is, without Vary", () =>
    Effect.gen(function*() {
      const base = yield* serve({ compression: false })
      const turnId = randomUUID()
      yield* publishUpserts(turnId, upsertMessages(turnId, 200))
      const { url } = yield* jsonStream(base, 50)
      for (const target of [`${base}/v1/turns/${turnId}`, `${url}?offset=-1`]) {
        const reply = yield* rawGet(target, gzip)
        expect(reply.status).toBe(200)
        expect(reply.headers["content-encoding"]).toBeUndefined()
        expect(reply.headers.vary).toBeUndefined()
        expect(() => JSON.parse(reply.body.toString("utf8"))).not.toThrow()
      }
    }).pipe(Effect.provide(stores)))
})

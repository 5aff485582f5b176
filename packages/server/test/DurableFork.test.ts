/**
 * Forking durable streams over HTTP on the in-memory stores (the conformance suite
 * covers the same on redis-server): a fork reads through its source, and every
 * refusal a client can meet names what was wrong: a malformed `Stream-Forked-From`,
 * fork offset or sub-offset (400), a turn's stream as the source (400), a missing
 * source (404), an offset past the source's tail (400), another content type (409),
 * a source deleted while a fork reads it (410 for its readers and writers, 409 for a
 * new fork or a re-creation).
 */
import { describe, expect, it } from "@effect/vitest"
import { DurableStoreMemory } from "@sluice/durable-streams"
import { RedisStreamsMemory } from "@sluice/redis"
import { serveWith } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"

const stores = Layer.merge(RedisStreamsMemory.layer, DurableStoreMemory.layer)

const call = (url: string, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const response = await fetch(url, init)
    return { status: response.status, headers: response.headers, body: await response.text() }
  })

const put = (url: string, headers: Record<string, string>, body?: string) =>
  call(url, {
    method: "PUT",
    headers: { "content-type": "text/plain", ...headers },
    ...(body === undefined ? {} : { body })
  })

describe("Durable Streams forks over HTTP", () => {
  it.live("a fork reads its source up to the fork offset, then its own appends", () =>
    Effect.gen(function*() {
      const base = yield* serveWith({ insecureLocal: true })
      const source = `/v1/stream/src-${randomUUID()}`
      const fork = `/v1/stream/fork-${randomUUID()}`
      const created = yield* put(`${base}${source}`, {}, "hello")
      yield* call(`${base}${source}`, { method: "POST", headers: { "content-type": "text/plain" }, body: " world" })
      const forked = yield* put(`${base}${fork}`, {
        "stream-forked-from": source,
        "stream-fork-offset": created.headers.get("stream-next-offset")!,
        "stream-fork-sub-offset": "0"
      })
      expect(forked.status).toBe(201)
      expect(forked.headers.get("stream-forked-from")).toBeNull()
      yield* call(`${base}${fork}`, { method: "POST", headers: { "content-type": "text/plain" }, body: "!" })
      expect((yield* call(`${base}${fork}?offset=-1`)).body).toBe("hello!")
      const sub = `/v1/stream/sub-${randomUUID()}`
      const cut = yield* put(`${base}${sub}`, {
        "stream-forked-from": `http://localhost${source}`,
        "stream-fork-offset": created.headers.get("stream-next-offset")!,
        "stream-fork-sub-offset": "3"
      })
      expect(cut.status).toBe(201)
      expect((yield* call(`${base}${sub}?offset=-1`)).body).toBe("hello wo")
    }).pipe(Effect.scoped, Effect.provide(stores)), { timeout: 60_000 })

  it.live(
    "refuses malformed fork headers, a turn's stream, a missing source, an offset past the tail",
    () =>
      Effect.gen(function*() {
        const base = yield* serveWith({ insecureLocal: true })
        const source = `/v1/stream/src-${randomUUID()}`
        const fork = `${base}/v1/stream/fork-${randomUUID()}`
        yield* put(`${base}${source}`, {}, "data")
        const refusals: Array<[Record<string, string>, number, RegExp]> = [
          [{ "stream-forked-from": "elsewhere/name" }, 400, /invalid Stream-Forked-From/],
          [{ "stream-forked-from": `/v1/stream/turns/${randomUUID()}/events` }, 400, /turn's streams cannot be forked/],
          [{ "stream-forked-from": source, "stream-fork-offset": "12" }, 400, /invalid Stream-Fork-Offset/],
          [{ "stream-forked-from": source, "stream-fork-sub-offset": "01" }, 400, /invalid Stream-Fork-Sub-Offset/],
          [{ "stream-forked-from": source, "stream-fork-sub-offset": "1" }, 400, /needs Stream-Fork-Offset/],
          [{ "stream-fork-sub-offset": "0" }, 400, /need Stream-Forked-From/],
          [{ "stream-forked-from": `/v1/stream/none-${randomUUID()}` }, 404, /source stream does not exist/],
          [
            { "stream-forked-from": source, "stream-fork-offset": "0000000000000000_0000000000000002" },
            400,
            /past the source's tail 0000000000000000_0000000000000001/
          ],
          [
            {
              "stream-forked-from": source,
              "stream-fork-offset": "0000000000000000_0000000000000000",
              "stream-fork-sub-offset": "5"
            },
            400,
            /Sub-Offset 5 is past the end/
          ],
          [
            { "stream-forked-from": source, "content-type": "application/json" },
            409,
            /content type is text\/plain, not application\/json/
          ]
        ]
        for (const [headers, status, message] of refusals) {
          const refused = yield* put(fork, headers)
          expect([refused.status, refused.body]).toEqual([status, expect.stringMatching(message)])
        }
        expect((yield* call(fork, { method: "HEAD" })).status).toBe(404)
      }).pipe(Effect.scoped, Effect.provide(stores)),
    { timeout: 60_000 }
  )

  it.live(
    "a deleted source with a living fork is gone (410) until the fork goes, then not found",
    () =>
      Effect.gen(function*() {
        const base = yield* serveWith({ insecureLocal: true })
        const source = `${base}/v1/stream/src-${randomUUID()}`
        const fork = `${base}/v1/stream/fork-${randomUUID()}`
        yield* put(source, {}, "kept")
        yield* put(fork, { "stream-forked-from": new URL(source).pathname })
        expect((yield* call(source, { method: "DELETE" })).status).toBe(204)
        const read = yield* call(`${source}?offset=-1`)
        expect([read.status, read.body]).toEqual([410, expect.stringMatching(/kept only for the forks/)])
        expect((yield* call(source, { method: "HEAD" })).status).toBe(410)
        const write = yield* call(source, { method: "POST", headers: { "content-type": "text/plain" }, body: "x" })
        expect(write.status).toBe(410)
        expect((yield* call(source, { method: "DELETE" })).status).toBe(410)
        expect((yield* put(source, {})).status).toBe(409)
        const again = yield* put(`${base}/v1/stream/fork-${randomUUID()}`, {
          "stream-forked-from": new URL(source).pathname
        })
        expect([again.status, again.body]).toEqual([409, expect.stringMatching(/cannot be forked/)])
        expect((yield* call(`${fork}?offset=-1`)).body).toBe("kept")
        expect((yield* call(fork, { method: "DELETE" })).status).toBe(204)
        expect((yield* call(source, { method: "HEAD" })).status).toBe(404)
      }).pipe(Effect.scoped, Effect.provide(stores)),
    { timeout: 60_000 }
  )
})

/**
 * The official Durable Streams client (`@durable-streams/client`, pinned) against the
 * turn server on the in-memory stores: it follows a running turn's Stream B, is cut
 * mid-turn and resumes from its saved offset (every upsert exactly once); a producer
 * writes a chat run with `DurableStream` (create, append, close) and a reader gets it
 * back after a reconnect; a turn's streams refuse writes, and a read-only token may
 * read but not write.
 */
import { DurableStream, stream } from "@durable-streams/client"
import { describe, expect, it } from "@effect/vitest"
import type { StreamBMessage } from "@sluice/core"
import { DurableStoreMemory } from "@sluice/durable-streams"
import { RedisStreamsMemory } from "@sluice/redis"
import { producer, serveWith, tokens } from "@sluice/testing/server"
import { upsertMessages } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"

const stores = Layer.merge(RedisStreamsMemory.layer, DurableStoreMemory.layer)

// A turn's entries are served in their one JSON shape: a Stream B entry is its StreamBMessage.
type Upsert = StreamBMessage.StreamBMessage

/** Follows a JSON stream from `offset` until `stop` holds of what was read; the items and the offset to resume from. */
const follow = (url: string, offset: string, stop: (items: ReadonlyArray<Upsert>, closed: boolean) => boolean) =>
  Effect.promise(async () => {
    const response = await stream<Upsert>({ url, offset, live: "sse" })
    const items: Array<Upsert> = []
    let resume = offset
    let stopped = false
    await new Promise<void>((resolve) => {
      response.subscribeJson<Upsert>((batch) => {
        // a batch already on its way when the read was cancelled is not this reader's
        if (stopped) return
        items.push(...batch.items)
        resume = batch.offset
        if (stop(items, batch.streamClosed)) {
          stopped = true
          response.cancel()
          resolve()
        }
      })
    })
    return { items, resume }
  })

describe("Durable Streams client", () => {
  it.live(
    "follows a running turn, is cut mid-turn and resumes: every upsert exactly once",
    () =>
      Effect.gen(function*() {
        const base = yield* serveWith({ insecureLocal: true })
        const turnId = randomUUID()
        const messages = upsertMessages(turnId, 20)
        const produce = yield* producer(turnId, messages)
        const url = `${base}/v1/stream/turns/${turnId}/upserts`
        yield* produce.release(6)
        const first = yield* follow(url, "-1", (items) => items.length >= 6)
        yield* produce.release(14)
        const rest = yield* follow(url, first.resume, (_, closed) => closed)
        // every upsert exactly once, each exactly the StreamBMessage written (payload as JSON text)
        expect([...first.items, ...rest.items]).toStrictEqual(messages)
        const head = yield* Effect.promise(() => fetch(url, { method: "HEAD" }))
        expect(head.headers.get("stream-closed")).toBe("true")
      }).pipe(Effect.scoped, Effect.provide(stores)),
    { timeout: 60_000 }
  )

  it.live(
    "a producer writes a chat run with DurableStream; a reader gets it back after a reconnect",
    () =>
      Effect.gen(function*() {
        const base = yield* serveWith({ insecureLocal: true })
        const url = `${base}/v1/stream/chats/${randomUUID()}`
        const run = [
          { role: "user", content: "What is the weather in Paris?" },
          { role: "assistant", content: "Let me look." },
          { role: "tool", content: "{\"temperature\":18}" },
          { role: "assistant", content: "18 degrees and sunny." }
        ]
        yield* Effect.promise(async () => {
          const writer = await DurableStream.create({ url, contentType: "application/json" })
          for (const message of run.slice(0, 2)) await writer.append(JSON.stringify(message))
        })
        const first = yield* follow(url, "-1", (items) => items.length >= 2)
        yield* Effect.promise(async () => {
          const writer = new DurableStream({ url, contentType: "application/json" })
          for (const message of run.slice(2)) await writer.append(JSON.stringify(message))
          await writer.close()
        })
        const rest = yield* follow(url, first.resume, (_, closed) => closed)
        expect([...first.items, ...rest.items]).toEqual(run)
        const again = yield* Effect.promise(async () => (await stream({ url, offset: "-1", live: false })).json())
        expect(again).toEqual(run)
      }).pipe(Effect.scoped, Effect.provide(stores)),
    { timeout: 60_000 }
  )

  it.live("a turn's streams refuse writes; a read-only token reads but may not write", () =>
    Effect.gen(function*() {
      const [reader] = ["read-only-token-0123456789"]
      const base = yield* serveWith({ tokens: [...tokens], readTokens: [reader!] })
      const turnId = randomUUID()
      const produce = yield* producer(turnId, upsertMessages(turnId, 4))
      yield* produce.release(4)
      const call = (path: string, token: string, init: RequestInit = {}) =>
        Effect.promise(() =>
          fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } })
        )
      const turnWrite = yield* call(`/v1/stream/turns/${turnId}/upserts`, tokens[0], {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}"
      })
      expect(turnWrite.status).toBe(405)
      const turnRead = yield* call(`/v1/stream/turns/${turnId}/events?offset=-1`, reader!)
      expect(turnRead.status).toBe(404)
      const upserts = yield* call(`/v1/stream/turns/${turnId}/upserts?offset=-1`, reader!)
      expect(upserts.status).toBe(200)
      expect(upserts.headers.get("stream-closed")).toBe("true")
      const create = yield* call("/v1/stream/notes", reader!, { method: "PUT" })
      expect(create.status).toBe(403)
      expect(yield* Effect.promise(() => create.text())).toMatch(/may not write/)
      const anonymous = yield* Effect.promise(() => fetch(`${base}/v1/stream/notes`, { method: "PUT" }))
      expect(anonymous.status).toBe(401)
      const created = yield* call("/v1/stream/notes", tokens[0], { method: "PUT" })
      expect(created.status).toBe(201)
    }).pipe(Effect.scoped, Effect.provide(stores)), { timeout: 60_000 })
})

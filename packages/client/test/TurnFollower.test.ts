import { describe, expect, it } from "@effect/vitest"
import { cancel, followTurn } from "../src/index.js"
import type { Snapshot } from "../src/Wire.js"
import { completed, frame, turnId, upsert } from "./support/feed.js"

const base = "http://sluice.test/"

type Reply = Response | Error
interface Recorded {
  readonly url: string
  readonly method: string
  readonly headers: Record<string, string>
}

// A fetch that answers each request with the next scripted reply.
const scripted = (replies: Array<() => Reply>) => {
  const requests: Array<Recorded> = []
  const fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers: Record<string, string> = {}
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value))
    requests.push({ url: String(input), method: init?.method ?? "GET", headers })
    const next = replies.shift()
    if (next === undefined) return Promise.reject(new Error("no more replies"))
    const reply = next()
    return reply instanceof Error ? Promise.reject(reply) : Promise.resolve(reply)
  }
  return { fetch: fetch as typeof globalThis.fetch, requests }
}

const json = (body: unknown, status = 200) => () => new Response(JSON.stringify(body), { status })
// An SSE body of these frames; with `breakOff` it fails after them, as a cut connection.
const sse = (frames: ReadonlyArray<string>, breakOff = false) => () => {
  const encoder = new TextEncoder()
  // each frame split in two, as the network may split it
  const pieces = [": connected\n\n", ...frames.flatMap((text) => [text.slice(0, 7), text.slice(7)])]
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = pieces.shift()
        if (next !== undefined) controller.enqueue(encoder.encode(next))
        else if (breakOff) controller.error(new TypeError("terminated"))
        else controller.close()
      }
    }),
    { status: 200, headers: { "content-type": "text/event-stream" } }
  )
}

const snapshot: Snapshot = { turnId, status: "streaming", items: [upsert("a", "He")], lastEventId: "0-2" }
const noWait = { sleep: () => Promise.resolve(), random: () => 0.5 }

describe("followTurn", () => {
  it("loads the snapshot, follows the feed, resumes after the last entry when it breaks off, ends finished", async () => {
    const { fetch, requests } = scripted([
      json(snapshot),
      sse([frame("0-3", "item_upsert", upsert("a", "Hell")), frame("0-4", "item_upsert", upsert("b", "x"))], true),
      () => new TypeError("fetch failed"),
      sse([frame("0-5", "item_upsert", upsert("a", "Hello")), frame("0-6", "turn_event", completed)])
    ])
    const waits: Array<number> = []
    const handle = followTurn(base, turnId, {
      token: "t0k",
      fetch,
      random: () => 0.5,
      reconnect: { baseMs: 100, maxMs: 1000 },
      sleep: (ms) => {
        waits.push(ms)
        return Promise.resolve()
      }
    })
    const seen = new Set<unknown>()
    let calls = 0
    handle.subscribe(() => {
      calls++
      seen.add(handle.getSnapshot())
    })
    const final = await handle.done
    expect(final).toBe(handle.getSnapshot())
    expect(final.connection).toBe("finished")
    expect(final.status).toBe("complete")
    expect(final.items.map((item) => [item.itemId, item.content])).toStrictEqual([["a", "Hello"], ["b", "x"]])
    expect(final.lastEventId).toBe("0-6")
    // each change a new object, each notification a change
    expect(seen.size).toBe(calls)
    expect(requests.map((r) => [r.url, r.headers["last-event-id"] ?? null])).toStrictEqual([
      [`http://sluice.test/v1/turns/${turnId}`, null],
      [`http://sluice.test/v1/turns/${turnId}/upserts`, "0-2"],
      [`http://sluice.test/v1/turns/${turnId}/upserts`, "0-4"],
      [`http://sluice.test/v1/turns/${turnId}/upserts`, "0-4"]
    ])
    expect(requests.every((r) => r.headers["authorization"] === "Bearer t0k")).toBe(true)
    // events arrived on the first feed: the backoff started over, then grew
    expect(waits).toStrictEqual([50, 100])
  })

  it("a finished turn needs no feed", async () => {
    const { fetch, requests } = scripted([json({ ...snapshot, status: "cancelled" })])
    const final = await followTurn(base, turnId, { fetch }).done
    expect([final.connection, final.status, requests.length]).toStrictEqual(["finished", "cancelled", 1])
  })

  it("a refused token or an unknown turn stops at once with the API's error", async () => {
    const { fetch, requests } = scripted([
      json({ error: { code: "unauthorized", message: "invalid bearer token" } }, 401)
    ])
    const final = await followTurn(base, turnId, { fetch, ...noWait }).done
    expect(final.connection).toBe("failed")
    expect([final.lastError?.code, final.lastError?.status, final.lastError?.message]).toStrictEqual([
      "unauthorized",
      401,
      "invalid bearer token"
    ])
    expect(requests.length).toBe(1)
    const missing = scripted([json({ error: { code: "turn_not_found", message: "no such turn" } }, 404)])
    expect((await followTurn(base, turnId, { fetch: missing.fetch }).done).lastError?.code).toBe("turn_not_found")
  })

  it("retries a 503 and a stream_error, and gives up after maxAttempts failures in a row", async () => {
    const busy = json({ error: { code: "redis_unavailable", message: "later" } }, 503)
    const { fetch } = scripted([
      busy,
      json(snapshot),
      sse([`event: stream_error\ndata: {"error":{"code":"redis_unavailable","message":"x"}}\n\n`]),
      busy,
      busy
    ])
    const states: Array<string> = []
    const handle = followTurn(base, turnId, { fetch, ...noWait, reconnect: { maxAttempts: 2 } })
    handle.subscribe(() => states.push(handle.getSnapshot().connection))
    const final = await handle.done
    expect(final.connection).toBe("failed")
    expect(final.lastError?.code).toBe("gave_up")
    expect(states).toContain("reconnecting")
    expect(states).toContain("live")
  })

  it("a body that is not the API's fails with unexpected_body naming it", async () => {
    const notSnapshot = scripted([json({ hello: "world" })])
    const first = await followTurn(base, turnId, { fetch: notSnapshot.fetch }).done
    expect([first.connection, first.lastError?.code, first.lastError?.message]).toStrictEqual([
      "failed",
      "unexpected_body",
      "the server sent something that is not a turn snapshot"
    ])
    const badEntry = scripted([json(snapshot), sse([frame("0-3", "item_upsert", { type: "item_upsert" })])])
    const second = await followTurn(base, turnId, { fetch: badEntry.fetch }).done
    expect(second.lastError?.message).toBe("entry 0-3 is not an item upsert")
    const notJson = scripted([json(snapshot), sse(["id: 0-3\nevent: turn_event\ndata: {oops\n\n"])])
    expect((await followTurn(base, turnId, { fetch: notJson.fetch }).done).lastError?.message).toBe(
      "a turn_event event's data is not JSON"
    )
  })

  it("close() and the caller's signal stop following", async () => {
    let release: () => void = () => undefined
    const hanging = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(frame("0-3", "item_upsert", upsert("a", "Hey"))))
            release = () => controller.close()
          }
        })
      )
    const { fetch } = scripted([json(snapshot), hanging])
    const handle = followTurn(base, turnId, { fetch, ...noWait })
    await new Promise<void>((resolve) => {
      const unsubscribe = handle.subscribe(() => {
        if (handle.getSnapshot().lastEventId === "0-3") {
          unsubscribe()
          resolve()
        }
      })
    })
    handle.close()
    release()
    expect((await handle.done).connection).toBe("closed")
    const aborted = new AbortController()
    aborted.abort()
    const other = scripted([json(snapshot)])
    expect((await followTurn(base, turnId, { fetch: other.fetch, signal: aborted.signal }).done).connection).toBe(
      "closed"
    )
  })
})

describe("cancel", () => {
  it("posts the cancel request; a finished turn is a turn_finished error", async () => {
    const { fetch, requests } = scripted([
      json({ turnId, cancel: "requested" }, 202),
      json({ error: { code: "turn_finished", message: "ended" } }, 409)
    ])
    await cancel(base, turnId, { token: "t", fetch })
    expect([requests[0]?.method, requests[0]?.url]).toStrictEqual([
      "POST",
      `http://sluice.test/v1/turns/${turnId}/cancel`
    ])
    await expect(cancel(base, turnId, { token: "t", fetch })).rejects.toMatchObject({
      code: "turn_finished",
      status: 409
    })
  })
})

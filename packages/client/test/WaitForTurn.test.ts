/**
 * `followTurn` with `awaitTurnMs`: a turn followed before its first write is waited
 * for (its feed opened from its start; looked for again while the server answers
 * `turn_not_found` at once), then followed to its end; past the bound, or once the
 * turn has been seen, `turn_not_found` stops following as before.
 */
import { describe, expect, it } from "@effect/vitest"
import { sleeps, withSleeps } from "@sluice/testing/clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { states } from "../src/effect.js"
import { followTurn } from "../src/index.js"
import { awaitPollMs } from "../src/TurnFollower.js"
import { completed, frame, started, turnId, upsert } from "./support/feed.js"

const base = "http://sluice.test"

// The whole turn's feed, from its first entry.
const wholeTurn = [
  frame("0-1", "turn_event", started),
  frame("0-2", "item_upsert", upsert("a", "He")),
  frame("0-3", "item_upsert", upsert("a", "Hello")),
  frame("0-4", "turn_event", completed)
]

interface Recorded {
  readonly url: string
  readonly lastEventId: string | undefined
}

// A fetch that answers each request with the next scripted reply.
const scripted = (replies: Array<() => Response>) => {
  const requests: Array<Recorded> = []
  const fetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    requests.push({ url: String(input), lastEventId: new Headers(init?.headers).get("last-event-id") ?? undefined })
    const next = replies.shift()
    return next === undefined ? Promise.reject(new Error("no more replies")) : Promise.resolve(next())
  }
  return { fetch: fetch as typeof globalThis.fetch, requests }
}

const notFound = () =>
  new Response(JSON.stringify({ error: { code: "turn_not_found", message: "no such turn" } }), { status: 404 })
const sse = (frames: ReadonlyArray<string>) => () =>
  new Response(`: connected\n\n${frames.join("")}`, { status: 200, headers: { "content-type": "text/event-stream" } })

// A clock that only the waits move.
const fakeTime = () => {
  let time = 1_000_000
  const waits: Array<number> = []
  return {
    waits,
    now: () => time,
    sleep: (ms: number) => {
      waits.push(ms)
      time += ms
      return Promise.resolve()
    }
  }
}

// Waits (spinning, not sleeping) until a fiber sleeps on the TestClock until `at`.
const untilSleepAt = (at: number) =>
  Effect.gen(function*() {
    for (let spins = 0; spins < 10_000; spins++) {
      if ((yield* sleeps).includes(at)) return
      yield* Effect.yieldNow
    }
    return yield* Effect.die(new Error(`no sleep until ${at} on the TestClock`))
  })

const snapshotUrl = `${base}/v1/turns/${turnId}`
const feedUrl = `${snapshotUrl}/upserts`

describe("followTurn before the turn is written", () => {
  it("opens the feed from the turn's start when the snapshot is not there yet, and follows it to its end", async () => {
    // A server that waits: the feed's answer comes once the turn is written.
    const { fetch, requests } = scripted([notFound, sse(wholeTurn)])
    const time = fakeTime()
    const final = await followTurn(base, turnId, { fetch, awaitTurnMs: 10_000, ...time }).done
    expect(final.connection).toBe("finished")
    expect(final.status).toBe("complete")
    expect(final.items.map((item) => item.content)).toStrictEqual(["Hello"])
    expect([final.modelId, final.providerId, final.lastEventId]).toStrictEqual(["m", "p", "0-4"])
    expect(requests).toStrictEqual([
      { url: snapshotUrl, lastEventId: undefined },
      { url: feedUrl, lastEventId: "0-0" }
    ])
    expect(time.waits).toStrictEqual([])
  })

  it("looks again every awaitPollMs while the server answers 404 at once, then follows the turn once it is there", async () => {
    const snapshot = { turnId, status: "streaming", items: [upsert("a", "He")], lastEventId: "0-2" }
    const { fetch, requests } = scripted([
      notFound,
      notFound,
      notFound,
      notFound,
      () => new Response(JSON.stringify(snapshot)),
      sse(wholeTurn.slice(2))
    ])
    const time = fakeTime()
    const handle = followTurn(base, turnId, { fetch, awaitTurnMs: 10_000, ...time })
    const connections: Array<string> = []
    handle.subscribe(() => connections.push(handle.getSnapshot().connection))
    const final = await handle.done
    expect(final.connection).toBe("finished")
    expect(final.items.map((item) => item.content)).toStrictEqual(["Hello"])
    expect(requests.map((r) => [r.url, r.lastEventId ?? null])).toStrictEqual([
      [snapshotUrl, null],
      [feedUrl, "0-0"],
      [snapshotUrl, null],
      [feedUrl, "0-0"],
      [snapshotUrl, null],
      [feedUrl, "0-2"]
    ])
    expect(time.waits).toStrictEqual([awaitPollMs, awaitPollMs])
    // while waiting, the connection stays `loading`: never `reconnecting` nor `failed`
    expect(connections.includes("reconnecting") || connections.includes("failed")).toBe(false)
  })

  it("fails with turn_not_found once awaitTurnMs have passed", async () => {
    const { fetch, requests } = scripted(Array.from({ length: 100 }, () => notFound))
    const time = fakeTime()
    const final = await followTurn(base, turnId, { fetch, awaitTurnMs: 1_000, ...time }).done
    expect(final.connection).toBe("failed")
    expect([final.lastError?.code, final.lastError?.status]).toStrictEqual(["turn_not_found", 404])
    expect(time.waits.reduce((a, b) => a + b, 0)).toBe(1_000)
    expect(time.waits).toStrictEqual([250, 250, 250, 250])
    expect(requests.length).toBe(9)
  })

  it("without awaitTurnMs, or once the turn has been seen, turn_not_found stops following at once", async () => {
    const once = scripted([notFound, notFound])
    const final = await followTurn(base, turnId, { fetch: once.fetch }).done
    expect([final.connection, final.lastError?.code, once.requests.length]).toStrictEqual([
      "failed",
      "turn_not_found",
      1
    ])
    // seen, then gone (expired) while the feed reconnects
    const gone = scripted([notFound, sse(wholeTurn.slice(0, 2)), notFound, notFound])
    const time = fakeTime()
    const lost = await followTurn(base, turnId, { fetch: gone.fetch, awaitTurnMs: 10_000, ...time, random: () => 0 })
      .done
    expect([lost.connection, lost.lastError?.code, lost.lastEventId]).toStrictEqual(["failed", "turn_not_found", "0-2"])
    expect(gone.requests.map((r) => r.lastEventId ?? null)).toStrictEqual([null, "0-0", "0-2"])
    expect(lost.items.map((item) => item.content)).toStrictEqual(["He"])
  })
})

describe("states before the turn is written", () => {
  it.effect("waits on Effect's Clock, then follows the turn to its end", () =>
    Effect.gen(function*() {
      const { fetch, requests } = scripted([notFound, notFound, notFound, notFound, notFound, sse(wholeTurn)])
      const fiber = yield* Effect.forkChild(Stream.runCollect(states(base, turnId, { fetch, awaitTurnMs: 5_000 })))
      // two waits of awaitPollMs on the TestClock (a real timer would not be moved)
      for (const at of [awaitPollMs, 2 * awaitPollMs]) {
        yield* untilSleepAt(at)
        yield* TestClock.adjust(awaitPollMs)
      }
      const seen = yield* Fiber.join(fiber)
      expect(seen.at(-1)?.connection).toBe("finished")
      expect(seen.at(-1)?.items.map((item) => item.content)).toStrictEqual(["Hello"])
      expect(requests.length).toBe(6)
    }).pipe(withSleeps))
})

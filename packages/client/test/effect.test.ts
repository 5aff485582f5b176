import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { states } from "../src/effect.js"

const turnId = "6f1c2b7e-0c3a-4d5e-8f90-1a2b3c4d5e6f"
const threadId = "7a1c2b7e-0c3a-4d5e-8f90-1a2b3c4d5e6f"

const fetchOf = (bodies: Array<() => Response>): typeof globalThis.fetch => () => {
  const next = bodies.shift()
  return next === undefined ? Promise.reject(new Error("no more replies")) : Promise.resolve(next())
}

describe("states", () => {
  it.effect("streams each state of the turn, ending with the last", () =>
    Effect.gen(function*() {
      const snapshot = { turnId, status: "streaming", items: [], lastEventId: "0-1" }
      const upsert = {
        type: "item_upsert",
        turnId,
        threadId,
        itemId: "a",
        itemType: "message",
        changeType: "completed",
        content: "Hi"
      }
      const done = { type: "turn_completed", turnId, threadId, status: "complete" }
      const fetch = fetchOf([
        () => new Response(JSON.stringify(snapshot)),
        () =>
          new Response(
            `id: 0-2\nevent: item_upsert\ndata: ${JSON.stringify(upsert)}\n\nid: 0-3\nevent: turn_event\ndata: ${
              JSON.stringify(done)
            }\n\n`
          )
      ])
      const seen = yield* Stream.runCollect(states("http://sluice.test", turnId, { fetch }))
      expect(seen.map((state) => [state.connection, state.lastEventId ?? null])).toStrictEqual([
        ["loading", null],
        ["loading", "0-1"],
        ["live", "0-1"],
        ["live", "0-2"],
        ["live", "0-3"],
        ["finished", "0-3"]
      ])
      expect(seen.at(-1)?.items.map((item) => item.content)).toStrictEqual(["Hi"])
    }))

  it.effect("taking fewer states stops following", () =>
    Effect.gen(function*() {
      const fetch: typeof globalThis.fetch = (_input, init) =>
        new Promise((_resolve, reject) => init?.signal?.addEventListener("abort", () => reject(new Error("aborted"))))
      const first = yield* Stream.runCollect(Stream.take(states("http://sluice.test", turnId, { fetch }), 1))
      expect(first.map((state) => state.connection)).toStrictEqual(["loading"])
    }))

  it.effect("waits between reconnects on Effect's Clock", () =>
    Effect.gen(function*() {
      const snapshot = { turnId, status: "streaming", items: [], lastEventId: "0-1" }
      const done = { type: "turn_completed", turnId, threadId, status: "complete" }
      let calls = 0
      const replies: Array<() => Response> = [
        () => new Response(JSON.stringify(snapshot)),
        () => new Response("busy", { status: 503 }),
        () => new Response(`id: 0-2\nevent: turn_event\ndata: ${JSON.stringify(done)}\n\n`)
      ]
      const fetch: typeof globalThis.fetch = () => {
        calls++
        const next = replies.shift()
        return next === undefined ? Promise.reject(new Error("no more replies")) : Promise.resolve(next())
      }
      const following = yield* Stream.runCollect(
        states("http://sluice.test", turnId, { fetch, reconnect: { baseMs: 600_000, maxMs: 600_000 } })
      ).pipe(Effect.forkChild)
      // the snapshot, then the feed refused: the next try waits for the clock
      for (let turn = 0; turn < 1_000 && calls < 2; turn++) yield* Effect.yieldNow
      for (let turn = 0; turn < 100; turn++) yield* Effect.yieldNow
      expect(calls).toBe(2)
      yield* TestClock.adjust("10 minutes") // a real timer would outlast the test
      const seen = yield* Fiber.join(following)
      expect(calls).toBe(3)
      expect(seen.at(-1)?.connection).toBe("finished")
    }))
})

/**
 * `followTurn` stops at the turn's last entry (`turn_completed`, core's `LastEntry`),
 * never at the `turn_error` a failed turn writes before it: the usage that comes with
 * the last entry reaches the state, whether the error came in the snapshot or the feed.
 */
import { describe, expect, it } from "@effect/vitest"
import { followTurn, TurnState } from "../src/index.js"
import type { Snapshot } from "../src/Wire.js"

const turnId = "6f1c2b7e-0c3a-4d5e-8f90-1a2b3c4d5e6f"
const threadId = "7a1c2b7e-0c3a-4d5e-8f90-1a2b3c4d5e6f"
const base = "http://sluice.test/"
const usage = { promptTokens: 12, completionTokens: 7, totalTokens: 19 }
const turnError = { type: "turn_error", turnId, threadId, error: { code: "overloaded_error", message: "Overloaded" } }
const failed = { type: "turn_completed", turnId, threadId, status: "error", usage }

const frame = (id: string, event: string, data: unknown) =>
  `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`

// A fetch that answers each request with the next reply, and records the resume points.
const scripted = (replies: Array<() => Response>) => {
  const resumedAfter: Array<string | null> = []
  const fetch = (_input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    resumedAfter.push(new Headers(init?.headers).get("last-event-id"))
    const next = replies.shift()
    return next === undefined ? Promise.reject(new Error("no more replies")) : Promise.resolve(next())
  }
  return { fetch: fetch as typeof globalThis.fetch, resumedAfter }
}
const json = (body: unknown) => () => new Response(JSON.stringify(body), { status: 200 })
const sse = (frames: ReadonlyArray<string>) => () =>
  new Response([": connected\n\n", ...frames].join(""), {
    status: 200,
    headers: { "content-type": "text/event-stream" }
  })
const noWait = { sleep: () => Promise.resolve(), random: () => 0.5 }

const streaming: Snapshot = { turnId, status: "streaming", items: [], lastEventId: "0-2" }

describe("followTurn and a failed turn", () => {
  it("reads on past turn_error in the feed to turn_completed and its usage", async () => {
    const { fetch, resumedAfter } = scripted([
      json(streaming),
      sse([frame("0-3", "turn_event", turnError), frame("0-4", "turn_event", failed)])
    ])
    const final = await followTurn(base, turnId, { fetch, ...noWait }).done
    expect([final.connection, final.status, final.error?.code, final.usage, final.lastEventId]).toStrictEqual([
      "finished",
      "error",
      "overloaded_error",
      usage,
      "0-4"
    ])
    expect(resumedAfter).toStrictEqual([null, "0-2"])
  })

  it("a feed that closes right after turn_error is opened again after it, to the last entry", async () => {
    const { fetch, resumedAfter } = scripted([
      json(streaming),
      sse([frame("0-3", "turn_event", turnError)]),
      sse([frame("0-4", "turn_event", failed)])
    ])
    const final = await followTurn(base, turnId, { fetch, ...noWait }).done
    expect([final.connection, final.usage, final.lastEventId]).toStrictEqual(["finished", usage, "0-4"])
    expect(resumedAfter).toStrictEqual([null, "0-2", "0-3"])
  })

  it("a snapshot that stops at turn_error is followed on to the last entry", async () => {
    const { fetch, resumedAfter } = scripted([
      json({ ...streaming, status: "error", error: turnError.error, lastEventId: "0-3" }),
      sse([frame("0-4", "turn_event", failed)])
    ])
    const final = await followTurn(base, turnId, { fetch, ...noWait }).done
    expect([final.connection, final.status, final.usage, final.ended]).toStrictEqual(["finished", "error", usage, true])
    expect(resumedAfter).toStrictEqual([null, "0-3"])
  })

  it("a failed snapshot whose feed closes at once, with no entry, has its last entry", async () => {
    const { fetch, resumedAfter } = scripted([
      json({ ...streaming, status: "error", error: turnError.error, lastEventId: "0-4" }),
      sse([])
    ])
    const final = await followTurn(base, turnId, { fetch, ...noWait }).done
    expect([final.connection, final.status, final.ended]).toStrictEqual(["finished", "error", true])
    expect(resumedAfter).toStrictEqual([null, "0-4"])
  })

  it("a snapshot with the last entry's usage needs no feed", async () => {
    const { fetch, resumedAfter } = scripted([json({ ...streaming, status: "error", usage, lastEventId: "0-4" })])
    const final = await followTurn(base, turnId, { fetch, ...noWait }).done
    expect([final.connection, final.usage]).toStrictEqual(["finished", usage])
    expect(resumedAfter).toStrictEqual([null])
  })

  it("TurnState: turn_error gives the status and error; only turn_completed ends the turn", () => {
    const started = TurnState.fromSnapshot(TurnState.initial(turnId), streaming)
    const errored = TurnState.applyTurnEvent(started, "0-3", {
      type: "turn_error",
      turnId,
      threadId,
      error: turnError.error
    })
    expect([errored.status, TurnState.isEnded(errored)]).toStrictEqual(["error", false])
    const completed = TurnState.applyTurnEvent(errored, "0-4", {
      type: "turn_completed",
      turnId,
      threadId,
      status: "error",
      usage
    })
    expect([completed.status, completed.usage, completed.error?.code, TurnState.isEnded(completed)]).toStrictEqual([
      "error",
      usage,
      "overloaded_error",
      true
    ])
  })
})

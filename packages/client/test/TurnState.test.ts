import { describe, expect, it } from "@effect/vitest"
import * as TurnState from "../src/TurnState.js"
import type { Snapshot } from "../src/Wire.js"
import { isSnapshot, isTurnEvent, isUpsert } from "../src/Wire.js"
import { threadId, turnId, upsert } from "./support/feed.js"

const snapshot: Snapshot = { turnId, status: "streaming", items: [upsert("a", "Hel", "created")], lastEventId: "0-2" }

describe("TurnState", () => {
  it("folds a snapshot, then upserts in place and new items at the end", () => {
    const loaded = TurnState.fromSnapshot(TurnState.initial(turnId), snapshot)
    const one = TurnState.applyUpsert(loaded, "0-3", upsert("b", "tool"))
    const two = TurnState.applyUpsert(one, "0-4", upsert("a", "Hello", "completed"))
    expect(two.items.map((item) => [item.itemId, item.content])).toStrictEqual([["a", "Hello"], ["b", "tool"]])
    expect(two.lastEventId).toBe("0-4")
    // the states before are as they were
    expect(loaded.items.map((item) => item.content)).toStrictEqual(["Hel"])
    expect(one.items.map((item) => item.content)).toStrictEqual(["Hel", "tool"])
  })

  it("applies an entry once: one at or before the last applied returns the same state", () => {
    const loaded = TurnState.fromSnapshot(TurnState.initial(turnId), snapshot)
    const next = TurnState.applyUpsert(loaded, "0-3", upsert("a", "Hello"))
    expect(TurnState.applyUpsert(next, "0-3", upsert("a", "stale"))).toBe(next)
    expect(TurnState.applyUpsert(next, "0-2", upsert("a", "stale"))).toBe(next)
    expect(TurnState.applyTurnEvent(next, "0-1", { type: "turn_started", turnId, threadId })).toBe(next)
    expect(TurnState.applyUpsert(next, "not-an-id", upsert("a", "stale"))).toBe(next)
  })

  it("turn events set the model, the ending status and usage, or the error", () => {
    const started = TurnState.applyTurnEvent(TurnState.initial(turnId), "0-1", {
      type: "turn_started",
      turnId,
      threadId,
      modelId: "m",
      providerId: "p"
    })
    expect([started.modelId, started.providerId, started.status]).toStrictEqual(["m", "p", "streaming"])
    const usage = { promptTokens: 1, completionTokens: 2, totalTokens: 3 }
    const done = TurnState.applyTurnEvent(started, "0-2", {
      type: "turn_completed",
      turnId,
      threadId,
      status: "complete",
      usage
    })
    expect([done.status, done.usage, TurnState.isEnded(done)]).toStrictEqual(["complete", usage, true])
    const failed = TurnState.applyTurnEvent(started, "0-2", {
      type: "turn_error",
      turnId,
      threadId,
      error: { code: "producer_lost", message: "gone" }
    })
    expect([failed.status, failed.error?.code]).toStrictEqual(["error", "producer_lost"])
  })

  it("compares entry ids by number, not text", () => {
    expect(TurnState.isAfter("0-10", "0-9")).toBe(true)
    expect(TurnState.isAfter("2-0", "10-0")).toBe(false)
    expect(TurnState.isAfter("0-9", undefined)).toBe(true)
    expect(TurnState.isAfter("0-9", "0-9")).toBe(false)
  })

  it("withConnection keeps the same object when nothing changes", () => {
    const state = TurnState.initial(turnId)
    expect(TurnState.withConnection(state, "loading")).toBe(state)
    expect(TurnState.withConnection(state, "live").connection).toBe("live")
  })
})

describe("the wire checks", () => {
  it("accept the API's bodies and refuse others", () => {
    expect(isSnapshot(snapshot)).toBe(true)
    expect(isSnapshot({ ...snapshot, status: "done" })).toBe(false)
    expect(isSnapshot({ ...snapshot, items: [{ type: "item_upsert" }] })).toBe(false)
    expect(isUpsert(upsert("a", "x"))).toBe(true)
    expect(isUpsert({ ...upsert("a", "x"), itemType: "video" })).toBe(false)
    expect(isTurnEvent({ type: "turn_completed", status: "complete" })).toBe(true)
    expect(isTurnEvent({ type: "turn_completed", status: "streaming" })).toBe(false)
    expect(isTurnEvent({ type: "turn_error", error: { code: "x" } })).toBe(false)
    expect(isTurnEvent(null)).toBe(false)
  })
})

/**
 * The last entry of a turn, as every reader and writer decides it: `response_done` in
 * Stream A and the turn event `turn_completed` in Stream B; the error entry a failed
 * turn writes before it (`response_error`, `turn_error`) is not the last.
 */
import { describe, expect, it } from "@effect/vitest"
import * as LastEntry from "../src/LastEntry.js"

describe("LastEntry", () => {
  it("names the last entry of each stream, and not the error before it", () => {
    const turnEvent = (type: string) => JSON.stringify({ type, turnId: "t", threadId: "h" })
    expect([
      LastEntry.isLastStreamAEntry("response_done"),
      LastEntry.isLastStreamAEntry("response_error"),
      LastEntry.isLastStreamAEntry(undefined),
      LastEntry.isLastStreamBEntry("turn_event", turnEvent("turn_completed")),
      LastEntry.isLastStreamBEntry("turn_event", turnEvent("turn_error")),
      // an upsert whose content names the type is not a turn event
      LastEntry.isLastStreamBEntry("item_upsert", JSON.stringify({ type: "item_upsert", content: "turn_completed" })),
      LastEntry.isLastStreamBEntry("turn_event", "not json turn_completed"),
      LastEntry.isLastStreamBEntry("turn_event", undefined)
    ]).toStrictEqual([true, false, false, true, false, false, false, false])
    expect([
      LastEntry.isErrorEntry("response_error", undefined),
      LastEntry.isErrorEntry("turn_event", turnEvent("turn_error")),
      LastEntry.isErrorEntry("turn_event", turnEvent("turn_completed")),
      LastEntry.isErrorEntry("response_done", undefined)
    ]).toStrictEqual([true, true, false, false])
    expect([
      LastEntry.isLastEntry("response_done", "{}"),
      LastEntry.isLastEntry("turn_event", turnEvent("turn_completed")),
      LastEntry.isLastEntry("turn_event", turnEvent("turn_started"))
    ]).toStrictEqual([true, true, false])
  })

  it("decides on decoded events and turn events too", () => {
    expect([
      LastEntry.isLastPayload({ type: "response_done" }),
      LastEntry.isLastPayload({ type: "response_error" }),
      LastEntry.isLastTurnEvent({ type: "turn_completed" }),
      LastEntry.isLastTurnEvent({ type: "turn_error" })
    ]).toStrictEqual([true, false, true, false])
  })
})

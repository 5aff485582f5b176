/**
 * Rules docs/views.md restates of the design that no other test held: the chunk
 * projection leaves its input as it was (the turn before and the event), and the
 * event-patch accumulator takes one patch at a time, refusing an array of them with a
 * typed error.
 */
import { describe, expect, it } from "@effect/vitest"
import { Turn } from "@sluice/accumulator"
import { script, turnEvents } from "@sluice/testing/turns"
import * as Result from "effect/Result"
import { MessageAccumulator, ProcessedChunk } from "../src/index.js"

// Freezes a value and everything it holds: a write anywhere in it then throws (ES modules are strict).
const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}

describe("the rules of docs/views.md", () => {
  it("the chunk projection does not mutate the turn before or the event", () => {
    const events = turnEvents(
      script(
        [
          { type: "reasoning", id: "r", content: "thinking hard" },
          { type: "message", id: "m", content: "Hello there", origin: "agent" },
          { type: "function_call", id: "c", call_id: "call_1", name: "add", arguments: "{\"a\":1}" }
        ],
        [3, 5, 7]
      )
    )
    let turn = Turn.empty
    for (const next of events) {
      const before = structuredClone(turn)
      const copy = structuredClone(next)
      deepFreeze(turn)
      deepFreeze(next)
      ProcessedChunk.fromEvent(turn, next)
      expect(turn).toStrictEqual(before)
      expect(next).toStrictEqual(copy)
      turn = Result.getOrThrow(Turn.step(turn, next))
    }
    expect(Turn.isEnded(turn)).toBe(true)
  }, 30_000)

  it("the patch accumulator refuses an array of patches, naming why, and keeps its state", () => {
    const accumulator = MessageAccumulator.make()
    const start = { type: "message_start", delta: { id: "msg_1", model: "m", role: "assistant", timestamp: 1 } }
    const refused = accumulator.push([start], 1)
    expect(Result.isFailure(refused)).toBe(true)
    if (Result.isFailure(refused)) {
      expect(refused.failure.reason).toBe("UnknownPatchType")
      expect(refused.failure.message).toContain("not a patch object with a string type")
    }
    expect(accumulator.state()).toStrictEqual(MessageAccumulator.initial())
    expect(Result.isSuccess(accumulator.push(start, 1))).toBe(true)
  }, 30_000)
})

/**
 * `TurnContext.make`: the ids not given are fresh each time the effect runs (a retry
 * or a repeat of the same effect makes another turn, not the same one again); the ids
 * given are kept; a bad one is named.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { TurnContext } from "../src/index.js"

describe("TurnContext.make", () => {
  it.effect("draws fresh ids each time the same effect runs, and keeps the ones given", () =>
    Effect.gen(function*() {
      const make = TurnContext.make({ threadId: "0f8fad5b-d9cb-469f-a165-70867728950e" })
      const first = yield* make
      const second = yield* make
      expect(first.turnId).not.toBe(second.turnId)
      expect(first.runId).not.toBe(second.runId)
      expect([first.threadId, second.threadId]).toStrictEqual([
        "0f8fad5b-d9cb-469f-a165-70867728950e",
        "0f8fad5b-d9cb-469f-a165-70867728950e"
      ])
    }))

  it.effect("names a bad id", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(TurnContext.make({ turnId: "not-a-uuid" }))
      expect(error._tag).toBe("InvalidTurnContext")
      expect(error.message).toContain("turnId")
    }))
})

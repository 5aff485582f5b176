/**
 * A tool call whose arguments are malformed is marked `invalid` (the raw text and the
 * parse error) in the summary, beside the documented `{"_invalid_arguments": raw}`, so a
 * runner can refuse it instead of running the tool with what `_invalid_arguments` holds.
 */
import { describe, expect, it } from "@effect/vitest"
import { script, turnEvents } from "@sluice/testing/turns"
import * as Result from "effect/Result"
import { Summary, Turn } from "../src/index.js"

const summaryOf = (args: string) =>
  Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(turnEvents(script([
    { type: "function_call", id: "i1", call_id: "c1", name: "lookup", arguments: args }
  ], [])))))

describe("Summary tool calls with malformed arguments", () => {
  it("are marked invalid with the raw text and the parse error; the arguments keep the documented shape", () => {
    const [call] = summaryOf("{\"q\": \"cut").toolCalls
    expect(call?.arguments).toStrictEqual({ _invalid_arguments: "{\"q\": \"cut" })
    expect(call?.invalid?.raw).toBe("{\"q\": \"cut")
    expect(call?.invalid?.error).toMatch(/JSON/)
  }, 30_000)

  it("JSON that is not an object is invalid too; well-formed and empty arguments are not", () => {
    expect(summaryOf("42").toolCalls[0]?.invalid).toStrictEqual({
      raw: "42",
      error: "the arguments are JSON but not an object (number)"
    })
    expect(summaryOf("{\"q\":1}").toolCalls[0]).not.toHaveProperty("invalid")
    expect(summaryOf("").toolCalls[0]).not.toHaveProperty("invalid")
  }, 30_000)
})

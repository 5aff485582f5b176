/**
 * Fields of the design's event schema that Sluice carries whole (docs/events.md):
 * `response_start.agent_id` and an error's `stack` decode and encode as given; and
 * where the design's schema takes one object, an array is refused by name.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { SchemaDecode, StreamEvent } from "../src/index.js"

const decode = SchemaDecode.decodeUnknownResult(StreamEvent.StreamEvent)
const encode = Schema.encodeSync(StreamEvent.StreamEvent)
const context = { runId: "7e6d5c4b-3a29-4817-a6b5-c4d3e2f1a0b9" }
const id = "5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69"

const started = StreamEvent.envelope(
  context,
  {
    type: "response_start",
    response_id: "0c8d3f6e-2b1a-4d5c-8e7f-9a0b1c2d3e4f",
    turn_id: "1c8d3f6e-2b1a-4d5c-8e7f-9a0b1c2d3e4f",
    thread_id: "2c8d3f6e-2b1a-4d5c-8e7f-9a0b1c2d3e4f",
    agent_id: "3c8d3f6e-2b1a-4d5c-8e7f-9a0b1c2d3e4f",
    model_id: "m",
    provider_id: "p",
    created_at: 1
  },
  id,
  1
)

const failed = StreamEvent.envelope(
  context,
  {
    type: "item_error",
    item_id: "i",
    error: { code: "tool_failed", message: "boom", stack: "Error: boom\n    at tool (tool.ts:1:1)" }
  },
  id,
  2
)

describe("the design's fields, carried whole", () => {
  it("agent_id and an error's stack decode and encode as given, through JSON too", () => {
    for (const event of [started, failed]) {
      const text = JSON.stringify(encode(event))
      expect(Result.getOrThrow(decode(JSON.parse(text)))).toStrictEqual(event)
    }
    expect(JSON.stringify(encode(started))).toContain("\"agent_id\":\"3c8d3f6e-2b1a-4d5c-8e7f-9a0b1c2d3e4f\"")
    expect(JSON.stringify(encode(failed))).toContain("at tool (tool.ts:1:1)")
  }, 30_000)

  it("an array where the schema takes one object is refused: an event, a payload, an error", () => {
    expect(Result.isFailure(decode([started]))).toBe(true)
    expect(Result.isFailure(decode({ ...started, payload: [started.payload] }))).toBe(true)
    const arrayError = decode({ ...failed, payload: { ...failed.payload, error: [{ code: "x", message: "y" }] } })
    expect(Result.isFailure(arrayError)).toBe(true)
    if (Result.isFailure(arrayError)) expect(arrayError.failure.message).toMatch(/error/)
  }, 30_000)
})

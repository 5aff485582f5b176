/**
 * A producer written to the seed ends its turn with `usage: {prompt, completion, total}`:
 * `response_done` accepts that shape and decodes it into Sluice's usage
 * (docs/events.md#usage-and-finish-reasons).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { SchemaDecode, StreamEvent, Usage } from "../src/index.js"

const decode = SchemaDecode.decodeUnknownResult(StreamEvent.StreamEvent)

const responseId = "0c8d3f6e-2b1a-4d5c-8e7f-9a0b1c2d3e4f"

const done = (usage: unknown) => ({
  event_id: "5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69",
  timestamp: 1,
  trace_context: {},
  run_id: "7e6d5c4b-3a29-4817-a6b5-c4d3e2f1a0b9",
  type: "response_done",
  payload: { type: "response_done", response_id: responseId, status: "complete", usage, finish_reason: "stop" }
})

describe("the first design's usage shape", () => {
  it("a response_done with {prompt, completion, total} decodes to Sluice's usage", () => {
    const event = Result.getOrThrow(decode(done({ prompt: 12, completion: 30, total: 42 })))
    expect(event.payload).toStrictEqual({
      type: "response_done",
      response_id: responseId,
      status: "complete",
      usage: {
        input: 12,
        output: 30,
        cacheRead: 0,
        cacheWrite: 0,
        reasoning: 0,
        total: 42,
        raw: { prompt: 12, completion: 30, total: 42 }
      },
      finish_reason: "stop"
    })
  }, 30_000)

  it("total may be absent: it is derived", () => {
    const event = Result.getOrThrow(decode(done({ prompt: 2, completion: 3 })))
    expect(event.payload.type === "response_done" && event.payload.usage?.total).toBe(5)
  }, 30_000)

  it("Sluice's own usage still decodes to itself, and a decoded seed usage encodes as Sluice's", () => {
    const usage = Usage.make({ input: 1, output: 2, cacheRead: 3 })
    const event = Result.getOrThrow(decode(done(usage)))
    expect(event.payload.type === "response_done" && event.payload.usage).toStrictEqual(usage)
    const fromSeed = Result.getOrThrow(decode(done({ prompt: 4, completion: 5, total: 9 })))
    const encoded = Schema.encodeSync(StreamEvent.StreamEvent)(fromSeed)
    expect(encoded.payload.type === "response_done" && encoded.payload.usage).toMatchObject({
      input: 4,
      output: 5,
      total: 9
    })
  }, 30_000)

  it("the decoder's fast path leaves the first design's shape to the decoder", () => {
    expect(StreamEvent.decodesToItself(done({ prompt: 1, completion: 2, total: 3 }))).toBe(false)
    expect(StreamEvent.decodesToItself(done(Usage.make({ input: 1, output: 2 })))).toBe(true)
  }, 30_000)

  it("a usage that is neither shape is refused, naming the field", () => {
    const result = decode(done({ prompt: -1, completion: "many" }))
    expect(Result.isFailure(result)).toBe(true)
    if (Result.isFailure(result)) expect(result.failure.message).toMatch(/usage/)
  }, 30_000)
})

import { describe, expect, it } from "@effect/vitest"
import { Summary, Turn } from "@sluice/accumulator"
import { ProviderError } from "@sluice/core"
import { checkEffect } from "@sluice/testing/property"
import { event, itemsArbitrary, script, turnEvents } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as FastCheck from "fast-check"
import { ProcessedChunk } from "../src/index.js"

const cuts = FastCheck.array(FastCheck.nat({ max: 80 }), { maxLength: 12 })

const collect = (events: ReadonlyArray<Parameters<typeof Turn.step>[1]>) =>
  Stream.fromIterable(events).pipe(ProcessedChunk.fromEvents, Stream.runCollect, Effect.map((chunk) => [...chunk]))

describe("ProcessedChunk", () => {
  it.effect("projects text, thoughts with signatures, function calls with Gemini's thoughtSignature, and done", () =>
    Effect.gen(function*() {
      const events = turnEvents(
        script(
          [
            { type: "reasoning", id: "item_0", content: "plan", signature: "sig-1" },
            { type: "message", id: "item_1", content: "Hi!", origin: "agent" },
            {
              type: "function_call",
              id: "item_2",
              call_id: "call_1",
              name: "lookup",
              arguments: "{\"q\":\"x\"}",
              provider_metadata: { thoughtSignature: "gem-sig" }
            }
          ],
          [2]
        )
      )
      expect(yield* collect(events)).toStrictEqual([
        { type: "text", content: "", thoughts: [{ text: "pl" }] },
        { type: "text", content: "", thoughts: [{ text: "an" }] },
        {
          type: "text",
          content: "",
          thoughts: [{ text: "", signature: "sig-1" }],
          metadata: { thoughtSignature: "sig-1" }
        },
        { type: "text", content: "Hi" },
        { type: "text", content: "!" },
        {
          type: "function_call",
          functionCall: { name: "lookup", args: { q: "x" }, id: "call_1", thoughtSignature: "gem-sig" }
        },
        {
          type: "done",
          metadata: {
            finishReason: "stop",
            usage: { input: 3, output: 4, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 7 }
          }
        }
      ])
    }))

  it("gives the text an item_done holds beyond its deltas, and redacted thinking as a thought", () => {
    const [start] = turnEvents([])
    const turn = Result.getOrThrow(
      Turn.fromEvents([
        start!,
        event({ type: "item_start", item_id: "m", item_type: "message", initial_content: "ab" })
      ])
    )
    const done = event({
      type: "item_done",
      item_id: "m",
      final_item: { type: "message", id: "m", content: "abcd", origin: "agent" }
    })
    expect(ProcessedChunk.fromEvent(turn, done)).toStrictEqual(Option.some({ type: "text", content: "cd" }))
    // Gemini's thoughtSignature on a text part is kept, even when the text is all streamed
    const signed = event({
      type: "item_done",
      item_id: "m",
      final_item: {
        type: "message",
        id: "m",
        content: "ab",
        origin: "agent",
        provider_metadata: { thoughtSignature: "gem-text-sig" }
      }
    })
    expect(ProcessedChunk.fromEvent(turn, signed)).toStrictEqual(
      Option.some({ type: "text", content: "", metadata: { thoughtSignature: "gem-text-sig" } })
    )
    const redacted = event({
      type: "item_done",
      item_id: "r",
      final_item: { type: "reasoning", id: "r", content: "", redacted: true, data: "opaque" }
    })
    expect(ProcessedChunk.fromEvent(turn, redacted)).toStrictEqual(
      Option.some({ type: "text", content: "", thoughts: [{ text: "", redacted: true }] })
    )
  })

  it("gives nothing for events without a chunk", () => {
    const [start] = turnEvents([])
    const turn = Result.getOrThrow(
      Turn.fromEvents([start!, event({ type: "item_start", item_id: "f", item_type: "function_call", name: "f" })])
    )
    expect(ProcessedChunk.fromEvent(Turn.empty, start!)).toStrictEqual(Option.none())
    expect(ProcessedChunk.fromEvent(turn, event({ type: "item_delta", item_id: "f", delta_content: "{" })))
      .toStrictEqual(Option.none())
    expect(ProcessedChunk.fromEvent(turn, event({ type: "item_cancelled", item_id: "f" }))).toStrictEqual(Option.none())
  })

  it("projects error events to the ProviderError shape", () => {
    const chunk = ProcessedChunk.fromEvent(
      Turn.empty,
      event({
        type: "response_error",
        response_id: "5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69",
        error: { code: "SAFETY", message: "blocked", type: "content_blocked", retryable: false }
      })
    )
    expect(chunk).toStrictEqual(
      Option.some({
        type: "error",
        error: { type: "content_blocked", message: "blocked", retryable: false, code: "SAFETY" }
      })
    )
    const untyped = ProcessedChunk.fromEvent(
      Turn.empty,
      event({ type: "item_error", item_id: "x", error: { code: "E", message: "bad" } })
    )
    expect(untyped).toStrictEqual(
      Option.some({ type: "error", error: { type: "api_error", message: "bad", retryable: false, code: "E" } })
    )
  })

  it("keeps a ProviderError's raw cause as originalError", () => {
    const raw = { status: 429, body: "slow down" }
    const chunk = ProcessedChunk.fromProviderError(
      new ProviderError.ProviderError({
        type: "rate_limit",
        retryable: true,
        code: "429",
        message: "slow down",
        status: 429,
        raw
      })
    )
    expect(chunk).toStrictEqual({
      type: "error",
      error: { type: "rate_limit", message: "slow down", retryable: true, code: "429", status: 429, originalError: raw }
    })
  })

  it.effect("fails with AccumulatorError on out-of-order events", () =>
    Effect.gen(function*() {
      const [start] = turnEvents([])
      const error = yield* Effect.flip(
        collect([start!, event({ type: "item_delta", item_id: "ghost", delta_content: "x" })])
      )
      expect(error.reason).toBe("UnknownItem")
    }))

  it.effect(
    "the chunks carry the turn's text, reasoning and tool calls, and end with done",
    () =>
      checkEffect(FastCheck.tuple(itemsArbitrary, cuts), ([items, c]) =>
        Effect.gen(function*() {
          const events = turnEvents(script(items, c))
          const chunks = yield* collect(events)
          const summary = Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(events)))
          for (const chunk of chunks) expect(Schema.is(ProcessedChunk.ProcessedChunk)(chunk)).toBe(true)
          const texts = chunks.flatMap((chunk) => (chunk.type === "text" ? [chunk.content] : []))
          expect(texts.join("")).toBe(summary.text)
          expect(chunks.flatMap((chunk) => chunk.thoughts ?? []).map((t) => t.text).join("")).toBe(summary.reasoning)
          expect(
            chunks.flatMap((chunk) => (chunk.type === "function_call"
              ? [{ id: chunk.functionCall.id, name: chunk.functionCall.name, arguments: chunk.functionCall.args }]
              : [])
            )
          ).toStrictEqual(summary.toolCalls)
          expect(chunks.filter((chunk) => chunk.type === "done")).toHaveLength(1)
          expect(chunks.at(-1)?.type).toBe("done")
        }), { numRuns: 100 }),
    60_000
  )
})

import { describe, expect, it } from "@effect/vitest"
import { Usage } from "@sluice/core"
import { checkEffect } from "@sluice/testing/property"
import { event, itemsArbitrary, script, turnEvents } from "@sluice/testing/turns"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as FastCheck from "fast-check"
import { IContent, Turn } from "../src/index.js"

const cuts = FastCheck.array(FastCheck.nat({ max: 80 }), { maxLength: 12 })

const collect = (events: ReadonlyArray<Parameters<typeof Turn.step>[1]>) =>
  Stream.fromIterable(events).pipe(IContent.fromEvents, Stream.runCollect, Effect.map((chunk) => [...chunk]))

const joinText = (contents: ReadonlyArray<IContent.IContent>) =>
  contents.flatMap((content) => content.blocks.flatMap((block) => (block.type === "text" ? [block.text] : []))).join("")

describe("IContent", () => {
  it.effect("yields each piece of text, then the tool calls the caller must run with history ids, then the usage", () =>
    Effect.gen(function*() {
      const events = turnEvents(
        script(
          [
            { type: "reasoning", id: "item_0", content: "hmm", signature: "s" },
            { type: "message", id: "item_1", content: "Hello", origin: "agent" },
            { type: "function_call", id: "item_2", call_id: "call_9", name: "add", arguments: "{\"a\":1}" },
            { type: "function_call", id: "item_3", call_id: "toolu_7", name: "sub", arguments: "{\"b\":" },
            // the provider ran this one: not a tool call for the caller
            {
              type: "function_call",
              id: "item_4",
              call_id: "srvtoolu_1",
              name: "web_search",
              arguments: "{}",
              provider_executed: true
            }
          ],
          [2]
        )
      )
      expect(yield* collect(events)).toStrictEqual([
        { speaker: "ai", blocks: [{ type: "text", text: "He" }] },
        { speaker: "ai", blocks: [{ type: "text", text: "llo" }] },
        {
          speaker: "ai",
          blocks: [
            { type: "tool_call", id: "hist_tool_9", name: "add", parameters: { a: 1 } },
            { type: "tool_call", id: "hist_tool_toolu_7", name: "sub", parameters: { _invalid_arguments: "{\"b\":" } }
          ]
        },
        { speaker: "ai", blocks: [], metadata: { usage: { inputTokens: 3, outputTokens: 4 } } }
      ])
    }))

  it.effect("skips empty text and reports zero usage when the turn had none", () =>
    Effect.gen(function*() {
      const [start] = turnEvents([])
      const contents = yield* collect([
        start!,
        event({ type: "item_start", item_id: "m", item_type: "message", initial_content: "" }),
        event({ type: "item_delta", item_id: "m", delta_content: "" }),
        event({ type: "item_delta", item_id: "m", delta_content: "ok" }),
        event({
          type: "item_done",
          item_id: "m",
          final_item: { type: "message", id: "m", content: "ok!", origin: "agent" }
        }),
        event({ type: "response_done", response_id: start!.run_id, status: "complete", finish_reason: "stop" })
      ])
      expect(contents).toStrictEqual([
        { speaker: "ai", blocks: [{ type: "text", text: "ok" }] },
        { speaker: "ai", blocks: [{ type: "text", text: "!" }] },
        { speaker: "ai", blocks: [], metadata: { usage: { inputTokens: 0, outputTokens: 0 } } }
      ])
    }))

  it.effect("counts cached prompt tokens as input tokens", () =>
    Effect.gen(function*() {
      const [start] = turnEvents([])
      const contents = yield* collect([
        start!,
        event({
          type: "response_done",
          response_id: start!.run_id,
          status: "complete",
          finish_reason: "stop",
          usage: Usage.make({ input: 2, cacheRead: 5, cacheWrite: 1, output: 3 })
        })
      ])
      expect(contents.at(-1)?.metadata).toStrictEqual({ usage: { inputTokens: 8, outputTokens: 3 } })
    }))

  it.effect("fails with the ProviderError of an error event after yielding the text before it", () =>
    Effect.gen(function*() {
      const [start] = turnEvents([])
      const seen: Array<string> = []
      const error = yield* Stream.make(
        start!,
        event({ type: "item_start", item_id: "m", item_type: "message", initial_content: "par" }),
        event({
          type: "response_error",
          response_id: start!.run_id,
          error: {
            code: "overloaded_error",
            message: "Overloaded",
            type: "provider_overloaded",
            retryable: true,
            status: 529
          }
        })
      ).pipe(
        IContent.fromEvents,
        Stream.runForEach((content) => Effect.sync(() => seen.push(joinText([content])))),
        Effect.flip
      )
      expect(seen).toStrictEqual(["par"])
      expect(error._tag).toBe("ProviderError")
      if (error._tag === "ProviderError") {
        expect([error.type, error.code, error.retryable, error.status]).toStrictEqual([
          "provider_overloaded",
          "overloaded_error",
          true,
          529
        ])
      }
    }))

  it.effect("fails with AccumulatorError on out-of-order events", () =>
    Effect.gen(function*() {
      const [start] = turnEvents([])
      const error = yield* Effect.flip(
        collect([start!, event({ type: "item_delta", item_id: "ghost", delta_content: "x" })])
      )
      expect(error._tag).toBe("AccumulatorError")
    }))

  it("fromTurn gives the first error of a failed turn", () => {
    const [start] = turnEvents([])
    const turn = Result.getOrThrow(
      Turn.fromEvents([
        start!,
        event({
          type: "response_error",
          response_id: start!.run_id,
          error: { code: "x", message: "boom", type: "timeout" }
        })
      ])
    )
    const result = IContent.fromTurn(turn)
    expect(Result.isFailure(result) && [result.failure.type, result.failure.message, result.failure.retryable])
      .toStrictEqual([
        "timeout",
        "boom",
        false
      ])
  })

  it.effect("the stream and fromTurn agree on text, tool calls and usage", () =>
    checkEffect(
      FastCheck.tuple(itemsArbitrary, cuts),
      ([items, c]) =>
        Effect.gen(function*() {
          const events = turnEvents(script(items, c))
          const streamed = yield* collect(events)
          const whole = Result.getOrThrow(IContent.fromTurn(Result.getOrThrow(Turn.fromEvents(events))))
          for (const content of streamed) expect(Schema.is(IContent.IContent)(content)).toBe(true)
          expect(
            streamed.every((content) => content.blocks.every((block) => block.type !== "text" || block.text !== ""))
          )
            .toBe(true)
          expect(joinText(streamed)).toBe(joinText(whole))
          expect(streamed.slice(-2).filter((content) => content.blocks.some((b) => b.type === "tool_call")))
            .toStrictEqual(
              whole.slice(-2).filter((content) => content.blocks.some((b) => b.type === "tool_call"))
            )
          expect(streamed.at(-1)).toStrictEqual(whole.at(-1))
          expect(streamed.at(-1)?.metadata?.usage).toStrictEqual({ inputTokens: 3, outputTokens: 4 })
        }),
      { numRuns: 100 }
    ), 60_000)
})

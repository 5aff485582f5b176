/**
 * A rough edge: a provider stream whose start repeats, or that goes on after it
 * ended, is refused as invalid order (`WireDecodeError` `InvalidOrder`, naming the event
 * and what it came after), not accepted. Anthropic: a second `message_start`, anything
 * after `message_stop`; OpenAI Responses: a second `response.created`, anything after
 * `response.completed` / `.incomplete` / `.failed`. What came before the refused event
 * is still normalized and handed on. OpenAI Chat stays lenient after `[DONE]` (servers
 * of the compatible API differ there): what follows it is ignored.
 */
import { describe, expect, it } from "@effect/vitest"
import { Sse, type StreamEvent } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { Anthropic, OpenAiChat, OpenAiResponses } from "../src/index.js"
import type { Normalize } from "../src/Normalizer.js"
import { bytes, options, recorded } from "./support/normalizerHarness.js"

/** The events a normalizer hands on before it fails, and the failure. */
const refused = (normalize: Normalize, text: string) =>
  Effect.gen(function*() {
    const events: Array<StreamEvent.StreamEvent> = []
    const error = yield* Stream.make(bytes(text)).pipe(
      Sse.decode(),
      normalize(options),
      Stream.runForEach((event) => Effect.sync(() => void events.push(event))),
      Effect.flip
    )
    return { events, error }
  })

const types = (events: ReadonlyArray<StreamEvent.StreamEvent>) => events.map((event) => event.payload.type)

/** The line the next event of a body starts on (its lines so far, plus one). */
const nextLine = (text: string): number => text.split("\n").length

const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`

const messageStart = event("message_start", {
  type: "message_start",
  message: { id: "msg_x", type: "message", role: "assistant", model: "claude-x", content: [], usage: {} }
})
const blockStart = (index: number) =>
  event("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } })
const textDelta = (index: number, text: string) =>
  event("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text } })
const blockStop = (index: number) => event("content_block_stop", { type: "content_block_stop", index })
const messageStop = event("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" } }) +
  event("message_stop", { type: "message_stop" })

describe("Anthropic: the message's start and stop come once", () => {
  it.effect("a second message_start mid-stream is refused, naming it and the first", () =>
    Effect.gen(function*() {
      const before = messageStart + blockStart(0) + textDelta(0, "hi")
      const { error, events } = yield* refused(
        Anthropic.normalize,
        before + messageStart + textDelta(0, " again") + blockStop(0) + messageStop
      )
      expect(error).toMatchObject({
        _tag: "WireDecodeError",
        provider: "anthropic",
        reason: "InvalidOrder",
        line: nextLine(before)
      })
      expect(error.message).toBe(
        `anthropic event at line ${nextLine(before)}: a second message_start (the message started at line 1)`
      )
      // what came before it is handed on; nothing after it
      expect(types(events)).toStrictEqual(["response_start", "item_start", "item_delta"])
    }))

  for (
    const [name, late] of [
      ["content_block_start", blockStart(1)],
      ["message_start", messageStart],
      ["ping", event("ping", { type: "ping" })],
      ["error", event("error", { type: "error", error: { type: "overloaded_error", message: "late" } })],
      ["message_stop", event("message_stop", { type: "message_stop" })]
    ] as const
  ) {
    it.effect(`${name} after message_stop is refused; the turn before it ended complete`, () =>
      Effect.gen(function*() {
        const before = messageStart + blockStart(0) + textDelta(0, "hi") + blockStop(0) + messageStop
        const { error, events } = yield* refused(Anthropic.normalize, before + late)
        const stopLine = nextLine(before) - 3
        expect(error).toMatchObject({ reason: "InvalidOrder", line: nextLine(before) })
        expect(error.message).toBe(
          `anthropic event at line ${nextLine(before)}: ${name} after message_stop (line ${stopLine})`
        )
        expect(types(events)).toStrictEqual([
          "response_start",
          "item_start",
          "item_delta",
          "item_done",
          "response_done"
        ])
        expect(events.at(-1)?.payload).toMatchObject({ type: "response_done", status: "complete" })
      }))
  }

  it.effect("a recorded transcript followed by a second message is refused at the second message_start", () =>
    Effect.gen(function*() {
      const body = recorded("anthropic", "thinking-then-tool.sse")
      const { error, events } = yield* refused(Anthropic.normalize, body + messageStart)
      expect(error).toMatchObject({ reason: "InvalidOrder" })
      expect(error.message).toContain("message_start after message_stop")
      expect(events.filter((e) => e.payload.type === "response_done")).toHaveLength(1)
    }))
})

describe("OpenAI Responses: the response is created once, and nothing follows its end", () => {
  const body = recorded("openai-responses", "text-simple.sse")
  const created = body.slice(0, body.indexOf("\n\n") + 2)

  it.effect("a second response.created is refused", () =>
    Effect.gen(function*() {
      const { error, events } = yield* refused(OpenAiResponses.normalize, created + created)
      expect(error).toMatchObject({
        _tag: "WireDecodeError",
        provider: "openai-responses",
        reason: "InvalidOrder",
        line: 4
      })
      expect(error.message).toBe(
        "openai-responses event at line 4: a second response.created (the response was created at line 1)"
      )
      expect(types(events)).toStrictEqual(["response_start"])
    }))

  for (const terminal of ["response.completed", "response.incomplete", "response.failed"] as const) {
    it.effect(`an event after ${terminal} is refused`, () =>
      Effect.gen(function*() {
        const ending = event(terminal, {
          type: terminal,
          response: { id: "resp_1", status: terminal.slice("response.".length), output: [] }
        })
        const before = created + ending
        const late = event("response.output_text.delta", {
          type: "response.output_text.delta",
          item_id: "msg_1",
          delta: "late"
        })
        const { error, events } = yield* refused(OpenAiResponses.normalize, before + late)
        expect(error).toMatchObject({ reason: "InvalidOrder", line: nextLine(before) })
        expect(error.message).toBe(
          `openai-responses event at line ${nextLine(before)}: response.output_text.delta after ${terminal} (line 4)`
        )
        expect(events.filter((e) => e.payload.type === "response_done")).toHaveLength(1)
        expect(events.at(-1)?.payload.type).toBe("response_done")
      }))
  }

  it.effect("a recorded transcript followed by another response.created is refused", () =>
    Effect.gen(function*() {
      const { error, events } = yield* refused(OpenAiResponses.normalize, body + created)
      expect(error).toMatchObject({ reason: "InvalidOrder" })
      expect(error.message).toContain("response.created after response.completed")
      expect(events.filter((e) => e.payload.type === "response_done")).toHaveLength(1)
    }))
})

describe("OpenAI Chat: what follows [DONE] is ignored", () => {
  const body = recorded("openai-chat", "text-simple.sse")
  const firstChunk = body.slice(0, body.indexOf("\n\n") + 2)

  it.effect("a chunk, or a second [DONE], after [DONE] changes nothing: the turn ended once, complete", () =>
    Effect.gen(function*() {
      const normalized = (normalize: Normalize, text: string) =>
        Stream.make(bytes(text)).pipe(Sse.decode(), normalize(options), Stream.runCollect)
      const alone = yield* normalized(OpenAiChat.normalize, body)
      for (
        const [normalize, extra] of [
          [OpenAiChat.normalize, firstChunk],
          [OpenAiChat.normalizeCompatible, "data: [DONE]\n\n"]
        ] as const
      ) {
        const events = yield* normalized(normalize, body + extra)
        expect(types(events)).toStrictEqual(types(alone))
        expect(events.filter((e) => e.payload.type === "response_done")).toHaveLength(1)
        expect(events.at(-1)?.payload).toMatchObject({ type: "response_done", status: "complete" })
      }
    }))
})

import { describe, expect, it } from "@effect/vitest"
import { OutputItem, ProviderError, StreamEvent, TurnBuilder } from "../src/index.js"

const options = { runId: "run", turnId: "turn", threadId: "thread", modelId: "model" }

const builderAt = (extra: Partial<TurnBuilder.Context> = {}) => {
  let ids = 0
  return new TurnBuilder.TurnBuilder({ providerId: "p", options, now: () => 7, eventId: () => `e${ids++}`, ...extra })
}

const failure = new ProviderError.ProviderError({
  type: "api_error",
  retryable: true,
  code: "stream_truncated",
  message: "cut"
})

const payloads = (out: ReadonlyArray<StreamEvent.StreamEvent>) => out.map((event) => event.payload)

describe("TurnBuilder", () => {
  it("builds a turn: start once, item start/delta/done, finish once", () => {
    const builder = builderAt()
    const out: Array<StreamEvent.StreamEvent> = []
    const id = builder.openItem(out, "message")
    builder.delta(out, id, "")
    builder.delta(out, id, "hi")
    expect(builder.content(id)).toBe("hi")
    builder.done(out, id, { type: "message", id, content: builder.content(id), origin: "agent" })
    builder.finish(out, { finishReason: "stop" })
    builder.finish(out, { finishReason: "stop" })
    expect(out.map((event) => event.event_id)).toEqual(["e0", "e1", "e2", "e3", "e4"])
    expect(out.every((event) => event.timestamp === 7 && event.run_id === "run")).toBe(true)
    expect(payloads(out)).toEqual([
      {
        type: "response_start",
        response_id: "run",
        turn_id: "turn",
        thread_id: "thread",
        model_id: "model",
        provider_id: "p",
        created_at: 7
      },
      { type: "item_start", item_id: "item_0", item_type: "message" },
      { type: "item_delta", item_id: "item_0", delta_content: "hi" },
      {
        type: "item_done",
        item_id: "item_0",
        final_item: { type: "message", id: "item_0", content: "hi", origin: "agent" }
      },
      { type: "response_done", response_id: "run", status: "complete", finish_reason: "stop" }
    ])
    expect(builder.isFinished).toBe(true)
  })

  it("finds items by the caller's key and keeps their name and metadata", () => {
    const builder = builderAt()
    const out: Array<StreamEvent.StreamEvent> = []
    const item = builder.open(out, "function_call", { key: "tool:a", name: "f", metadata: { x: 1 } })
    builder.open(out, "message", { key: "text:1" })
    expect(item).toMatchObject({ id: "item_0", key: "tool:a", name: "f", metadata: { x: 1 } })
    expect(builder.lastOpen("message")?.id).toBe("item_1")
    builder.delta(out, "tool:a", "{}")
    expect(payloads(out).at(-1)).toEqual({ type: "item_delta", item_id: "item_0", delta_content: "{}" })
    expect(builder.openItems()).toEqual(["tool:a", "text:1"])
  })

  it("ends a failed turn with reason error where the reason is the replaced one", () => {
    const providers = builderAt()
    const out: Array<StreamEvent.StreamEvent> = []
    providers.error(out, failure)
    providers.finish(out, { finishReason: null })
    expect(payloads(out).at(-1)).toMatchObject({ status: "error", finish_reason: "error" })
    const aiSdk = builderAt({ replaceAfterError: "stop" })
    const other: Array<StreamEvent.StreamEvent> = []
    aiSdk.error(other, failure)
    aiSdk.finish(other, { finishReason: "stop" })
    expect(payloads(other).at(-1)).toMatchObject({ status: "error", finish_reason: "error" })
  })

  it("ends aborted turns with status aborted", () => {
    const builder = builderAt({ replaceAfterError: "stop" })
    const out: Array<StreamEvent.StreamEvent> = []
    builder.finish(out, { finishReason: null, aborted: true })
    expect(payloads(out).at(-1)).toEqual({
      type: "response_done",
      response_id: "run",
      status: "aborted",
      finish_reason: null
    })
  })

  it("ends a truncated turn: closes open items, emits the given error, ends with error", () => {
    const builder = builderAt()
    const out: Array<StreamEvent.StreamEvent> = []
    builder.openItem(out, "message", { initial_content: "part" })
    const close = (item: TurnBuilder.OpenItem): OutputItem.OutputItem => ({
      type: "message",
      id: item.id,
      content: item.content,
      origin: "agent"
    })
    builder.endTruncated(out, failure, close)
    builder.endTruncated(out, failure, close)
    expect(payloads(out).map((payload) => payload.type)).toEqual([
      "response_start",
      "item_start",
      "item_done",
      "response_error",
      "response_done"
    ])
    expect(payloads(out)[3]).toMatchObject({ error: { code: "stream_truncated", retryable: true } })
    expect(payloads(out)[4]).toMatchObject({ status: "error", finish_reason: "error" })
  })

  describe("endWithoutFinish", () => {
    // the caller's own finish: closes its open items, then ends the turn
    const finishing =
      (builder: TurnBuilder.TurnBuilder, out: Array<StreamEvent.StreamEvent>) => (end: TurnBuilder.End) => {
        builder.start(out)
        for (const item of builder.openRecords()) {
          builder.done(out, item.key, { type: "message", id: item.id, content: item.content, origin: "agent" })
        }
        builder.finish(out, end)
      }

    it("adds a retryable stream_truncated error naming the source, then ends the turn through the caller's finish", () => {
      const builder = builderAt()
      const out: Array<StreamEvent.StreamEvent> = []
      const id = builder.openItem(out, "message")
      builder.delta(out, id, "partial")
      builder.endWithoutFinish(out, "the test stream", finishing(builder, out))
      builder.endWithoutFinish(out, "the test stream", finishing(builder, out))
      expect(payloads(out).map((payload) => payload.type)).toEqual([
        "response_start",
        "item_start",
        "item_delta",
        "response_error",
        "item_done",
        "response_done"
      ])
      expect(payloads(out)[3]).toMatchObject({
        error: {
          type: "api_error",
          code: "stream_truncated",
          retryable: true,
          message: "the test stream ended without a finish part"
        }
      })
      expect(payloads(out)[4]).toMatchObject({ final_item: { content: "partial" } })
      expect(payloads(out)[5]).toEqual({
        type: "response_done",
        response_id: "run",
        status: "error",
        finish_reason: "error"
      })
    })

    it("adds no error when one already explained the end; does nothing after the finish", () => {
      const builder = builderAt()
      const out: Array<StreamEvent.StreamEvent> = []
      builder.error(out, failure)
      builder.endWithoutFinish(out, "the test stream", finishing(builder, out))
      expect(payloads(out).map((payload) => payload.type)).toEqual([
        "response_start",
        "response_error",
        "response_done"
      ])

      const done = builderAt()
      const finished: Array<StreamEvent.StreamEvent> = []
      done.finish(finished, { finishReason: "stop" })
      let called = false
      done.endWithoutFinish(finished, "the test stream", () => (called = true))
      expect(called).toBe(false)
      expect(finished).toHaveLength(2)
    })
  })
})

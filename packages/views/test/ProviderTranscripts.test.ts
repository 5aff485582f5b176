/**
 * The views over the events of real provider transcripts: the patch view of turns in
 * which only the provider ran tools (docs/views.md#messageaccumulator-over-event-patches),
 * and an Anthropic in-stream `event: error` whose wire object `ProcessedChunk` gives back
 * as `originalError` (docs/views.md#processedchunk).
 */
import { describe, expect, it } from "@effect/vitest"
import { OutputItem, Sse, type StreamEvent } from "@sluice/core"
import { Anthropic, type Normalizer, Providers } from "@sluice/providers"
import { fixture, hostedToolTranscripts } from "@sluice/testing/providers"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { AssistantMessage, MessageAccumulator, ProcessedChunk, StreamEventPatches } from "../src/index.js"

const options: Normalizer.NormalizeOptions = {
  runId: "00000000-0000-4000-8000-000000000001",
  turnId: "00000000-0000-4000-8000-000000000002",
  threadId: "00000000-0000-4000-8000-000000000003"
}

/** The events a normalizer gives for a whole transcript read at once. */
const run = (normalize: Normalizer.Normalize, text: string) =>
  Stream.make(new TextEncoder().encode(text)).pipe(Sse.decode(), normalize(options), Stream.runCollect)

const finals = (events: ReadonlyArray<StreamEvent.StreamEvent>) =>
  events.flatMap((event) => (event.payload.type === "item_done" ? [event.payload.final_item] : []))

describe("provider-executed tool calls in the patch view", () => {
  for (const [provider, name, text] of hostedToolTranscripts) {
    it.effect(
      `${provider} ${name}: the patch view has no tool_call blocks, and lists the provider's calls with their results`,
      () =>
        Effect.gen(function*() {
          const events = yield* run(Providers.get(provider).normalize, text)
          const message = yield* Stream.fromIterable(events).pipe(
            StreamEventPatches.fromStreamEvents,
            MessageAccumulator.run()
          )
          expect(AssistantMessage.toolCalls(message)).toStrictEqual([])
          expect(message.content.some((block) => block.type === "tool_result")).toBe(false)
          const calls = finals(events).filter(OutputItem.isProviderToolCall)
          expect(message.provider_tool_calls?.map((call) => call.id)).toStrictEqual(calls.map((call) => call.call_id))
          const answered = new Set(
            finals(events).flatMap((item) => (item.type === "function_call_output" ? [item.call_id] : []))
          )
          for (const call of message.provider_tool_calls ?? []) {
            expect(call.result !== undefined).toBe(answered.has(call.id))
          }
        }),
      10_000
    )
  }
})

describe("Anthropic in-stream errors as ProcessedChunks", () => {
  it.effect("keep the wire's error object, given back as originalError", () =>
    Effect.gen(function*() {
      const events = yield* run(Anthropic.normalize, fixture("anthropic/overloaded.sse"))
      const chunks = yield* Stream.runCollect(ProcessedChunk.fromEvents(Stream.fromIterable(events)))
      const errors = [...chunks].flatMap((chunk) => (chunk.type === "error" ? [chunk.error] : []))
      expect(errors).toMatchObject([
        {
          type: "provider_overloaded",
          code: "overloaded_error",
          retryable: true,
          originalError: { type: "overloaded_error", message: "Overloaded" }
        }
      ])
    }), 10_000)
})

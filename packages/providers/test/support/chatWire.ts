/**
 * Helpers of the Chat Completions tests: a `chat.completion.chunk` as SSE, the two
 * normalizers over a text, and the next request of a transcript's turn.
 */
import { Turn } from "@sluice/accumulator"
import { OutputItem, Sse } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { type LlmRequest, OpenAiChat, Providers, RoundTrip } from "../../src/index.js"
import type { ProviderName } from "../../src/ProviderName.js"
import { runText } from "./normalizerHarness.js"

/** `OpenAiChat.normalize` over an SSE text. */
export const runChat = (text: string) => runText(OpenAiChat.normalize, text)

/** `OpenAiChat.normalizeCompatible` over an SSE text. */
export const runChatCompatible = (text: string) => runText(OpenAiChat.normalizeCompatible, text)

/** One chunk of choice 0 with `delta`, as an SSE event; `extra` adds top-level fields. */
export const chatChunk = (delta: unknown, finish: string | null = null, extra: Record<string, unknown> = {}) =>
  `data: ${
    JSON.stringify({
      id: "c",
      object: "chat.completion.chunk",
      model: "m",
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra
    })
  }\n\n`

/**
 * Normalizes a transcript, folds it, answers every client call with `output`, and
 * gives the messages of the next request after `start`.
 */
export const nextMessages = (
  start: LlmRequest.LlmRequest,
  provider: ProviderName,
  transcript: string,
  output: string
) =>
  Effect.gen(function*() {
    const events = yield* Stream.make(new TextEncoder().encode(transcript)).pipe(
      Sse.decode(),
      Providers.get(provider).normalize(),
      Stream.runCollect
    )
    const items = Turn.finalItems(Result.getOrThrow(Turn.fromEvents(events)))
    const outputs = items.filter(OutputItem.isClientToolCall).map((call) => ({ callId: call.call_id, output }))
    const request = Result.getOrThrow(RoundTrip.continueWith(start, { provider, items }, outputs))
    const body = Providers.encode(provider, request, { apiKey: "k", baseUrl: "http://x" }).body
    return { outputs, messages: body.messages as ReadonlyArray<Record<string, unknown>> }
  })

/**
 * Vercel AI SDK streams into Sluice StreamEvents: `streamText(...).fullStream` (or
 * `.stream`), or a provider model's `doStream` stream (`LanguageModelV4StreamPart`, and
 * the V3 and V2 parts of the same shape). The events feed Sluice's later stages: the
 * accumulator, the upserts, Redis.
 *
 * | AI SDK part | StreamEvents |
 * |---|---|
 * | `text-start` / `text-delta` / `text-end` | a `message` item: `item_start`, `item_delta`, `item_done` |
 * | `reasoning-start` / `-delta` / `-end` | a `reasoning` item; `providerMetadata` signatures become `signature` (Anthropic `signature`, Gemini `thoughtSignature`), `redacted` + `data` (Anthropic `redactedData`), `encrypted_content` (OpenAI `reasoningEncryptedContent`) |
 * | `tool-input-start` / `-delta`, then `tool-call` | a `function_call` item, done at `tool-call` with `call_id = toolCallId`; `arguments` is the streamed JSON text, or the call's `input` when nothing streamed |
 * | `tool-result`, `tool-error` | a `function_call_output` item (`success: false` for errors and `isError` results); preliminary results are skipped |
 * | `providerExecuted: true` on `tool-input-start`, `tool-call`, `tool-result` or `tool-error` | the item is `provider_executed` (the provider ran the tool; not one for the caller) |
 * | `response-metadata` | the model id of `response_start`, when it comes first |
 * | `error` | `response_error` with a `ProviderError` classified from status and body (`ProviderError.classify`); the turn ends with status `error` |
 * | `finish` | `response_done` with the finish reason and usage (`content-filter` also gives a `content_blocked` error) |
 * | `abort` | `response_done` with status `aborted` |
 * | `source` (`url` or `document`) | a source of the message open at the time, or of the next message (`sources`) |
 * | `start`, `start-step`, `finish-step`, `stream-start`, `ping`, `raw`, `file`, tool approvals and parts unknown to Sluice | nothing |
 *
 * Every item still open when the turn ends is finished with what it received. A
 * stream that stops without `finish` or `abort` ends the turn with status `error` and a
 * retryable `stream_truncated` error (unless an `error` part came first). Provider
 * metadata is kept on every item; Gemini's `thoughtSignature` is also copied to the top
 * of `provider_metadata`, where Sluice's views look for it.
 *
 * @since 0.1.0
 */
import type { StreamEvent } from "@sluice/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { AiSdkPartError } from "./AiSdkPartError.js"
import { PartConverter } from "./internal/convert.js"

/**
 * The turn the stream becomes. Ids default to fresh UUIDs (`runId` doubles as the
 * `response_id`); `providerId` defaults to `ai-sdk`; `modelId` to the
 * `response-metadata` part's, or `unknown`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly runId?: string | undefined
  readonly turnId?: string | undefined
  readonly threadId?: string | undefined
  readonly traceContext?: StreamEvent.TraceContext | undefined
  readonly modelId?: string | undefined
  readonly providerId?: string | undefined
}

/**
 * A `Stream` transformer from AI SDK stream parts (of `streamText` or of a model's
 * `doStream`) to StreamEvents. Parts are read by Schema: a part of a type Sluice reads
 * with fields of the wrong shape fails the stream with `AiSdkPartError` naming it,
 * after the events before it. Timestamps come from Effect's `Clock`.
 *
 * @since 0.1.0
 * @category stages
 */
export const fromParts =
  (options: Options = {}) =>
  <E, R>(self: Stream.Stream<unknown, E, R>): Stream.Stream<StreamEvent.StreamEvent, E | AiSdkPartError, R> =>
    Stream.suspend(() => {
      const converter = new PartConverter(options)
      const parts = self.pipe(
        Stream.chunks,
        Stream.mapEffect((chunk) =>
          Effect.map(Clock.currentTimeMillis, (now) => {
            const out: Array<StreamEvent.StreamEvent> = []
            for (const part of chunk) {
              const error = converter.push(part, now, out)
              if (error !== undefined) return [out, error] as const
            }
            return [out, undefined] as const
          })
        ),
        Stream.flatMap(([events, error]) =>
          error === undefined ? Stream.fromArray(events) : Stream.concat(Stream.fromArray(events), Stream.fail(error))
        )
      )
      const end = Stream.fromIterableEffect(
        Effect.map(Clock.currentTimeMillis, (now) => {
          const out: Array<StreamEvent.StreamEvent> = []
          converter.end(now, out)
          return out
        })
      )
      return Stream.concat(parts, end)
    })

/**
 * Reads an AI SDK stream (an `AsyncIterable` of parts, as `streamText(...).fullStream`
 * is) into StreamEvents. An error the iterable throws (a failed request, a dropped
 * connection) becomes a classified `response_error` and ends the turn with status
 * `error`, as an `error` part does.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromAsyncIterable = (
  iterable: AsyncIterable<unknown>,
  options: Options = {}
): Stream.Stream<StreamEvent.StreamEvent, AiSdkPartError> =>
  Stream.fromAsyncIterable(iterable, (cause) => cause).pipe(
    Stream.catch((cause) => Stream.make({ type: "error", error: cause })),
    fromParts(options)
  )

/**
 * The events of a `streamText` result: `fromAsyncIterable(result.fullStream)`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromStreamText = (
  result: { readonly fullStream: AsyncIterable<unknown> },
  options: Options = {}
): Stream.Stream<StreamEvent.StreamEvent, AiSdkPartError> => fromAsyncIterable(result.fullStream, options)

/**
 * The events of a model's `doStream` result (`{stream: ReadableStream<part>}`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromDoStream = (
  result: { readonly stream: ReadableStream<unknown> },
  options: Options = {}
): Stream.Stream<StreamEvent.StreamEvent, AiSdkPartError> =>
  Stream.fromReadableStream({ evaluate: () => result.stream, onError: (cause) => cause }).pipe(
    Stream.catch((cause) => Stream.make({ type: "error", error: cause })),
    fromParts(options)
  )

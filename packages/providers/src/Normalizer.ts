/**
 * What every provider module offers: a `Stream` transformer from SSE events to the hub
 * StreamEvent vocabulary (and the same from the body's bytes, framing included, in one
 * step), and a decoder of the same provider's non-streaming response into the same
 * events.
 *
 * @since 0.1.0
 */
import type { Sse, StreamEvent } from "@sluice/core"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type { WireDecodeError } from "./WireDecodeError.js"

/**
 * Identifiers of the turn the events belong to. Each defaults to a fresh UUID
 * (`runId` doubles as `response_id`).
 *
 * @since 0.1.0
 * @category models
 */
export interface NormalizeOptions {
  readonly runId?: string | undefined
  readonly turnId?: string | undefined
  readonly threadId?: string | undefined
  readonly traceContext?: StreamEvent.TraceContext | undefined
  /** Used when the provider's stream names no model (Gemini without `modelVersion`). */
  readonly modelId?: string | undefined
  /**
   * The names of the tools the request declared, when the caller knows them. The
   * Responses normalizer reports a `custom_tool_call` under any other name as one the
   * provider ran itself (docs/providers.md); without them it reads the response's echo
   * of its `tools`.
   *
   * @since 0.3.0
   */
  readonly toolNames?: ReadonlyArray<string> | undefined
}

/**
 * A streaming normalizer. In-stream provider errors become `response_error` events and
 * end the turn with status `error`; a stream that stops without its terminal event
 * ends the turn the same way, keeping what arrived. Input that is not the provider's
 * wire format fails the stream with `WireDecodeError`.
 *
 * @since 0.1.0
 * @category models
 */
export type Normalize = (
  options?: NormalizeOptions
) => <E, R>(self: Stream.Stream<Sse.SseEvent, E, R>) => Stream.Stream<StreamEvent.StreamEvent, E | WireDecodeError, R>

/**
 * A provider's SSE body (its bytes, in any reads) to events, framed and normalized in
 * one step: the same events and failures as `Sse.decode(sse)` then `normalize(options)`,
 * at one pull per read instead of one per stage (what a live turn runs).
 *
 * @since 0.3.0
 * @category models
 */
export type DecodeSse = (
  options?: NormalizeOptions,
  sse?: Sse.DecodeOptions
) => <E, R>(
  self: Stream.Stream<Uint8Array, E, R>
) => Stream.Stream<StreamEvent.StreamEvent, E | Sse.SseError | WireDecodeError, R>

/**
 * A non-streaming decoder: the provider's JSON response (already parsed) into the same
 * events the streaming normalizer would produce for the same content.
 *
 * @since 0.1.0
 * @category models
 */
export type NormalizeResponse = (
  body: unknown,
  options?: NormalizeOptions
) => Effect.Effect<ReadonlyArray<StreamEvent.StreamEvent>, WireDecodeError>

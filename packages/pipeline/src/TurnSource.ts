/**
 * Where a turn's events come from, given its context: a provider's SSE bytes (framed
 * and normalized with the context's ids), a provider's non-streaming response, or
 * StreamEvents made elsewhere.
 *
 * @since 0.1.0
 */
import { Sse, type StreamEvent } from "@sluice/core"
import { type ProviderName, Providers, type WireDecodeError } from "@sluice/providers"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { TurnContext } from "./TurnContext.js"

/**
 * A turn's events, made for its context.
 *
 * @since 0.1.0
 * @category models
 */
export type TurnSource<E, R> = (context: TurnContext) => Stream.Stream<StreamEvent.StreamEvent, E, R>

/** The normalizer options of a context. */
const normalizeOptions = (context: TurnContext) => ({
  runId: context.runId,
  turnId: context.turnId,
  threadId: context.threadId,
  traceContext: context.traceContext
})

/**
 * A provider's SSE response body, framed and normalized in one step (the provider's
 * `decodeSse`). A body cut short ends the turn truncated; bytes that are not the
 * provider's wire format fail with `SseError` or `WireDecodeError`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sse = <E, R>(
  provider: ProviderName.ProviderName,
  bytes: Stream.Stream<Uint8Array, E, R>
): TurnSource<E | Sse.SseError | WireDecodeError.WireDecodeError, R> =>
(context) => bytes.pipe(Providers.get(provider).decodeSse(normalizeOptions(context)))

/**
 * A provider's non-streaming response (parsed JSON), as the events the streaming
 * normalizer would give for the same content.
 *
 * @since 0.1.0
 * @category constructors
 */
export const response =
  (provider: ProviderName.ProviderName, body: unknown): TurnSource<WireDecodeError.WireDecodeError, never> =>
  (context) =>
    Stream.unwrap(
      Effect.map(Providers.get(provider).normalizeResponse(body, normalizeOptions(context)), Stream.fromIterable)
    )

/**
 * StreamEvents made elsewhere (a live provider client, the AI SDK adapter), for the
 * context's turn.
 *
 * @since 0.1.0
 * @category constructors
 */
export const events = <E, R>(
  make: (context: TurnContext) => Stream.Stream<StreamEvent.StreamEvent, E, R>
): TurnSource<E, R> => make

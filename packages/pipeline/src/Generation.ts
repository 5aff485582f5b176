/**
 * The generation entry point (docs/generation.md): one live request to a provider, as
 * the `IContent` values of `@sluice/accumulator` (docs/views.md#icontent). Each piece of
 * agent text is its own `IContent` as it arrives (empty pieces are skipped); once the
 * provider is done, one `IContent` carries every tool call the caller must run (ids in
 * history form, `hist_tool_...`), and the last one carries the usage (zeros when the
 * provider reported none).
 *
 * Two forms: `generateStreaming` is an `AsyncIterable` for callers outside Effect,
 * `stream` the same as an Effect `Stream`. Both send the request with
 * `ProviderClient` (retries, key rotation, timeouts: docs/errors.md): a request that
 * breaks a rule (temperature from 0 to 2, ...) fails before anything is sent with a
 * `LlmRequestError` naming the field; a provider error ends the iteration with that
 * `ProviderError` (thrown from the `AsyncIterable`), keeping what was already
 * yielded; it is never swallowed. With `streaming: false` the provider's non-streaming
 * request is sent, and its one answer is yielded in the same form.
 *
 * @since 0.3.0
 */
import type { AccumulatorError } from "@sluice/accumulator"
import { IContent } from "@sluice/accumulator"
import type { ProviderError } from "@sluice/core"
import type { LlmRequestError } from "@sluice/providers/LlmRequest"
import * as LlmRequest from "@sluice/providers/LlmRequest"
import type { NormalizeOptions } from "@sluice/providers/Normalizer"
import * as ProviderClient from "@sluice/providers/ProviderClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"

/**
 * What may be given beside the request, as the first design's `GenerationOptions`: each one
 * given replaces the request's own. `tools` may leave `parameters` out (`{}`), and
 * `streaming: false` asks for the non-streaming request. `turn` names the turn's ids
 * and trace context (fresh ids when absent).
 *
 * @since 0.3.0
 * @category models
 */
export interface GenerationOptions {
  readonly temperature?: number | undefined
  readonly maxTokens?: number | undefined
  readonly tools?:
    | ReadonlyArray<{
      readonly name: string
      readonly description?: string | undefined
      readonly parameters?: LlmRequest.ToolDefinition["parameters"] | undefined
    }>
    | undefined
  readonly streaming?: boolean | undefined
  readonly turn?: NormalizeOptions | undefined
}

/**
 * What generation fails with: the request broke a rule (`LlmRequestError`), the
 * provider reported an error (`ProviderError`), its bytes were not its wire format
 * (`WireDecodeError`, `SseError`), or its events broke an order rule
 * (`AccumulatorError`).
 *
 * @since 0.3.0
 * @category errors
 */
export type GenerationError =
  | ProviderClient.StreamError
  | ProviderError.ProviderError
  | AccumulatorError.AccumulatorError

/**
 * The request with the options laid over it, checked and with its defaults filled.
 *
 * @since 0.3.0
 * @category constructors
 */
export const requestOf = (
  request: LlmRequest.LlmRequest,
  options: GenerationOptions = {}
): Result.Result<LlmRequest.LlmRequest, LlmRequestError> =>
  LlmRequest.checkResult({
    ...request,
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
    ...(options.tools === undefined
      ? {}
      : { tools: options.tools.map((tool) => LlmRequest.tool(tool.name, tool)) }),
    ...(options.streaming === undefined ? {} : { streaming: options.streaming })
  })

/**
 * The `IContent`s of one live request on `client`, as a `Stream`.
 *
 * @since 0.3.0
 * @category streams
 */
export const stream = (
  client: ProviderClient.Client,
  request: LlmRequest.LlmRequest,
  options: GenerationOptions = {}
): Stream.Stream<IContent.IContent, GenerationError> =>
  Stream.unwrap(
    Effect.map(
      Effect.fromResult(requestOf(request, options)),
      (checked) => IContent.fromEvents(client.stream(checked, options.turn))
    )
  )

/**
 * `stream` on the `ProviderClient` service.
 *
 * @since 0.3.0
 * @category streams
 */
export const streamWith = (
  request: LlmRequest.LlmRequest,
  options: GenerationOptions = {}
): Stream.Stream<IContent.IContent, GenerationError, ProviderClient.ProviderClient> =>
  Stream.unwrap(Effect.gen(function*() {
    const client = yield* ProviderClient.ProviderClient
    return stream(client, request, options)
  }))

/**
 * The first design's `generateStreaming`: the `IContent`s of one live request as an
 * `AsyncIterable`, on a `ProviderClient.Client` or on `ProviderClient.Settings` (then
 * sent with the platform's `fetch`). Iterating sends the request; each `next()`
 * resolves with the next `IContent`. A failure rejects `next()` with the typed error
 * (`LlmRequestError`, `ProviderError`, ...; see `GenerationError`) after what came
 * before it; `return()` (a `break` out of `for await`) aborts the HTTP request.
 *
 * @since 0.3.0
 * @category async
 */
export const generateStreaming = (
  source: ProviderClient.Client | ProviderClient.Settings,
  request: LlmRequest.LlmRequest,
  options: GenerationOptions = {}
): AsyncIterable<IContent.IContent> => {
  const contents = "stream" in source
    ? stream(source, request, options)
    : Stream.unwrap(
      Effect.map(ProviderClient.make(source), (client) => stream(client, request, options))
    ).pipe(Stream.provide(FetchHttpClient.layer))
  return Stream.toAsyncIterableWith(contents, Context.empty())
}

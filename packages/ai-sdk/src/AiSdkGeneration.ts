/**
 * The generation entry point (docs/generation.md) on a Vercel AI SDK model:
 * `generateStreaming(model, messages, options)` runs the AI SDK's `streamText` with the
 * model, the messages and the call options, and gives the same `IContent`s as
 * `@sluice/pipeline`'s `Generation.generateStreaming` does on Sluice's own client: each
 * piece of agent text as it arrives (empty pieces skipped), then one `IContent` with the
 * tool calls the caller must run (ids in history form, `hist_tool_...`), and the usage
 * last. The stream parts become StreamEvents by `AiSdkStream` and `IContent`s by
 * `IContent.fromEvents`, as Sluice's own events do.
 *
 * A provider error (an `error` part, or `streamText` throwing) ends the iteration with
 * its `ProviderError`, classified from status and body, after what came before it; a
 * part of the wrong shape with `AiSdkPartError`. Tools without `execute` end the turn at
 * their calls, which come in the tool call `IContent`; tools with `execute` run in the
 * AI SDK as it runs them.
 *
 * @since 0.3.0
 */
import { IContent } from "@sluice/accumulator"
import type { AccumulatorError } from "@sluice/accumulator"
import type { ProviderError } from "@sluice/core"
import { type LanguageModel, type ModelMessage, streamText } from "ai"
import * as Context from "effect/Context"
import * as Stream from "effect/Stream"
import type { AiSdkPartError } from "./AiSdkPartError.js"
import * as AiSdkStream from "./AiSdkStream.js"

/**
 * The options of `streamText` besides its model and messages (`system`, `tools`,
 * `temperature`, `maxOutputTokens`, `abortSignal`, ...), and `turn`: the ids of the turn
 * the events belong to (`AiSdkStream.Options`; fresh ids when absent).
 *
 * @since 0.3.0
 * @category models
 */
export type GenerationOptions = Omit<Parameters<typeof streamText>[0], "model" | "messages" | "prompt"> & {
  readonly turn?: AiSdkStream.Options | undefined
}

/**
 * What generation fails with: the provider's error (`ProviderError`), a stream part of
 * the wrong shape (`AiSdkPartError`), or events out of order (`AccumulatorError`).
 *
 * @since 0.3.0
 * @category errors
 */
export type GenerationError = ProviderError.ProviderError | AiSdkPartError | AccumulatorError.AccumulatorError

/**
 * The `IContent`s of one `streamText` call, as a `Stream`. The call starts when the
 * stream is run.
 *
 * @since 0.3.0
 * @category streams
 */
export const stream = (
  model: LanguageModel,
  messages: ReadonlyArray<ModelMessage>,
  options: GenerationOptions = {}
): Stream.Stream<IContent.IContent, GenerationError> =>
  Stream.suspend(() => {
    const { turn, ...call } = options
    const result = streamText({ ...call, model, messages: [...messages] })
    return IContent.fromEvents(AiSdkStream.fromStreamText(result, turn))
  })

/**
 * The first design's `generateStreaming(model, messages, options)`: `stream` as an
 * `AsyncIterable`, the same form as `Generation.generateStreaming` of `@sluice/pipeline`.
 * Each `next()` resolves with the next `IContent`; a failure rejects it with the typed
 * error (`GenerationError`) after what came before it.
 *
 * @since 0.3.0
 * @category async
 */
export const generateStreaming = (
  model: LanguageModel,
  messages: ReadonlyArray<ModelMessage>,
  options: GenerationOptions = {}
): AsyncIterable<IContent.IContent> => Stream.toAsyncIterableWith(stream(model, messages, options), Context.empty())

/**
 * Sluice as `effect/ai`'s `LanguageModel`: `generateText`, `streamText`,
 * `generateObject`, toolkits and `Chat` on Sluice's live `ProviderClient` (its retries
 * with key rotation, its response and idle timeouts: docs/providers.md), for every wire
 * API Sluice speaks (OpenAI Chat and compatible servers, OpenAI Responses, Anthropic
 * Messages, Gemini).
 *
 * The prompt becomes an `LlmRequest`: system messages its `system`, user text, assistant
 * turns, tool results, the toolkit's tools with their JSON Schema. The turn's
 * StreamEvents become response parts: text and reasoning (start, deltas, end), tool
 * calls (provider-executed ones marked), provider-executed tool results, sources,
 * `finish` with its reason and usage. Each finished item rides in its part's metadata
 * under `sluice`, so the next request of a `Chat` or of a tool loop sends back what the
 * provider demands (reasoning signatures, encrypted reasoning, Gemini thought
 * signatures, hosted tool items). An error that ends the turn before any output (once
 * the client's retries are spent) fails the call with an `AiError` whose reason matches
 * Sluice's classification (rate limit, quota, content policy, overloaded, timeout,
 * authentication, invalid request); after output, `streamText` streams it as an
 * `error` part and `generateText` fails with it. See docs/language-model.md.
 *
 * The tool choice and a JSON response format (`generateObject`'s schema) go to the
 * provider as `LlmRequest`'s `toolChoice` and `responseFormat` (docs/providers.md).
 *
 * @since 0.3.0
 */
import type { StreamEvent } from "@sluice/core"
import { LlmRequest, ProviderClient, type ProviderName, Providers } from "@sluice/providers"
import * as AiError from "effect/ai/AiError"
import * as LanguageModel from "effect/ai/LanguageModel"
import type * as Response from "effect/ai/Response"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { aiErrorOf, aiErrorOfStream, invalidPrompt } from "./internal/errors.js"
import { requestOf } from "./internal/request.js"
import { toParts } from "./internal/toParts.js"

/**
 * What every request of the model carries besides its prompt: the model id, and the
 * sampling options of `LlmRequest` (checked by the client before sending: a bad value
 * fails the call with an `InvalidRequestError` naming the field).
 *
 * @since 0.3.0
 * @category models
 */
export interface Options {
  readonly model: string
  readonly temperature?: number | undefined
  readonly maxTokens?: number | undefined
  readonly reasoning?: LlmRequest.Reasoning | undefined
}

/**
 * The events of one call as stream parts; fails with an `AiError` when the turn failed
 * before any output.
 */
const partsOf = (
  client: ProviderClient.Client,
  options: Options,
  provider: LanguageModel.ProviderOptions,
  method: string
): Stream.Stream<Response.StreamPartEncoded, AiError.AiError> =>
  Stream.suspend(() => {
    const request = requestOf(options, provider)
    if (Result.isFailure(request)) return Stream.fail(invalidPrompt(request.failure.description, method))
    const toolNames = provider.tools.map((tool) => tool.name)
    return client.stream(request.success, { toolNames }).pipe(
      Stream.mapError((error) => aiErrorOfStream(error, method)),
      toParts(client.baseUrl, method, {
        names: new Set(toolNames),
        deferred: provider.toolCallValidation === "deferred"
      })
    )
  })

/**
 * Stream parts folded into the parts of a whole response: each text and reasoning
 * item's deltas joined into one part with the metadata of its end.
 */
const wholeParts = (
  parts: ReadonlyArray<Response.StreamPartEncoded>,
  baseUrl: string
): Result.Result<Array<Response.PartEncoded>, AiError.AiError> => {
  const out: Array<Response.PartEncoded> = []
  const open = new Map<string, { readonly index: number; text: string }>()
  for (const part of parts) {
    switch (part.type) {
      case "text-start":
      case "reasoning-start":
        open.set(part.id, { index: out.length, text: "" })
        out.push({ type: part.type === "text-start" ? "text" : "reasoning", text: "" })
        break
      case "text-delta":
      case "reasoning-delta": {
        const item = open.get(part.id)
        if (item !== undefined) item.text += part.delta
        break
      }
      case "text-end":
      case "reasoning-end": {
        const item = open.get(part.id)
        if (item === undefined) break
        open.delete(part.id)
        out[item.index] = {
          type: part.type === "text-end" ? "text" : "reasoning",
          text: item.text,
          ...(part.metadata === undefined ? {} : { metadata: part.metadata })
        }
        break
      }
      case "error":
        return Result.fail(
          AiError.isAiError(part.error)
            ? part.error
            : aiErrorOf({ code: "error", message: String(part.error) }, baseUrl, "generateText")
        )
      case "tool-params-start":
      case "tool-params-delta":
      case "tool-params-end":
        break
      default:
        out.push(part)
    }
  }
  return Result.succeed(out)
}

/**
 * The `LanguageModel` on the `ProviderClient` in context.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<LanguageModel.LanguageModel, never, ProviderClient.ProviderClient> =>
  Effect.gen(function*() {
    const client = yield* ProviderClient.ProviderClient
    return yield* LanguageModel.make({
      generateText: (provider) =>
        Effect.flatMap(
          Stream.runCollect(partsOf(client, options, provider, "generateText")),
          (parts) => Effect.fromResult(wholeParts(parts, client.baseUrl))
        ),
      streamText: (provider) => partsOf(client, options, provider, "streamText")
    })
  })

/**
 * The `LanguageModel` on the `ProviderClient` in context, as a layer.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerWithClient = (
  options: Options
): Layer.Layer<LanguageModel.LanguageModel, never, ProviderClient.ProviderClient> =>
  Layer.effect(LanguageModel.LanguageModel, make(options))

/**
 * The `LanguageModel` of one provider: the client's settings (the provider, its API
 * keys, base URL, retry and timeouts) and the model's options, on the `HttpClient` in
 * context.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (
  options: Options & ProviderClient.Settings
): Layer.Layer<LanguageModel.LanguageModel, never, HttpClient.HttpClient> =>
  layerWithClient(options).pipe(Layer.provide(ProviderClient.layer(options)))

/**
 * `layer` with the client's settings from the environment (`ProviderClient.config`:
 * the provider's API key variable, such as `OPENAI_API_KEY`, a comma-separated list to
 * rotate through, and its base URL variable).
 *
 * @since 0.3.0
 * @category layers
 */
export const layerConfig = (
  options: Options & { readonly provider: ProviderName.ProviderName } & ProviderClient.Overrides
): Layer.Layer<LanguageModel.LanguageModel, Config.ConfigError, HttpClient.HttpClient> =>
  layerWithClient(options).pipe(Layer.provide(ProviderClient.layerConfig(options.provider, options)))

/**
 * A `ProviderClient` that answers each request with the next recorded transcript (the
 * provider's SSE body, as `sluice record` or a provider's own stream wrote it), decoded by
 * the provider's normalizer; a request past the last transcript fails the call. With
 * `layerWithClient`, the `LanguageModel` of a test: no network, no keys.
 *
 * @since 0.3.0
 * @category testing
 */
export const replayClient = (
  provider: ProviderName.ProviderName,
  transcripts: ReadonlyArray<string>
): Effect.Effect<ProviderClient.Client> =>
  Effect.sync(() => {
    const { decodeSse } = Providers.get(provider)
    const encoder = new TextEncoder()
    let next = 0
    return {
      provider,
      baseUrl: "replay:",
      stream: (request, normalize) =>
        Stream.suspend((): Stream.Stream<StreamEvent.StreamEvent, ProviderClient.StreamError> => {
          const body = transcripts[next++]
          return body === undefined
            ? Stream.fail(
              new LlmRequest.LlmRequestError({
                field: "request",
                message: `replay: no transcript left for request ${next} (${transcripts.length} recorded)`
              })
            )
            : Stream.make(encoder.encode(body)).pipe(decodeSse({ modelId: request.model, ...normalize }))
        })
    }
  })

/**
 * `replayClient` and the model on it: the layer to swap for `layer` in a test.
 *
 * @since 0.3.0
 * @category testing
 */
export const layerReplay = (
  options: Options & { readonly provider: ProviderName.ProviderName; readonly transcripts: ReadonlyArray<string> }
): Layer.Layer<LanguageModel.LanguageModel> =>
  layerWithClient(options).pipe(
    Layer.provide(Layer.effect(ProviderClient.ProviderClient, replayClient(options.provider, options.transcripts)))
  )

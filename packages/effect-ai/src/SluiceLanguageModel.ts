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
 * `layerPublished` also runs each call as a Sluice turn of the `TurnPipeline` in context
 * (Stream A, Stream B, lease, cancel), from the same provider request
 * (docs/language-model.md#publishing-as-a-turn).
 *
 * @since 0.3.0
 */
import type { StreamEvent } from "@sluice/core"
import { type TurnContext, TurnPipeline } from "@sluice/pipeline"
import { LlmRequest, type Normalizer, ProviderClient, type ProviderName, Providers } from "@sluice/providers"
import * as AiError from "effect/ai/AiError"
import * as LanguageModel from "effect/ai/LanguageModel"
import type * as Response from "effect/ai/Response"
import type * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { aiErrorOf, aiErrorOfStream, invalidPrompt } from "./internal/errors.js"
import { publishedEvents } from "./internal/publish.js"
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
 * The events of one call: the request, the normalizer's options (the tools it
 * declared), and the method, for the errors.
 */
type Events = (
  request: LlmRequest.LlmRequest,
  normalize: Normalizer.NormalizeOptions,
  method: string
) => Stream.Stream<StreamEvent.StreamEvent, AiError.AiError>

/** The client's events as they come, its failures as `AiError`s. */
const clientEvents = (client: ProviderClient.Client): Events => (request, normalize, method) =>
  client.stream(request, normalize).pipe(Stream.mapError((error) => aiErrorOfStream(error, method)))

/**
 * The events of one call as stream parts; fails with an `AiError` when the turn failed
 * before any output.
 */
const partsOf = (
  events: Events,
  baseUrl: string,
  options: Options,
  provider: LanguageModel.ProviderOptions,
  method: string
): Stream.Stream<Response.StreamPartEncoded, AiError.AiError> =>
  Stream.suspend(() => {
    const request = requestOf(options, provider)
    if (Result.isFailure(request)) return Stream.fail(invalidPrompt(request.failure.description, method))
    const toolNames = provider.tools.map((tool) => tool.name)
    return events(request.success, { toolNames }, method).pipe(
      toParts(baseUrl, method, {
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
    return yield* makeWith(clientEvents(client), client.baseUrl, options)
  })

/** The `LanguageModel` on the events of each call. */
const makeWith = (events: Events, baseUrl: string, options: Options) =>
  LanguageModel.make({
    generateText: (provider) =>
      Effect.flatMap(
        Stream.runCollect(partsOf(events, baseUrl, options, provider, "generateText")),
        (parts) => Effect.fromResult(wholeParts(parts, baseUrl))
      ),
    streamText: (provider) => partsOf(events, baseUrl, options, provider, "streamText")
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

/**
 * A call's turn, as the program gives it for the calls it makes (see
 * `layerPublished`): the ids of `TurnContext` (`turnId`, `threadId`, `runId`, each
 * fresh when not given), the key `prefix`, the W3C trace context, the `agentId` of the
 * turn's opening, and `onTurn`, called with the turn's context once the turn is in
 * Redis (to hand its id to a UI, or to cancel it). A `turnId` names one turn: give it
 * to one call (a tool loop of `generateText` makes a call per step).
 *
 * @since 0.3.0
 * @category publishing
 */
export interface TurnOptions extends TurnContext.TurnContextInput {
  readonly agentId?: string | undefined
  readonly onTurn?: ((turn: TurnContext.TurnContext) => Effect.Effect<void>) | undefined
}

/**
 * The `TurnOptions` of the calls made under it (none by default: fresh ids), set with
 * `Effect.provideService(effect, SluiceLanguageModel.TurnOptions, { threadId })` (or
 * `Stream.provideService` around a `streamText` stream); read by the model of
 * `layerPublished` as each call starts, ignored by the others.
 *
 * @since 0.3.0
 * @category publishing
 */
export const TurnOptions: Context.Reference<TurnOptions> = Context.Reference<TurnOptions>(
  "@sluice/effect-ai/SluiceLanguageModel/TurnOptions",
  { defaultValue: () => ({}) }
)

/**
 * The settings of a published model besides the model's own: the key `prefix` of its
 * turns (the pipeline's by default), the `agentId` of their openings, and `onTurn`,
 * called with each turn's context once it is in Redis (after the layer's, a call's own
 * `TurnOptions.onTurn` is called too).
 *
 * @since 0.3.0
 * @category publishing
 */
export interface PublishOptions {
  readonly prefix?: string | undefined
  readonly agentId?: string | undefined
  readonly onTurn?: ((turn: TurnContext.TurnContext) => Effect.Effect<void>) | undefined
}

/**
 * The `LanguageModel` on the `ProviderClient` in context whose every call
 * (`streamText`, `generateText`, `generateObject`, each step of a tool loop or a
 * `Chat`) also runs as a Sluice turn of the `TurnPipeline` in context: one provider
 * request, whose events the turn's source reads and hands to the call as they come
 * while the pipeline publishes them (Stream A, Stream B, the lease), so a UI follows or
 * resumes the turn in Redis. The call's parts are those of `make`; it ends once the
 * turn has ended in Redis. A cancel of the turn (`TurnPipeline.cancel`, the server's
 * cancel route) stops the provider request and fails the call with an `AiError`
 * (`UnknownError`, its metadata `{ sluice: { turnId, stopped: "cancelled" } }`); a
 * call that goes away (its fiber interrupted, its stream read no further) ends its
 * turn `aborted`. See docs/language-model.md#publishing-as-a-turn.
 *
 * @since 0.3.0
 * @category publishing
 */
export const makePublished = (
  options: Options & PublishOptions
): Effect.Effect<
  LanguageModel.LanguageModel,
  never,
  ProviderClient.ProviderClient | TurnPipeline.TurnPipeline
> =>
  Effect.gen(function*() {
    const client = yield* ProviderClient.ProviderClient
    const pipeline = yield* TurnPipeline.TurnPipeline
    const events: Events = (request, normalize, method) =>
      Stream.unwrap(
        TurnOptions.useSync((turn) => publishedEvents(client, pipeline, options, turn, request, normalize, method))
      )
    return yield* makeWith(events, client.baseUrl, options)
  })

/**
 * `makePublished` as a layer, on the `ProviderClient` (`ProviderClient.layer`, or
 * `replayClient` in a test) and the `TurnPipeline` (`TurnPipeline.layer()` on a
 * `RedisStreams` layer) in context.
 *
 * @since 0.3.0
 * @category publishing
 */
export const layerPublished = (
  options: Options & PublishOptions
): Layer.Layer<LanguageModel.LanguageModel, never, ProviderClient.ProviderClient | TurnPipeline.TurnPipeline> =>
  Layer.effect(LanguageModel.LanguageModel, makePublished(options))

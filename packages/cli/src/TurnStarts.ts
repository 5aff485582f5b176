/**
 * The turns `sluice serve` starts for `POST /v1/turns`: the body checked as a
 * `TurnRequest`, sent with the provider's live client (its API key and base URL from
 * the environment, as `sluice run` reads them: `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`,
 * `GEMINI_API_KEY`, ...; the client made once per provider, on the `HttpClient` in
 * context), and run with `TurnPipeline.start` on the server's store, so both streams
 * are persisted while the response streams the turn. The turn is written to Redis
 * (its opening) before the provider is asked and before the answer's headers: a turn
 * that cannot be written is 503 `redis_unavailable`. A turn the pipeline refuses
 * (past its `maxTurns` or `maxLagMs`: `sluice serve --max-turns`, `--max-lag-ms`; or
 * while it shuts down) is 503 `at_capacity`, and while a turn would be, `/readyz` is
 * 503 too. The starter cancels the turns of its pipeline without Redis
 * (`TurnPipeline.cancelHere`) and ends them when the server shuts down
 * (`TurnPipeline.shutdown`).
 *
 * @since 0.3.0
 */
import { TurnAdmission, TurnPipeline, TurnRequest } from "@sluice/pipeline"
import { ProviderClient, type ProviderName, Providers } from "@sluice/providers"
import { ApiError, TurnStarter } from "@sluice/server"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"

/**
 * The answer to a turn that was not started: Redis lost (before the turn was written:
 * the provider was not asked) is 503 `redis_unavailable`.
 *
 * @since 0.3.0
 * @category errors
 */
export const codeOf = (error: { readonly _tag: string; readonly reason?: string }): ApiError.ApiErrorCode => {
  switch (error._tag) {
    case "ProviderUnavailable":
      return "provider_unavailable"
    case "AtCapacity":
      return "at_capacity"
    case "RedisError":
      return error.reason === "Unavailable" ? "redis_unavailable" : "internal"
    case "PublishError":
      return error.reason === "RetriesExhausted" ? "redis_unavailable" : "internal"
    case "LlmRequestError":
    case "InvalidTurnContext":
      return "invalid_request"
    default:
      return "internal"
  }
}

/**
 * The providers' live clients, each made once, when first asked for, on the
 * `HttpClient` in context: a provider without an API key is `ProviderUnavailable`
 * naming the variable to set.
 *
 * @since 0.3.0
 * @category constructors
 */
export const clients: Effect.Effect<
  (provider: ProviderName.ProviderName) => Effect.Effect<ProviderClient.Client, TurnRequest.ProviderUnavailable>,
  never,
  HttpClient.HttpClient
> = Effect.gen(function*() {
  const services = yield* Effect.context<HttpClient.HttpClient>()
  const made = new Map<ProviderName.ProviderName, ProviderClient.Client>()
  return (provider: ProviderName.ProviderName) =>
    Effect.suspend(() => {
      const known = made.get(provider)
      if (known !== undefined) return Effect.succeed(known)
      return ProviderClient.config(provider).pipe(
        Effect.mapError(() =>
          new TurnRequest.ProviderUnavailable({
            provider,
            detail: `no API key: set ${Providers.apiKeyVariable(provider)} where the server runs`
          })
        ),
        Effect.flatMap(ProviderClient.make),
        Effect.provideContext(services),
        Effect.tap((client) => Effect.sync(() => made.set(provider, client)))
      )
    })
})

/**
 * The starter, on the `TurnPipeline` and the `HttpClient` in context.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make: Effect.Effect<
  TurnStarter.TurnStarterService,
  never,
  TurnPipeline.TurnPipeline | HttpClient.HttpClient
> = Effect.gen(function*() {
  const pipeline = yield* TurnPipeline.TurnPipeline
  const clientFor = yield* clients
  return TurnStarter.TurnStarter.of({
    start: (body) =>
      Effect.gen(function*() {
        const request = yield* Effect.mapError(
          Effect.fromResult(TurnRequest.decode(body)),
          (error) => new ApiError.ApiError({ code: "invalid_request", message: error.message })
        )
        const running = yield* TurnRequest.start(request, clientFor).pipe(
          Effect.provideService(TurnPipeline.TurnPipeline, pipeline),
          Effect.mapError((error) => new ApiError.ApiError({ code: codeOf(error), message: error.message }))
        )
        return { turnId: running.context.turnId, events: running.events }
      }),
    cancel: pipeline.cancelHere,
    shutdown: pipeline.shutdown,
    // the pipeline's limit met now, in words: `/readyz` answers 503 while there is one
    atCapacity: Effect.map(
      pipeline.load,
      (load) => load.full === undefined ? undefined : TurnAdmission.describe(load.full)
    )
  })
})

/**
 * The turns `sluice serve` starts for `POST /v1/turns`: the body checked as a
 * `TurnRequest`, sent with the provider's live client (its API key and base URL from
 * the environment, as `sluice run` reads them: `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`,
 * `GEMINI_API_KEY`, ...; the client made once per provider, on the `HttpClient` in
 * context), and run with `TurnPipeline.start` on the server's store, so both streams
 * are persisted while the response streams the turn. A turn the pipeline refuses
 * (past its `maxTurns` or `maxLagMs`: `sluice serve --max-turns`, `--max-lag-ms`) is
 * 503 `at_capacity`, and while a turn would be, `/readyz` is 503 too.
 *
 * @since 0.3.0
 */
import { TurnAdmission, TurnPipeline, TurnRequest } from "@sluice/pipeline"
import { ProviderClient, type ProviderName, ProviderRequest } from "@sluice/providers"
import { ApiError, TurnStarter } from "@sluice/server"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"

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
  const services = yield* Effect.context<HttpClient.HttpClient>()
  const clients = new Map<ProviderName.ProviderName, ProviderClient.Client>()
  const clientFor = (provider: ProviderName.ProviderName) =>
    Effect.suspend(() => {
      const known = clients.get(provider)
      if (known !== undefined) return Effect.succeed(known)
      return ProviderClient.config(provider).pipe(
        Effect.mapError(() =>
          new TurnRequest.ProviderUnavailable({
            provider,
            detail: `no API key: set ${ProviderRequest.apiKeyVariable(provider)} where the server runs`
          })
        ),
        Effect.flatMap(ProviderClient.make),
        Effect.provideContext(services),
        Effect.tap((client) => Effect.sync(() => clients.set(provider, client)))
      )
    })
  return TurnStarter.TurnStarter.of({
    start: (body) =>
      Effect.gen(function*() {
        const request = yield* Effect.mapError(
          Effect.fromResult(TurnRequest.decode(body)),
          (error) => new ApiError.ApiError({ code: "invalid_request", message: error.message })
        )
        const running = yield* TurnRequest.start(request, clientFor).pipe(
          Effect.provideService(TurnPipeline.TurnPipeline, pipeline),
          Effect.mapError((error) =>
            new ApiError.ApiError({
              code: error._tag === "ProviderUnavailable"
                ? "provider_unavailable"
                : error._tag === "AtCapacity"
                ? "at_capacity"
                : "invalid_request",
              message: error.message
            })
          )
        )
        return { turnId: running.context.turnId, events: running.events }
      }),
    // the pipeline's limit met now, in words: `/readyz` answers 503 while there is one
    atCapacity: Effect.map(
      pipeline.load,
      (load) => load.full === undefined ? undefined : TurnAdmission.describe(load.full)
    )
  })
})

/**
 * `request-filtering-agent` plugged into the same Effect HTTP client as the webhook
 * client (`NodeHttpClient` over node:http agents), through the `HttpAgent` service:
 * what the comparison of the two guards runs (the test beside it and
 * `pnpm bench handwritten`).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import {
  type RequestFilteringAgentOptions,
  RequestFilteringHttpAgent,
  RequestFilteringHttpsAgent
} from "request-filtering-agent"

/**
 * Effect's node:http client whose agents are request-filtering-agent's.
 *
 * @since 0.3.0
 */
export const filteringClient = (options: RequestFilteringAgentOptions = {}): Layer.Layer<HttpClient.HttpClient> =>
  NodeHttpClient.layerNodeHttpNoAgent.pipe(
    Layer.provide(Layer.effect(
      NodeHttpClient.HttpAgent,
      Effect.acquireRelease(
        Effect.sync(() => ({
          http: new RequestFilteringHttpAgent(options),
          https: new RequestFilteringHttpsAgent(options)
        })),
        (agents) =>
          Effect.sync(() => {
            agents.http.destroy()
            agents.https.destroy()
          })
      )
    ))
  )

/**
 * The HTTP client to call providers with, as `sluice run` and `sluice serve` do: Node's
 * `http` and `https` modules (`NodeHttpClient`), connections kept alive between turns.
 * Against Node's `fetch` (`FetchHttpClient`: undici, a Node stream and a web stream
 * between the socket and the reader) on the same live load, it costs less Node CPU per
 * streamed chunk and holds a turn's chunks with less delay (BENCHMARKS.md, "One engine
 * per process, fourth round"). `NodeHttpClient.layerUndici`, measured beside both on
 * Node 24 (BENCHMARKS.md, "Node 24"), holds chunks about as well as this client and
 * better than `fetch`, at a few µs more Node CPU a chunk than this one: this one stays.
 *
 * @since 0.3.0
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Layer from "effect/Layer"

/**
 * The `HttpClient` for `ProviderClient.make` / `ProviderClient.layer`: Node's `http`
 * module with a keep-alive agent.
 *
 * @example
 * ```ts
 * import { ProviderClient, ProviderHttp } from "@sluice/providers"
 * import * as Effect from "effect/Effect"
 * import * as Redacted from "effect/Redacted"
 *
 * const client = ProviderClient.make({ provider: "openai-chat", apiKeys: [Redacted.make("sk-...")] }).pipe(
 *   Effect.provide(ProviderHttp.layer)
 * )
 * ```
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = NodeHttpClient.layerNodeHttpNoAgent.pipe(
  Layer.provide(NodeHttpClient.layerAgentOptions({ keepAlive: true }))
)

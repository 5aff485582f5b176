/**
 * The HTTP client the `sluice` commands call providers with: Node's `http` and `https`
 * modules (`NodeHttpClient`), connections kept alive between turns. Measured against
 * Node's `fetch` (`FetchHttpClient`, undici and web streams) on the same live load
 * (BENCHMARKS.md, "One engine per process, second round"), it costs a quarter less
 * Node CPU per streamed chunk. (`NodeHttpClient.layerUndici` is not used: its undici
 * needs Node 22.)
 *
 * @internal
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Layer from "effect/Layer"

/** @internal */
export const layer = NodeHttpClient.layerNodeHttpNoAgent.pipe(
  Layer.provide(NodeHttpClient.layerAgentOptions({ keepAlive: true }))
)

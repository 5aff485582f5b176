/**
 * The HTTP client the `sluice` commands call providers with: Node's `http` and `https`
 * modules (`NodeHttpClient`), connections kept alive between turns. Against Node's
 * `fetch` (`FetchHttpClient`: undici, a Node stream and a web stream between the socket
 * and the reader) on the same live load, it costs less Node CPU per streamed chunk and
 * holds a turn's chunks with less delay (BENCHMARKS.md, "One engine per process, fourth
 * round"). `NodeHttpClient.layerUndici`, measured beside both on Node 24 (BENCHMARKS.md,
 * "Node 24"), holds chunks about as well as this client and better than `fetch`, at a few
 * µs more Node CPU a chunk than this one: this one stays.
 *
 * @internal
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Layer from "effect/Layer"

/** @internal */
export const layer = NodeHttpClient.layerNodeHttpNoAgent.pipe(
  Layer.provide(NodeHttpClient.layerAgentOptions({ keepAlive: true }))
)

/**
 * The official Durable Streams conformance suite (`@durable-streams/server-conformance-tests`,
 * pinned) against the protocol's own routes (`DurableStreams.routes`, every caller
 * allowed to write) on Node's HTTP server on loopback, over redis-server (the global
 * setup's, or REDIS_URL): client streams in `DurableStoreLive` and subscriptions in
 * `DurableSubscriptions` (the optional subscription tests on). The turn server serves
 * these same routes beside its own (docs/http.md).
 */
import { runConformanceTests } from "@durable-streams/server-conformance-tests"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { DurableStoreLive, DurableStreams, DurableSubscriptions } from "@sluice/durable-streams"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Scope from "effect/Scope"
import { createServer } from "node:http"
import { afterAll, beforeAll, describe, inject } from "vitest"

const prefix = `sluice-durable-conformance-${process.pid}`
const longPollMs = 2_000
const config = { baseUrl: "", longPollTimeoutMs: longPollMs, subscriptions: true }
let scope: Scope.Closeable | undefined

// the routes on the server in context, their URLs in answers starting with its address
const served = Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  if (!NetAddress.isInetAddress(server.address)) return yield* Effect.die(new Error("expected a TCP address"))
  const baseUrl = `http://127.0.0.1:${server.address.port}`
  const closing = yield* Deferred.make<void>()
  yield* Effect.addFinalizer(() => Deferred.succeed(closing, undefined))
  const context = yield* DurableStreams.make({
    longPollMs,
    closing: Deferred.await(closing),
    baseUrl,
    webhooks: { loopbackHttp: true, allowHosts: [] }
  })
  const app = yield* HttpRouter.toHttpEffect(
    HttpRouter.addAll(DurableStreams.routes(context, Effect.succeed({ mayWrite: true })))
  )
  yield* server.serve(app)
  return baseUrl
})

describe("Durable Streams conformance on redis-server", () => {
  beforeAll(async () => {
    const url = inject("redisUrl")
    scope = await Effect.runPromise(Scope.make())
    const stores = Layer.mergeAll(
      DurableStoreLive.layer({ url, prefix }),
      DurableSubscriptions.layer({ url, prefix }),
      NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })
    )
    const program = Effect.flatMap(Layer.build(stores), (services) => Effect.provideContext(served, services))
    config.baseUrl = await Effect.runPromise(Scope.provide(program, scope))
  })

  afterAll(async () => {
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  runConformanceTests(config)
})

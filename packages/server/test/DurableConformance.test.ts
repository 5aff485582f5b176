/**
 * The official Durable Streams conformance suite (`@durable-streams/server-conformance-tests`,
 * pinned) against the turn server on redis-server (the global setup's, or REDIS_URL):
 * client streams in `DurableStoreLive` and subscriptions in `DurableSubscriptions` (the
 * optional subscription tests on), served on loopback without tokens, its INFO log
 * lines (an access log line per request) left out of the test output.
 */
import { runConformanceTests } from "@durable-streams/server-conformance-tests"
import { DurableStoreLive, DurableSubscriptions } from "@sluice/durable-streams"
import { RedisStreamsLive } from "@sluice/redis"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Scope from "effect/Scope"
import { afterAll, beforeAll, describe, inject } from "vitest"
import * as TurnServer from "../src/TurnServer.js"
import { quietLogs } from "./support/quietLogs.js"

const prefix = `sluice-durable-conformance-${process.pid}`
const longPollMs = 2_000
const config = { baseUrl: "", longPollTimeoutMs: longPollMs, subscriptions: true }
let scope: Scope.Closeable | undefined

describe("Durable Streams conformance on redis-server", () => {
  beforeAll(async () => {
    const url = inject("redisUrl")
    scope = await Effect.runPromise(Scope.make())
    const stores = Layer.mergeAll(
      RedisStreamsLive.layerFrom({ url }),
      DurableStoreLive.layer({ url, prefix }),
      DurableSubscriptions.layer({ url, prefix })
    )
    const server = TurnServer.layer({ port: 0, insecureLocal: true, prefix, durableLongPollMs: longPollMs }).pipe(
      Layer.provide(stores)
    )
    const context = await Effect.runPromise(Scope.provide(quietLogs(Layer.build(server)), scope))
    const address = await Effect.runPromise(Effect.provide(TurnServer.address, context))
    if (!NetAddress.isInetAddress(address)) throw new Error("expected a TCP address")
    config.baseUrl = `http://127.0.0.1:${address.port}`
  })

  afterAll(async () => {
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  runConformanceTests(config)
})

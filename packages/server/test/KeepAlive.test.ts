/**
 * The server's connection timeouts (docs/http.md#limits): a kept-alive connection idles
 * `keepAliveTimeoutMs` (65 s, above a proxy's usual 60 s, where Node's default was 5 s
 * and clients reusing a connection after a pause met "other side closed"), headers
 * arrive within `headersTimeoutMs` (66 s), a whole request within `requestTimeoutMs`
 * (120 s, where Node's 300 s held a body sent a byte at a time), looked for every
 * second; read back from the Node server and from its answers' `Keep-Alive` header.
 * Closing the server waits for no keep-alive.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreamsMemory } from "@sluice/redis"
import { serve } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Scope from "effect/Scope"
import { connect } from "node:net"
import * as TurnServer from "../src/TurnServer.js"
import * as TurnServerOptions from "../src/TurnServerOptions.js"

const resolved = (options: TurnServerOptions.Options) => TurnServerOptions.resolve({ tokens: ["t"], ...options })

describe("the Node server's timeouts", () => {
  it.effect(
    "65 s keep-alive, 66 s headers and 120 s request by default; as configured otherwise",
    () =>
      Effect.gen(function*() {
        const timeouts = (server: ReturnType<typeof TurnServer.nodeServer>) => [
          server.keepAliveTimeout,
          server.headersTimeout,
          server.requestTimeout
        ]
        expect(timeouts(TurnServer.nodeServer(yield* resolved({})))).toEqual([65_000, 66_000, 120_000])
        const configured = TurnServer.nodeServer(
          yield* resolved({ keepAliveTimeoutMs: 120_000, headersTimeoutMs: 121_000, requestTimeoutMs: 300_000 })
        )
        expect(timeouts(configured)).toEqual([120_000, 121_000, 300_000])
      }),
    10_000
  )

  it.effect("the running server tells its keep-alive in Keep-Alive", () =>
    Effect.gen(function*() {
      const keepAlive = (base: string) =>
        Effect.promise(async () => {
          const response = await fetch(`${base}/healthz`)
          await response.arrayBuffer()
          return response.headers.get("keep-alive")
        })
      expect(yield* keepAlive(yield* serve())).toBe("timeout=65")
      expect(yield* keepAlive(yield* serve({ keepAliveTimeoutMs: 90_000, headersTimeoutMs: 91_000 }))).toBe(
        "timeout=90"
      )
      const context = yield* Layer.build(
        TurnServer.layer({
          port: 0,
          host: "127.0.0.1",
          tokens: ["t"],
          metricsPort: 0,
          keepAliveTimeoutMs: 70_000,
          headersTimeoutMs: 71_000
        })
      )
      const api = yield* Effect.provide(TurnServer.address, context)
      expect(NetAddress.isInetAddress(api)).toBe(true)
      if (NetAddress.isInetAddress(api)) expect(yield* keepAlive(`http://127.0.0.1:${api.port}`)).toBe("timeout=70")
    }).pipe(Effect.scoped, Effect.provide(RedisStreamsMemory.layer)))
})

describe("closing", () => {
  it.effect(
    "closes the kept-alive connections and those that never sent a request, without waiting out their timeouts",
    () =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const base = yield* Scope.provide(serve(), scope)
        const port = Number(new URL(base).port)
        // a connection kept alive after its request, and one that never sends a request
        const { closed } = yield* Effect.promise(async () => {
          const response = await fetch(`${base}/healthz`)
          await response.arrayBuffer()
          const silent = connect(port, "127.0.0.1")
          await new Promise<void>((resolve) => silent.once("connect", () => resolve()))
          return { closed: new Promise<boolean>((resolve) => silent.once("close", () => resolve(true))) }
        })
        yield* Scope.close(scope, Exit.void)
        // closing returned (it waits for the connections): the silent one was closed too
        expect(yield* Effect.promise(() => closed)).toBe(true)
      }).pipe(Effect.provide(RedisStreamsMemory.layer)),
    // without the fix, closing waits for the 66 s headers timeout of the silent connection
    30_000
  )
})

/**
 * The Durable Streams store's limits of `sluice serve` and `sluice demo` from their
 * flags and variables (docs/http.md#limits): `--max-fork-depth` and `--max-json-depth`
 * bound what a client's requests may do; `--max-subscriptions` and
 * `--wait-connections` reach the store's options; a flag not given keeps the store's
 * default; bad values are bad usage, each in one line.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ServerLimits from "../src/internal/serverLimits.js"
import { serving as servingWith } from "./support/serving.js"
import { badUsageOfServeAndDemo } from "./support/sluice.js"

// Serves in process on loopback, without tokens (the in-memory store), for the length
// of the scope.
const serving = (env: Record<string, string>, ...args: ReadonlyArray<string>) =>
  servingWith(env, "--insecure-local", ...args)

// The answers of a server with forks at most 1 level deep and JSON at most 2 levels
// deep: a fork of a stream, a fork of that fork; a write of JSON 2 levels deep (the
// array that carries the values is one), one 3 levels deep.
const probe = (base: string) =>
  Effect.promise(async () => {
    const text = { "content-type": "text/plain" }
    const json = { "content-type": "application/json" }
    const status = async (path: string, init: RequestInit) => {
      const response = await fetch(`${base}/v1/stream/${path}`, init)
      await response.arrayBuffer()
      return response.status
    }
    return {
      forks: [
        await status("source", { method: "PUT", headers: text, body: "a" }),
        await status("fork-1", { method: "PUT", headers: { ...text, "stream-forked-from": "/v1/stream/source" } }),
        await status("fork-2", { method: "PUT", headers: { ...text, "stream-forked-from": "/v1/stream/fork-1" } })
      ],
      json: [
        await status("values", { method: "PUT", headers: json }),
        await status("values", { method: "POST", headers: json, body: "[[1]]" }),
        await status("values", { method: "POST", headers: json, body: "[[[1]]]" })
      ]
    }
  })

const bounded = { forks: [201, 201, 400], json: [201, 204, 400] }

const args = (overrides: Partial<ServerLimits.Args>): ServerLimits.Args => ({
  maxStreamsPerToken: 16,
  maxSubscriptionsPerToken: 100,
  maxBodyBytes: 1024,
  maxSubscriptionBodyBytes: 1024,
  keepAliveTimeoutMs: 65_000,
  headersTimeoutMs: 66_000,
  requestTimeoutMs: 120_000,
  writeTimeoutMs: 60_000,
  awaitTurnMs: 0,
  publicUrl: Option.none(),
  maxSubscriptions: Option.none(),
  waitConnections: Option.none(),
  maxForkDepth: Option.none(),
  maxJsonDepth: Option.none(),
  ...overrides
})

describe("sluice serve: the Durable Streams store's limits", () => {
  it.live("from the flags", () =>
    Effect.gen(function*() {
      const base = yield* serving({}, "--max-fork-depth", "1", "--max-json-depth", "2")
      expect(yield* probe(base)).toStrictEqual(bounded)
    }).pipe(Effect.scoped), 60_000)

  it.live("from the environment", () =>
    Effect.gen(function*() {
      const base = yield* serving({ SLUICE_MAX_FORK_DEPTH: "1", SLUICE_MAX_JSON_DEPTH: "2" })
      expect(yield* probe(base)).toStrictEqual(bounded)
    }).pipe(Effect.scoped), 60_000)

  it.live("the defaults: a fork of a fork, JSON 3 levels deep", () =>
    Effect.gen(function*() {
      const base = yield* serving({})
      expect(yield* probe(base)).toStrictEqual({ forks: [201, 201, 201], json: [201, 204, 204] })
    }).pipe(Effect.scoped), 60_000)

  it.effect(
    "the store's options of the flags: those given, the others left to the store",
    () =>
      Effect.gen(function*() {
        expect(yield* ServerLimits.durableLimits(args({}))).toStrictEqual({
          maxSubscriptions: undefined,
          waitConnections: undefined,
          maxForkDepth: undefined
        })
        expect(
          yield* ServerLimits.durableLimits(
            args({ maxSubscriptions: Option.some(5), waitConnections: Option.some(2), maxForkDepth: Option.some(3) })
          )
        ).toStrictEqual({ maxSubscriptions: 5, waitConnections: 2, maxForkDepth: 3 })
        const options = yield* ServerLimits.serverOptions(args({ maxJsonDepth: Option.some(7) }))
        expect(options.maxJsonDepth).toBe(7)
        expect("maxJsonDepth" in (yield* ServerLimits.serverOptions(args({})))).toBe(false)
      }),
    10_000
  )

  it.effect("bad values are bad usage, each named in one line", () =>
    badUsageOfServeAndDemo([
      [["--max-subscriptions", "0"], "sluice: --max-subscriptions must be a positive integer, got 0"],
      [["--wait-connections", "-1"], "sluice: --wait-connections must be a positive integer, got -1"],
      [["--max-fork-depth", "0"], "sluice: --max-fork-depth must be a positive integer, got 0"],
      [["--max-json-depth", "0"], "sluice: --max-json-depth must be a positive integer, got 0"]
    ]), 60_000)
})

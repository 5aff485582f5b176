/**
 * `POST /v1/turns` on `sluice serve`: the server starts the turn with the
 * provider's live client (here a loopback stand-in of Anthropic's Messages API that
 * answers with a recorded stream), answers with the UI message stream while the turn
 * is persisted, and the turn can be read back from its streams. A request for a
 * provider without an API key is 503 `provider_unavailable`; a body that is not a turn
 * request is 400 `invalid_request`, naming the field. Past `--max-turns` turns running
 * at once, one more is 503 `at_capacity` with `Retry-After`, and the provider is not
 * asked, and `/readyz` is 503 while the place is taken; a turn that ends gives its
 * place back. (`--max-lag-ms` is held by the
 * pipeline's own tests, on a clock whose timers the test fires.)
 */
import { describe, expect, it } from "@effect/vitest"
import * as Loopback from "@sluice/testing/providers"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { serving } from "./support/serving.js"
import { sluice } from "./support/sluice.js"

const recorded = readFileSync(join(__dirname, "..", "samples", "anthropic-weather.sse"), "utf8")

const start = (base: string, body: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${base}/v1/turns`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return { status: response.status, turnId: response.headers.get("x-sluice-turn-id"), text: await response.text() }
  })

const request = {
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  messages: [{ _tag: "user", text: "What's the weather in Lisbon?" }]
}

describe("POST /v1/turns on sluice serve", () => {
  it.effect(
    "starts the turn with the provider's client and streams it while it is persisted",
    () =>
      Effect.gen(function*() {
        // the provider: the recorded stream, one event per write
        const provider = yield* Loopback.serve([{ _tag: "sse", body: recorded }])
        const base = yield* serving(
          { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: provider.url },
          "--insecure-local"
        )
        const started = yield* start(base, request)
        expect(started.status).toBe(200)
        expect(started.turnId).toMatch(/^[0-9a-f-]{36}$/)
        expect(started.text).toContain("\"type\":\"text-delta\"")
        expect(started.text.trimEnd().endsWith("data: [DONE]")).toBe(true)
        // Stream A as the SSE route gives it back, to its last entry
        const events = yield* Effect.promise(async () =>
          (await fetch(`${base}/v1/turns/${started.turnId}/events`)).text()
        )
        expect(events).toContain("event: response_start")
        expect(events).toContain("event: response_done")
      }).pipe(Effect.scoped),
    60_000
  )

  it.effect(
    "answers 503 for a provider without an API key, 400 for a body that is not a turn request",
    () =>
      Effect.gen(function*() {
        const base = yield* serving({}, "--insecure-local")
        const missing = yield* start(base, request)
        expect(missing.status).toBe(503)
        expect(missing.text).toContain("provider_unavailable")
        expect(missing.text).toContain("ANTHROPIC_API_KEY")
        const badProvider = yield* start(base, { ...request, provider: "nope" })
        expect(badProvider.status).toBe(400)
        expect(badProvider.text).toContain("provider: expected one of")
        const badTemperature = yield* start(base, { ...request, temperature: 7 })
        expect(badTemperature.status).toBe(400)
        expect(badTemperature.text).toContain("temperature")
      }).pipe(Effect.scoped),
    60_000
  )

  it.effect(
    "answers 503 at_capacity past --max-turns, without asking the provider, and takes turns again once one ended",
    () =>
      Effect.gen(function*() {
        // the first turn's provider sends three events and then waits; the next answers in full
        const provider = yield* Loopback.serve([
          { _tag: "hang", body: recorded, events: 3 },
          { _tag: "sse", body: recorded }
        ])
        const base = yield* serving(
          { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: provider.url, SLUICE_MAX_TURNS: "1" },
          "--insecure-local"
        )
        const first = yield* Effect.promise(() =>
          fetch(`${base}/v1/turns`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(request)
          })
        )
        expect(first.status).toBe(200)
        const firstId = first.headers.get("x-sluice-turn-id")
        yield* provider.hungWritten

        const refused = yield* Effect.promise(async () => {
          const response = await fetch(`${base}/v1/turns`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(request)
          })
          return {
            status: response.status,
            retryAfter: response.headers.get("retry-after"),
            turnId: response.headers.get("x-sluice-turn-id"),
            body: await response.json()
          }
        })
        expect(refused).toMatchObject({
          status: 503,
          retryAfter: "1",
          turnId: null,
          body: { error: { code: "at_capacity" } }
        })
        expect(JSON.stringify(refused.body)).toContain("maxTurns")
        expect(provider.requests().length).toBe(1)
        // and the load balancer is told: not ready while the one place is taken
        const readyz = Effect.promise(async () => {
          const response = await fetch(`${base}/readyz`)
          return { status: response.status, body: await response.json() }
        })
        expect(yield* readyz).toStrictEqual({
          status: 503,
          body: {
            status: "unavailable",
            reason: "at capacity: this process already runs 1 turns, its limit (maxTurns 1)"
          }
        })

        // the first turn cancelled: its stream ends, and its place is free again
        const cancelled = yield* Effect.promise(() => fetch(`${base}/v1/turns/${firstId}/cancel`, { method: "POST" }))
        expect(cancelled.status).toBe(202)
        const firstText = yield* Effect.promise(() => first.text())
        expect(firstText.trimEnd().endsWith("data: [DONE]")).toBe(true)
        expect(yield* readyz).toStrictEqual({ status: 200, body: { status: "ready" } })
        const again = yield* start(base, request)
        expect(again.status).toBe(200)
        expect(again.text).toContain("\"type\":\"text-delta\"")
        expect(provider.requests().length).toBe(2)
      }).pipe(Effect.scoped),
    60_000
  )

  it.effect("a --max-turns or --max-lag-ms that is not a positive integer is bad usage", () =>
    Effect.gen(function*() {
      for (const [flag, value] of [["--max-turns", "0"], ["--max-lag-ms", "-5"]] as const) {
        const result = yield* sluice({}, ["serve", "--port", "0", "--insecure-local", flag, value])
        expect([result.code, result.stderr.trimEnd().split("\n")]).toStrictEqual([
          2,
          [`sluice: ${flag} must be a positive integer, got ${value}`]
        ])
      }
    }), 60_000)
})

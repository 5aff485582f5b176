/**
 * `POST /v1/turns` on `sluice serve` (issue 30): the server starts the turn with the
 * provider's live client (here a loopback stand-in of Anthropic's Messages API that
 * answers with a recorded stream), answers with the UI message stream while the turn
 * is persisted, and the turn can be read back from its streams. A request for a
 * provider without an API key is 503 `provider_unavailable`; a body that is not a turn
 * request is 400 `invalid_request`, naming the field.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import * as Loopback from "../../providers/test/support/loopback.js"
import { serving } from "./support/serving.js"

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
})

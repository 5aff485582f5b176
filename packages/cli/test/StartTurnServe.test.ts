/**
 * `POST /v1/turns` on `sluice serve` (issue 30): the server starts the turn with the
 * provider's live client (here a loopback stand-in of Anthropic's Messages API that
 * answers with a recorded stream), answers with the UI message stream while the turn
 * is persisted, and the turn can be read back from its streams. A request for a
 * provider without an API key is 503 `provider_unavailable`; a body that is not a turn
 * request is 400 `invalid_request`, naming the field.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { Cli } from "../src/index.js"
import { lines, takeUntil } from "./support/lines.js"

const recorded = readFileSync(join(__dirname, "..", "samples", "anthropic-weather.sse"))

// A provider stand-in on a free loopback port for the length of the scope: every POST
// gets the recorded stream.
const standIn = Effect.acquireRelease(
  Effect.promise(() =>
    new Promise<{ readonly url: string; readonly close: () => void }>((resolve) => {
      const server = createServer((request, response) => {
        request.resume()
        request.on("end", () => {
          response.writeHead(200, { "content-type": "text/event-stream" })
          response.end(recorded)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resolve({ url: `http://127.0.0.1:${port}`, close: () => server.close() })
      })
    })
  ),
  (server) => Effect.sync(() => server.close())
)

// Serves in process for the length of the scope; the base address of the API.
const serving = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const output = yield* lines
    yield* Effect.forkScoped(
      Cli.run(["node", "sluice", "serve", "--port", "0", "--insecure-local"]).pipe(
        Effect.provide(Layer.merge(NodeServices.layer, output.layer)),
        Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
      )
    )
    const link = new URL(
      (yield* takeUntil(output.queue, (line) => line.startsWith("the turn viewer: "))).slice("the turn viewer: ".length)
    )
    return `${link.protocol}//${link.host}`
  })

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
        const provider = yield* standIn
        const base = yield* serving({ ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: provider.url })
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
        const base = yield* serving({})
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

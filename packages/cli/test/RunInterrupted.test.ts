/**
 * Ctrl-C on `sluice run` mid-answer: the answer printed so far ends its line, so the
 * shell's prompt (or the next line) does not start in the middle of it.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import { StreamEvent } from "@sluice/core"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Cli, Output } from "../src/index.js"
import { makeRenderer } from "../src/internal/run.js"

// An OpenAI Chat provider that streams one delta, "Hel", and then nothing more.
const stallingProvider = Effect.acquireRelease(
  Effect.callback<{ readonly url: string; readonly close: () => void }>((resume) => {
    const open = new Set<ServerResponse>()
    const server = createServer((request, response) => {
      request.resume()
      open.add(response)
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.write(
        `data: ${
          JSON.stringify({
            id: "c1",
            object: "chat.completion.chunk",
            created: 1,
            model: "m",
            choices: [{ index: 0, delta: { role: "assistant", content: "Hel" }, finish_reason: null }]
          })
        }\n\n`
      )
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(Effect.succeed({
        url: `http://127.0.0.1:${port}/v1`,
        close: () => {
          for (const response of open) response.destroy()
          server.close()
        }
      }))
    })
  }),
  (provider) => Effect.sync(provider.close)
)

describe("sluice run interrupted", () => {
  it("the renderer ends a line left open, and adds nothing at a line's start", () => {
    const render = makeRenderer(false)
    expect(render.lineEnd()).toBe("")
    const context = { runId: "5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69" }
    const at = (payload: StreamEvent.Payload) =>
      render(StreamEvent.envelope(context, payload, "0c8d3f6e-2b1a-4d5c-8e7f-9a0b1c2d3e4f", 1))
    at({ type: "item_start", item_id: "m", item_type: "message" })
    expect(at({ type: "item_delta", item_id: "m", delta_content: "Hel" })).toBe("Hel")
    expect(render.lineEnd()).toBe("\n")
    expect(render.lineEnd()).toBe("")
  }, 30_000)

  it.live("interrupted mid-answer (Ctrl-C), the answer's line is ended", () =>
    Effect.gen(function*() {
      const provider = yield* stallingProvider
      const output = Output.memory()
      const fiber = yield* Cli.run(["node", "sluice", "run", "--provider", "openai-chat", "--model", "m", "Hi"]).pipe(
        Effect.provide(Layer.merge(NodeServices.layer, output.layer)),
        Effect.provideService(
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromEnv({ env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: provider.url } })
        ),
        Effect.forkChild
      )
      // wait (by polling the output, not by time) until the delta is printed
      yield* Effect.suspend(() => output.stdout().includes("Hel") ? Effect.void : Effect.fail("not yet")).pipe(
        Effect.retry(Schedule.spaced("20 millis"))
      )
      expect(output.stdout()).toBe("Hel")
      yield* Fiber.interrupt(fiber)
      expect(output.stdout()).toBe("Hel\n")
    }).pipe(Effect.scoped), 60_000)
})

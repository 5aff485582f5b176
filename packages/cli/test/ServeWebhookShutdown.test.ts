/**
 * SIGTERM to a real `sluice serve` process while a webhook subscription's receiver
 * never answers (a post in flight, its retries pending): the process still drains and
 * exits 143 at once, closing its connection to the receiver, whatever the webhook
 * engine has in flight.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"

const root = join(import.meta.dirname, "..", "..", "..")
const bin = join(import.meta.dirname, "..", "src", "bin.ts")

/** A webhook receiver on loopback that reads each post and never answers it. */
const silentReceiver = Effect.acquireRelease(
  Effect.promise(async () => {
    const state = { posts: 0, open: 0, closed: 0 }
    const server: Server = createServer((request) => {
      state.open++
      request.resume()
      request.on("end", () => void state.posts++)
      request.socket.on("close", () => void state.closed++)
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    return { server, port, state }
  }),
  ({ server }) =>
    Effect.promise(() => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    })
)

interface Exited {
  readonly code: number | null
  readonly stderr: string
}

/**
 * Serves on the embedded store, subscribes the receiver to `events/*`, appends to a
 * stream so that a wake is posted, and sends SIGTERM once the receiver holds the post.
 */
const serveThenTerminate = (port: number, posted: () => boolean) =>
  Effect.callback<Exited>((resume) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        bin,
        "serve",
        "--insecure-local",
        "--port",
        "0",
        "--webhook-allow-hosts",
        `127.0.0.1:${port}`
      ],
      { cwd: root, env: { ...process.env, REDIS_URL: undefined, SLUICE_REDIS_URL: undefined } }
    )
    let stdout = ""
    let stderr = ""
    let started = false
    const drive = async (base: string) => {
      const subscription = await fetch(`${base}/v1/stream/__ds/subscriptions/s1`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ type: "webhook", pattern: "events/*", webhook: { url: `http://127.0.0.1:${port}/h` } })
      })
      if (subscription.status !== 201) throw new Error(`subscription: ${subscription.status}`)
      await fetch(`${base}/v1/stream/events/x`, { method: "PUT", headers: { "content-type": "text/plain" } })
      await fetch(`${base}/v1/stream/events/x`, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: "hello"
      })
      // wait for the engine's post to reach the receiver (no clock: the receiver counts)
      while (!posted()) await new Promise((resolve) => setImmediate(resolve))
      child.kill("SIGTERM")
    }
    child.stdout.on("data", (data: Buffer) => {
      stdout += data.toString()
      const base = /the turn viewer: (http:\/\/[0-9.]+:\d+)/.exec(stdout)?.[1]
      if (base !== undefined && !started) {
        started = true
        drive(base).catch((error: unknown) => {
          stderr += `\n(test) ${String(error)}`
          child.kill("SIGKILL")
        })
      }
    })
    child.stderr.on("data", (data: Buffer) => void (stderr += data.toString()))
    child.on("exit", (code) => resume(Effect.succeed({ code, stderr })))
    return Effect.sync(() => child.kill("SIGKILL"))
  })

describe("sluice serve with a webhook that never answers", () => {
  it.effect(
    "SIGTERM drains and exits 143 with the post in flight",
    () =>
      Effect.gen(function*() {
        const receiver = yield* silentReceiver
        const exited = yield* serveThenTerminate(receiver.port, () => receiver.state.posts > 0)
        expect(exited.code, exited.stderr).toBe(143)
        expect(receiver.state.posts).toBeGreaterThanOrEqual(1)
        // the server's connection to the receiver went with the process
        expect(receiver.state.closed).toBe(receiver.state.open)
      }),
    120_000
  )
})

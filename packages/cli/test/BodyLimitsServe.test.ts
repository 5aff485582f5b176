/**
 * The request limits of `sluice serve` from its flags and variables (docs/http.md#limits):
 * the body limits (`--max-body-bytes`, `--max-subscription-body-bytes`), the keep-alive,
 * headers and request timeouts, and `--public-url`; bad values are bad usage, each in
 * one line, for `serve` and `demo`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { connect } from "node:net"
import { serving as servingWith } from "./support/serving.js"
import { badUsageOfServeAndDemo } from "./support/sluice.js"

// Serves in process on loopback, without tokens, for the length of the scope.
const serving = (env: Record<string, string>, ...args: ReadonlyArray<string>) =>
  servingWith(env, "--insecure-local", ...args)

// The answers of a server with a 1 KiB body limit: a created stream's Location, the
// statuses of a 2 KiB and a 512-byte append, and /healthz's Keep-Alive.
const probe = (base: string) =>
  Effect.promise(async () => {
    const headers = { "content-type": "application/octet-stream" }
    const put = await fetch(`${base}/v1/stream/notes`, { method: "PUT", headers })
    const over = await fetch(`${base}/v1/stream/notes`, { method: "POST", headers, body: new Uint8Array(2048) })
    await over.arrayBuffer()
    const under = await fetch(`${base}/v1/stream/notes`, { method: "POST", headers, body: new Uint8Array(512) })
    const health = await fetch(`${base}/healthz`)
    await health.arrayBuffer()
    return {
      location: put.headers.get("location"),
      statuses: [put.status, over.status, under.status],
      keepAlive: health.headers.get("keep-alive")
    }
  })

describe("sluice serve: request limits and connections", () => {
  it.live("from the flags", () =>
    Effect.gen(function*() {
      const base = yield* serving(
        {},
        "--max-body-bytes",
        "1024",
        "--keep-alive-timeout-ms",
        "30000",
        "--headers-timeout-ms",
        "31000",
        "--public-url",
        "https://sluice.example.com/"
      )
      expect(yield* probe(base)).toEqual({
        location: "https://sluice.example.com/v1/stream/notes",
        statuses: [201, 413, 204],
        keepAlive: "timeout=30"
      })
    }).pipe(Effect.scoped), 60_000)

  it.live("from the environment", () =>
    Effect.gen(function*() {
      const base = yield* serving({
        SLUICE_MAX_BODY_BYTES: "1024",
        SLUICE_KEEP_ALIVE_TIMEOUT_MS: "40000",
        SLUICE_HEADERS_TIMEOUT_MS: "41000",
        SLUICE_PUBLIC_URL: "https://proxy.example.com/sluice"
      })
      expect(yield* probe(base)).toEqual({
        location: "https://proxy.example.com/sluice/v1/stream/notes",
        statuses: [201, 413, 204],
        keepAlive: "timeout=40"
      })
    }).pipe(Effect.scoped), 60_000)

  it.live("the defaults: 65 s keep-alive, Location on the address served", () =>
    Effect.gen(function*() {
      const base = yield* serving({})
      const { keepAlive, location } = yield* probe(base)
      expect([keepAlive, location]).toEqual(["timeout=65", `${base}/v1/stream/notes`])
    }).pipe(Effect.scoped), 60_000)

  it.live(
    "--request-timeout-ms: a body sent a byte at a time is cut at the bound (408, closed), not read on",
    () =>
      Effect.gen(function*() {
        const base = yield* serving(
          {},
          "--keep-alive-timeout-ms",
          "1000",
          "--headers-timeout-ms",
          "1500",
          "--request-timeout-ms",
          "2000"
        )
        const { hostname, port } = new URL(base)
        // a POST announcing 600 bytes, given one every 50 ms (30 s in all) until the server
        // closes the connection
        const { sent, answer } = yield* Effect.promise(() =>
          new Promise<{ readonly sent: number; readonly answer: string }>((resolve) => {
            const socket = connect(Number(port), hostname)
            let sent = 0
            let answer = ""
            let timer: ReturnType<typeof setInterval> | undefined
            socket.setEncoding("utf8")
            socket.on("data", (text: string) => void (answer += text))
            socket.on("error", () => {})
            socket.on("close", () => {
              clearInterval(timer)
              resolve({ sent, answer })
            })
            socket.on("connect", () => {
              socket.write(
                "POST /v1/stream/slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n" +
                  "Content-Length: 600\r\n\r\n"
              )
              timer = setInterval(() => {
                if (sent === 600) return clearInterval(timer)
                socket.write("x")
                sent++
              }, 50)
            })
          })
        )
        expect(answer).toMatch(/^HTTP\/1\.1 408 /)
        expect(sent).toBeLessThan(600)
      }).pipe(Effect.scoped),
    60_000
  )

  it.effect("bad values are bad usage, each named in one line", () =>
    badUsageOfServeAndDemo([
      [["--max-body-bytes", "0"], "sluice: --max-body-bytes must be a positive integer, got 0"],
      [
        ["--max-subscription-body-bytes", "-1"],
        "sluice: --max-subscription-body-bytes must be a positive integer, got -1"
      ],
      [
        ["--keep-alive-timeout-ms", "70000"],
        "sluice: --headers-timeout-ms (66000) must be above --keep-alive-timeout-ms (70000)"
      ],
      [
        ["--request-timeout-ms", "60000"],
        "sluice: --request-timeout-ms (60000) must be at least --headers-timeout-ms (66000)"
      ],
      [["--write-timeout-ms", "0"], "sluice: --write-timeout-ms must be a positive integer, got 0"],
      [
        ["--max-subscriptions-per-token", "-2"],
        "sluice: --max-subscriptions-per-token must be a positive integer, got -2"
      ],
      [
        ["--public-url", "ftp://sluice.example.com"],
        "sluice: invalid server options: InvalidOptions: publicUrl \"ftp://sluice.example.com\" is not an http(s) URL without credentials, query or fragment"
      ]
    ]), 60_000)
})

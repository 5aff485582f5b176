/**
 * The library's newer features as the command line offers them: a caller's trace
 * context on every event of a replayed turn, a bad one refused in one line; metrics and
 * probes on `--metrics-port` of a real `sluice serve` process; Durable Streams on the
 * embedded store; read-only tokens from `--read-tokens`.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import { RedisStreams, RedisStreamsLive } from "@sluice/redis"
import { TurnEntry, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { join } from "node:path"
import { inject } from "vitest"
// the type of inject("redisUrl"), which the redis package's global setup provides
import type {} from "@sluice/testing/redis/globalSetup"
import { serving } from "./support/serving.js"
import { sluice } from "./support/sluice.js"

const root = join(import.meta.dirname, "..", "..", "..")
const bin = join(import.meta.dirname, "..", "src", "bin.ts")
const sample = join(import.meta.dirname, "..", "samples", "anthropic-weather.sse")
const redisUrl = inject("redisUrl")
const prefix = `sluice-wiring-${randomUUID().slice(0, 8)}`
const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

const request = (url: string, init: RequestInit = {}) =>
  Effect.tryPromise(async () => {
    const response = await fetch(url, init)
    return { status: response.status, headers: response.headers, body: await response.text() }
  })

describe("--traceparent and --tracestate (run, replay)", () => {
  it.live("reach the trace_context of every Stream A event", () =>
    Effect.gen(function*() {
      for (
        const [args, env] of [
          [["--traceparent", traceparent, "--tracestate", "vendor=abc"], {}],
          [[], { SLUICE_TRACEPARENT: traceparent, SLUICE_TRACESTATE: "vendor=abc" }]
        ] as const
      ) {
        const turnId = randomUUID()
        const result = yield* sluice({ SLUICE_REDIS_URL: redisUrl, ...env }, [
          "replay",
          "--provider",
          "anthropic",
          "--jsonl",
          "--prefix",
          prefix,
          "--turn",
          turnId,
          ...args,
          sample
        ])
        expect(result.code).toBe(0)
        const redis = yield* RedisStreams.RedisStreams
        const entries = yield* redis.xrange(TurnKeys.eventsKey(prefix, turnId), "-", "+")
        expect(entries.length).toBeGreaterThan(2)
        for (const entry of entries) {
          const event = yield* TurnEntry.toStreamEvent(entry)
          expect(event.trace_context).toStrictEqual({ traceparent, tracestate: "vendor=abc" })
        }
      }
    }).pipe(Effect.provide(RedisStreamsLive.layer({ url: redisUrl }))))

  it.effect("a malformed one is bad usage: exit 2, one line naming it, before anything runs", () =>
    Effect.gen(function*() {
      for (
        const [env, args, message] of [
          [
            {},
            ["--traceparent", "00-abc"],
            `sluice: --traceparent "00-abc" is invalid: a traceparent is 00-<32 hex trace id>`
          ],
          [
            { SLUICE_TRACEPARENT: "00-00000000000000000000000000000000-00f067aa0ba902b7-01" },
            [],
            "sluice: --traceparent \"00-00000000000000000000000000000000-00f067aa0ba902b7-01\" is invalid: the traceparent's trace id is all zeros"
          ],
          [
            {},
            ["--traceparent", traceparent, "--tracestate", "caf\u00e9=1"],
            "sluice: --tracestate is invalid: a tracestate is printable ASCII"
          ]
        ] as const
      ) {
        for (
          const command of [
            ["replay", "--provider", "anthropic", ...args, sample],
            ["run", "--provider", "anthropic", "--model", "m", ...args, "hello"]
          ]
        ) {
          const result = yield* sluice({ ANTHROPIC_API_KEY: "k", ...env }, command)
          expect(result.code).toBe(2)
          expect(result.stdout).toBe("")
          expect(result.stderr.trimEnd().split("\n")).toStrictEqual([expect.stringContaining(message)])
        }
      }
    }).pipe(Effect.provide(NodeServices.layer)))
})

/** A `sluice serve` process for the length of the scope, and a wait for a line of its standard error. */
const serveProcess = (args: ReadonlyArray<string>) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, ["--conditions", "@sluice/source", "--import", "tsx", bin, "serve", ...args], {
          cwd: root,
          env: { ...process.env, REDIS_URL: undefined, SLUICE_REDIS_URL: undefined }
        })
      ),
      (child) => Effect.sync(() => void child.kill("SIGKILL"))
    ),
    (child) => {
      let stderr = ""
      child.stderr.on("data", (data: Buffer) => void (stderr += data.toString()))
      child.stdout.resume()
      // the first capture of `pattern` in standard error, once it is written
      const logged = (pattern: RegExp) =>
        Effect.callback<string, Error>((resume) => {
          const check = () => {
            const found = pattern.exec(stderr)?.[1]
            if (found !== undefined) resume(Effect.succeed(found))
            else if (child.exitCode !== null) {
              resume(Effect.fail(new Error(`sluice serve exited ${child.exitCode}: ${stderr}`)))
            } else return false
            child.stderr.off("data", check)
            child.off("exit", check)
            return true
          }
          if (check()) return
          child.stderr.on("data", check)
          child.on("exit", check)
          return Effect.sync(() => {
            child.stderr.off("data", check)
            child.off("exit", check)
          })
        })
      return { logged }
    }
  )

describe("sluice serve --metrics-port", () => {
  it.live("answers /healthz and /metrics on that port without a token", () =>
    Effect.gen(function*() {
      const server = yield* serveProcess(["--insecure-local", "--port", "0", "--metrics-port", "0"])
      const metrics = yield* server.logged(/serving metrics and health on (http:\/\/[0-9.]+:\d+)/)
      const api = yield* server.logged(/serving the turn API on (http:\/\/[0-9.]+:\d+)/)
      expect(metrics).not.toBe(api)
      const health = yield* request(`${metrics}/healthz`)
      expect(health.status).toBe(200)
      expect(JSON.parse(health.body)).toStrictEqual({ status: "ok" })
      const scraped = yield* request(`${metrics}/metrics`)
      expect(scraped.status).toBe(200)
      expect(scraped.body).toContain("# TYPE ")
      expect((yield* request(`${metrics}/v1/turns`)).status).toBe(404)
    }).pipe(Effect.scoped), 120_000)
})

const json = (token?: string): Record<string, string> => ({
  "content-type": "application/json",
  ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
})

describe("Durable Streams from sluice serve", () => {
  it.live("a stream of one's own on the embedded store: created, appended to, read back", () =>
    Effect.gen(function*() {
      const base = yield* serving({}, "--insecure-local")
      const stream = `${base}/v1/stream/chats/${randomUUID()}`
      expect((yield* request(stream, { method: "PUT", headers: json() })).status).toBe(201)
      const appended = yield* request(stream, {
        method: "POST",
        headers: json(),
        body: JSON.stringify({ role: "user", content: "hi" })
      })
      expect(appended.status).toBe(204)
      expect(appended.headers.get("stream-next-offset")).toMatch(/^\d{16}_\d{16}$/)
      const read = yield* request(`${stream}?offset=-1`)
      expect(read.status).toBe(200)
      expect(JSON.parse(read.body)).toStrictEqual([{ role: "user", content: "hi" }])
    }).pipe(Effect.scoped))

  it.live("--read-tokens (or SLUICE_READ_TOKENS) read but never write; the API tokens write", () =>
    Effect.gen(function*() {
      for (
        const [env, args] of [
          [{ SLUICE_API_TOKENS: "writer-token" }, ["--read-tokens", "reader-1, reader-2"]],
          [{ SLUICE_API_TOKENS: "writer-token", SLUICE_READ_TOKENS: "reader-1,reader-2" }, []]
        ] as const
      ) {
        const base = yield* serving(env, "--host", "127.0.0.1", ...args)
        const stream = `${base}/v1/stream/notes/${randomUUID()}`
        expect((yield* request(stream, { method: "PUT", headers: json("reader-1") })).status).toBe(403)
        expect((yield* request(stream, { method: "PUT", headers: json("writer-token") })).status).toBe(201)
        expect((yield* request(`${stream}?offset=-1`, { headers: json("reader-2") })).status).toBe(200)
        expect((yield* request(`${stream}?offset=-1`, { headers: json("nobody") })).status).toBe(401)
      }
    }).pipe(Effect.scoped))

  it.live("--webhook-allow-hosts (or SLUICE_WEBHOOK_ALLOW_HOSTS) lets subscription webhooks reach those hosts", () =>
    Effect.gen(function*() {
      const subscribe = (base: string) =>
        request(`${base}/v1/stream/__ds/subscriptions/${randomUUID()}`, {
          method: "PUT",
          headers: json("writer-token"),
          body: JSON.stringify({
            type: "webhook",
            pattern: "events/*",
            webhook: { url: "http://127.0.0.1:9/hook" },
            lease_ttl_ms: 1_000
          })
        })
      const tokens = { SLUICE_API_TOKENS: "writer-token" }
      const refused = yield* subscribe(yield* serving(tokens, "--host", "127.0.0.1"))
      expect([refused.status, JSON.parse(refused.body).error.code]).toEqual([400, "WEBHOOK_URL_REJECTED"])
      for (
        const [env, args] of [
          [tokens, ["--webhook-allow-hosts", "hooks.example.com,127.0.0.1:9"]],
          [{ ...tokens, SLUICE_WEBHOOK_ALLOW_HOSTS: "127.0.0.1" }, []]
        ] as const
      ) {
        const accepted = yield* subscribe(yield* serving(env, "--host", "127.0.0.1", ...args))
        expect(accepted.status).toBe(201)
      }
    }).pipe(Effect.scoped))

  it.live("--no-compression: catch-up reads are never gzipped", () =>
    Effect.gen(function*() {
      const readEncoding = (base: string) =>
        Effect.gen(function*() {
          const stream = `${base}/v1/stream/notes/${randomUUID()}`
          expect((yield* request(stream, { method: "PUT", headers: json() })).status).toBe(201)
          const note = { role: "user", content: "a note long enough to be worth compressing ".repeat(64) }
          const appended = yield* request(stream, { method: "POST", headers: json(), body: JSON.stringify(note) })
          expect(appended.status).toBe(204)
          const read = yield* request(`${stream}?offset=-1`, { headers: { "accept-encoding": "gzip" } })
          expect(read.status).toBe(200)
          expect(JSON.parse(read.body)).toStrictEqual([note])
          return read.headers.get("content-encoding")
        })
      expect(yield* readEncoding(yield* serving({}, "--insecure-local"))).toBe("gzip")
      expect(yield* readEncoding(yield* serving({}, "--insecure-local", "--no-compression"))).toBeNull()
    }).pipe(Effect.scoped))

  it.effect("bad server options are bad usage, each named in one line", () =>
    Effect.gen(function*() {
      for (
        const [args, message] of [
          [
            ["--read-tokens", "ok,not ok"],
            "sluice: --read-tokens: token 2 is not visible ASCII without spaces or commas"
          ],
          [["--ready-timeout-ms", "0"], "sluice: --ready-timeout-ms must be a positive integer, got 0"],
          [["--metrics-port", "70000"], "sluice: --metrics-port must be from 0 to 65535, got 70000"],
          [
            ["--webhook-allow-hosts", "hooks.example.com, http://10.0.0.1/"],
            `sluice: --webhook-allow-hosts: "http://10.0.0.1/" is not a host or host:port`
          ]
        ] as const
      ) {
        for (const command of ["serve", "demo"]) {
          const result = yield* sluice({}, [
            command,
            "--port",
            "0",
            ...(command === "serve" ? ["--insecure-local"] : []),
            ...args
          ])
          expect(result.code).toBe(2)
          expect(result.stderr.trimEnd().split("\n")).toStrictEqual([message])
          expect(result.stderr).not.toContain("not ok")
        }
      }
    }).pipe(Effect.provide(NodeServices.layer)))
})

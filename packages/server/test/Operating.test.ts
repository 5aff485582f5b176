/**
 * What an operator watches: `/metrics` as Prometheus text that counts a replayed turn,
 * `/healthz` and `/readyz` with Redis up and down and a starter at capacity, and one access log line and one span
 * per request, neither of which ever holds a token.
 */
import { describe, expect, it } from "@effect/vitest"
import { TurnContext, TurnPipeline, TurnSource } from "@sluice/pipeline"
import { RedisStreams, RedisStreamsLive, RedisStreamsMemory } from "@sluice/redis"
import { transcriptPath } from "@sluice/testing/fixtures"
import { freePort, scopedRedisServer } from "@sluice/testing/redis"
import {
  bearer,
  open,
  prefix,
  publishEvents,
  publishUpserts,
  request,
  serve,
  serveWith,
  tokens,
  unrenewedLease
} from "@sluice/testing/server"
import { streamEvents, upsertMessages } from "@sluice/testing/turns"
import { TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Metric from "effect/Metric"
import * as References from "effect/References"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Tracer from "effect/Tracer"
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import * as AccessLog from "../src/AccessLog.js"
import * as ApiError from "../src/ApiError.js"
import { redactUrl, routeOf } from "../src/internal/observe.js"
import * as Prometheus from "../src/Prometheus.js"
import * as TurnServerOptions from "../src/TurnServerOptions.js"
import * as TurnStarter from "../src/TurnStarter.js"
import * as ViewerToken from "../src/ViewerToken.js"

const transcript = new Uint8Array(readFileSync(transcriptPath("anthropic-text.sse")))
const auth = bearer(tokens[0])
const pipelineOnMemory = TurnPipeline.layer({ publisher: { prefix } }).pipe(
  Layer.provideMerge(RedisStreamsMemory.layer)
)

/** Parses Prometheus text: `name{labels}` -> value; checks every line is a comment or a sample. */
const parseMetrics = (text: string): Map<string, number> => {
  const samples = new Map<string, number>()
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("# HELP ") || line.startsWith("# TYPE ")) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (\S+)$/.exec(line)
    if (match === null) throw new Error(`not a Prometheus sample line: ${line}`)
    samples.set(`${match[1]}${match[2] ?? ""}`, match[3] === "+Inf" ? Infinity : Number(match[3]))
  }
  return samples
}

/** The sum of every series of a metric whose labels include `labels`. */
const total = (samples: Map<string, number>, name: string, labels = ""): number => {
  let sum = 0
  for (const [series, value] of samples) {
    if ((series === name || series.startsWith(`${name}{`)) && series.includes(labels)) sum += value
  }
  return sum
}

const scrape = (url: string, headers: Record<string, string> = auth) =>
  Effect.map(request(`${url}/metrics`, headers), (reply) => {
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toBe(Prometheus.contentType)
    return parseMetrics(String(reply.body))
  })

describe("Prometheus text", () => {
  it.effect("renders counters, gauges and histograms with escaped labels", () =>
    Effect.gen(function*() {
      const counter = Metric.counter("test_render_total", {
        description: "a \\ help\nline",
        attributes: { path: "a\"b\\c" }
      })
      const gauge = Metric.gauge("test-render gauge")
      const histogram = Metric.histogram("test_render_seconds", { boundaries: Metric.boundariesFromIterable([0.1, 1]) })
      yield* Metric.update(counter, 3)
      yield* Metric.update(gauge, -2)
      yield* Effect.forEach([0.05, 0.5, 5], (value) => Metric.update(histogram, value))
      const text = Prometheus.render(yield* Metric.snapshot)
      expect(text).toContain("# HELP test_render_total a \\\\ help\\nline\n# TYPE test_render_total counter\n")
      expect(text).toContain(`test_render_total{path="a\\"b\\\\c"} 3\n`)
      expect(text).toContain("# TYPE test_render_gauge gauge\ntest_render_gauge -2\n")
      expect(text).toContain(
        [
          "# TYPE test_render_seconds histogram",
          `test_render_seconds_bucket{le="0.1"} 1`,
          `test_render_seconds_bucket{le="1"} 2`,
          `test_render_seconds_bucket{le="+Inf"} 3`,
          "test_render_seconds_sum 5.55",
          "test_render_seconds_count 3"
        ].join("\n")
      )
      const parsed = parseMetrics(text)
      expect(parsed.get("test_render_seconds_count")).toBe(3)
      expect(Prometheus.render([])).toBe("")
    }))
})

describe("the operator's routes", () => {
  it.effect(
    "after a replayed turn, /metrics counts its events, entries, and the turn ended by status",
    () =>
      Effect.gen(function*() {
        const metricsPort = yield* Effect.promise(freePort)
        const url = yield* serve({ metricsPort })
        const before = yield* scrape(url)

        const context = yield* TurnContext.make({ prefix })
        const result = yield* TurnPipeline.run(context, TurnSource.sse("anthropic", Stream.make(transcript)))
        expect(result.turn.status).toBe("complete")
        const redis = yield* RedisStreams.RedisStreams
        const a = yield* redis.xlen(TurnKeys.eventsKey(prefix, context.turnId))
        // Stream B keeps each item's last upsert: entries written are counted by id (0-1, 0-2, ...)
        const storedB = yield* redis.xrange(TurnKeys.upsertsKey(prefix, context.turnId), "-", "+")
        const b = storedB.length
        const writtenB = Number(storedB.at(-1)?.id.split("-")[1] ?? "0")

        // a reader: the snapshot, and the whole Stream B as SSE
        expect((yield* request(`${url}/v1/turns/${context.turnId}`, auth)).status).toBe(200)
        const opened = yield* open(`${url}/v1/turns/${context.turnId}/upserts`, auth)
        const frames = yield* Stream.runCount(opened.events)
        expect(frames).toBe(b)

        const after = yield* scrape(url)
        const delta = (name: string, labels = "") => total(after, name, labels) - total(before, name, labels)
        expect(delta("sluice_turns_started_total")).toBe(1)
        expect(delta("sluice_turns_ended_total", `status="complete"`)).toBe(1)
        expect(delta("sluice_events_total")).toBe(a)
        expect(delta("sluice_events_total", `type="response_done"`)).toBe(1)
        expect(delta("sluice_stream_entries_total", `stream="events"`)).toBe(a)
        expect(delta("sluice_stream_entries_total", `stream="upserts"`)).toBe(writtenB)
        expect(delta("sluice_publish_latency_seconds_count", `stream="events"`)).toBeGreaterThan(0)
        expect(delta("sluice_snapshot_bytes_count")).toBe(1)
        expect(total(after, "sluice_turns_active")).toBe(0)
        expect(total(after, "sluice_sse_readers")).toBe(0)
        expect(after.get(`sluice_publish_latency_seconds_bucket{stream="events",le="+Inf"}`)).toBe(
          after.get(`sluice_publish_latency_seconds_count{stream="events"}`)
        )
        expect(delta("sluice_http_requests_total", `route="/v1/turns/:turnId"`)).toBe(1)

        // the API port wants a token; the metrics port does not, and serves nothing else
        expect((yield* request(`${url}/metrics`)).status).toBe(401)
        const onPort = yield* scrape(`http://127.0.0.1:${metricsPort}`, {})
        expect(total(onPort, "sluice_turns_started_total")).toBe(total(after, "sluice_turns_started_total"))
        expect((yield* request(`http://127.0.0.1:${metricsPort}/healthz`)).body).toStrictEqual({ status: "ok" })
        expect((yield* request(`http://127.0.0.1:${metricsPort}/v1/turns`)).status).toBe(404)
      }).pipe(Effect.provide(pipelineOnMemory)),
    120_000
  )

  it.effect(
    "/healthz is 200 while the process lives; /readyz follows Redis, with no token and no turn data",
    () =>
      Effect.gen(function*() {
        const server = yield* scopedRedisServer()
        const redis = yield* Layer.build(
          RedisStreamsLive.layer({ url: server.url, commandTimeoutMs: 2_000, connectTimeoutMs: 2_000 })
        )
        const url = yield* serve({ readyTimeoutMs: 2_000 }).pipe(Effect.provide(redis))
        expect(yield* request(`${url}/healthz`)).toMatchObject({ status: 200, body: { status: "ok" } })
        expect(yield* request(`${url}/readyz`)).toMatchObject({ status: 200, body: { status: "ready" } })

        yield* Effect.promise(() => server.kill())
        const down = yield* request(`${url}/readyz`)
        expect(down.status).toBe(503)
        expect(down.body).toMatchObject({ status: "unavailable" })
        expect(Object.keys(down.body as object).sort()).toStrictEqual(["reason", "status"])
        expect(yield* request(`${url}/healthz`)).toMatchObject({ status: 200, body: { status: "ok" } })

        yield* Effect.promise(() => server.restart())
        // the client reconnects on its own; readiness comes back
        let ready = 0
        for (let i = 0; i < 200 && ready !== 200; i++) {
          ready = (yield* request(`${url}/readyz`)).status
          if (ready !== 200) yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
        }
        expect(ready).toBe(200)
      }),
    120_000
  )

  it.effect("/readyz is 503 when Redis does not answer within the deadline", () =>
    Effect.gen(function*() {
      const memory = yield* RedisStreams.RedisStreams
      const hanging: RedisStreams.RedisStreamsService = { ...memory, pttl: () => Effect.never }
      const url = yield* serveWith({ insecureLocal: true, readyTimeoutMs: 200 }).pipe(
        Effect.provideService(RedisStreams.RedisStreams, hanging)
      )
      // the deadline runs on the test clock: moved on until the answer comes
      const pending = yield* Effect.forkChild(request(`${url}/readyz`))
      for (let i = 0; i < 10_000 && pending.pollUnsafe() === undefined; i++) {
        yield* TestClock.adjust("50 millis")
        yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      }
      const reply = yield* Fiber.join(pending)
      expect(reply).toMatchObject({
        status: 503,
        body: { status: "unavailable", reason: "Redis did not answer within 200 ms" }
      })
    }).pipe(Effect.provide(RedisStreamsMemory.layer)), 60_000)

  it.effect(
    "/readyz is 503 while the TurnStarter is at capacity, on the API port and the metrics port",
    () =>
      Effect.gen(function*() {
        let full: string | undefined = undefined
        const starter = TurnStarter.TurnStarter.of({
          start: () => Effect.fail(new ApiError.ApiError({ code: "not_implemented", message: "not in this test" })),
          atCapacity: Effect.sync(() => full)
        })
        const metricsPort = yield* Effect.promise(freePort)
        const url = yield* serveWith({ insecureLocal: true, metricsPort }).pipe(
          Effect.provideService(TurnStarter.TurnStarter, starter)
        )
        const ports = [url, `http://127.0.0.1:${metricsPort}`]
        for (const base of ports) {
          expect(yield* request(`${base}/readyz`)).toMatchObject({ status: 200, body: { status: "ready" } })
        }
        full = "this process already runs 3 turns, its limit (maxTurns 3)"
        for (const base of ports) {
          const reply = yield* request(`${base}/readyz`)
          expect(reply).toMatchObject({
            status: 503,
            body: { status: "unavailable", reason: `at capacity: ${full}` }
          })
          expect(reply.headers.get("cache-control")).toBe("no-store")
        }
        full = undefined
        for (const base of ports) {
          expect(yield* request(`${base}/readyz`)).toMatchObject({ status: 200, body: { status: "ready" } })
        }
      }).pipe(Effect.provide(RedisStreamsMemory.layer)),
    60_000
  )

  it.effect("no access log line unless the access log is on (an embedding app chooses)", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const logger = Logger.make<unknown, void>(({ message }) => {
        lines.push(Array.isArray(message) ? message.map(String).join(" ") : String(message))
      })
      yield* Effect.gen(function*() {
        const url = yield* serve()
        expect((yield* request(`${url}/v1/turns?limit=5`, auth)).status).toBe(200)
        expect((yield* request(`${url}/healthz`)).status).toBe(200)
      }).pipe(
        Effect.updateService(
          Logger.CurrentLoggers,
          (loggers) => new Set([...loggers].map((current) => (current === Logger.defaultLogger ? logger : current)))
        )
      )
      expect(lines.filter((line) => /^(GET|POST) \//.test(line))).toStrictEqual([])
    }).pipe(Effect.provide(pipelineOnMemory)), 60_000)

  it.effect("one access log line and one span per request, and no token in either", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const logger = Logger.make<unknown, void>(({ fiber, message }) => {
        const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
        lines.push(`${text} ${JSON.stringify(fiber.getRef(References.CurrentLogAnnotations))}`)
      })
      const spans: Array<Tracer.Span> = []
      const base = yield* Effect.tracer
      const tracer = Tracer.make({
        span: (options) => {
          const span = base.span(options)
          spans.push(span)
          return span
        },
        context: base.context
      })
      const pageToken = yield* ViewerToken.issue(ViewerToken.deriveKey([...tokens]), 60_000)
      yield* Effect.gen(function*() {
        const url = yield* serve()
        const context = yield* TurnContext.make({ prefix })
        yield* TurnPipeline.run(context, TurnSource.sse("anthropic", Stream.make(transcript)))
        expect((yield* request(`${url}/v1/turns?limit=5`, auth)).status).toBe(200)
        expect((yield* request(`${url}/v1/turns/${context.turnId}?access_token=${pageToken}`)).status).toBe(200)
        const opened = yield* open(
          `${url}/v1/turns/${context.turnId}/upserts?access_token=${encodeURIComponent(pageToken)}&after=0-0`
        )
        yield* Stream.runDrain(opened.events)
        expect((yield* request(`${url}/v1/turns?access_token=${tokens[1]}`)).status).toBe(401)
        expect((yield* request(`${url}/healthz`)).status).toBe(200)
      }).pipe(
        Effect.updateService(
          Logger.CurrentLoggers,
          (loggers) => new Set([...loggers].map((current) => (current === Logger.defaultLogger ? logger : current)))
        ),
        Effect.withTracer(tracer),
        Effect.provideService(AccessLog.AccessLog, true)
      )

      const access = lines.filter((line) => /^(GET|POST) \//.test(line))
      expect(access.map((line) => line.split(" ").slice(0, 3).join(" "))).toStrictEqual([
        "GET /v1/turns?limit=5 200",
        `GET /v1/turns/${access[1]!.split(" ")[1]!.split("/")[3]!.split("?")[0]}?access_token=REDACTED 200`,
        expect.stringMatching(/^GET \/v1\/turns\/[0-9a-f-]+\/upserts\?access_token=REDACTED&after=0-0 200$/),
        "GET /v1/turns?access_token=REDACTED 401",
        "GET /healthz 200"
      ])
      for (const line of access) {
        expect(line).toMatch(/ \d+ms /)
        expect(line).toContain(`"durationMs":`)
      }
      const secrets = [tokens[0], tokens[1], pageToken, encodeURIComponent(pageToken)]
      for (const line of lines) for (const secret of secrets) expect(line).not.toContain(secret)

      const names = spans.map((span) => span.name)
      expect(names).toContain("http GET /v1/turns/:turnId/upserts")
      expect(names).toContain("sluice.sse")
      expect(names).toContain("sluice.turn")
      // Effect's own request span (`http.server GET` in Effect 3, `GET` in Effect 4) is off
      expect(names.some((name) => name.startsWith("http.server") || name === "GET")).toBe(false)
      for (const span of spans) {
        const attributes = JSON.stringify([...span.attributes.entries()])
        for (const secret of secrets) expect(attributes).not.toContain(secret)
      }
      const sse = spans.find((span) => span.name === "sluice.sse")!
      expect(sse.attributes.get("sluice.stream")).toBe("upserts")
    }).pipe(Effect.provide(pipelineOnMemory)), 120_000)

  it.effect("a reader that finds a producer's lease lapsed counts a lease expiry", () =>
    Effect.gen(function*() {
      const url = yield* serve()
      const turnId = randomUUID()
      yield* unrenewedLease(turnId)
      yield* publishEvents(turnId, streamEvents(turnId, 20).slice(0, 4))
      yield* publishUpserts(turnId, upsertMessages(turnId, 20).slice(0, 3))
      const before = total(yield* scrape(url), "sluice_lease_expiries_total", `side="reader"`)
      yield* TestClock.adjust(6_000)
      const snapshot = yield* request(`${url}/v1/turns/${turnId}`, auth)
      expect(snapshot.body).toMatchObject({ status: "error", error: { code: "producer_lost" } })
      expect(total(yield* scrape(url), "sluice_lease_expiries_total", `side="reader"`) - before).toBe(1)
    }).pipe(Effect.provide(RedisStreamsMemory.layer)))

  it("redacts credentials in a target and names routes without ids", () => {
    expect(redactUrl("/v1/turns/x/upserts?after=0-1&access_token=abc.def&api_key=k&x=1")).toBe(
      "/v1/turns/x/upserts?after=0-1&access_token=REDACTED&api_key=REDACTED&x=1"
    )
    expect(redactUrl("/v1/turns?access%5Ftoken=abc")).toBe("/v1/turns?access%5Ftoken=REDACTED")
    expect(redactUrl("/healthz")).toBe("/healthz")
    expect(routeOf("/v1/turns/5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69/events")).toBe("/v1/turns/:turnId/events")
    expect(routeOf("/v1/turns/5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69")).toBe("/v1/turns/:turnId")
    expect(routeOf("/nope")).toBe("other")
  })

  it.effect("metricsPort may not be the API port", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(TurnServerOptions.resolve({ tokens: ["t"], port: 9000, metricsPort: 9000 }))
      expect(error.message).toContain("metricsPort (9000) is the API port")
      const bad = yield* Effect.flip(TurnServerOptions.resolve({ tokens: ["t"], readyTimeoutMs: 0 }))
      expect(bad.message).toContain("readyTimeoutMs")
    }))
})

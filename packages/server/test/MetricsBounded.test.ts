/**
 * `/metrics` under many requests: one series per label set, made once, whatever the
 * requests' methods, paths, turn ids and credentials; after 10,000 requests the page is
 * the size it was after the first 1,000 (the same series, larger counts) and valid
 * Prometheus text with no series repeated. The app is driven in process.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreamsMemory } from "@sluice/redis"
import { quietLogs } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Metric from "effect/Metric"
import { randomUUID } from "node:crypto"
import { routeOf } from "../src/internal/observe.js"
import { httpDuration, httpRequests, methodLabel, statusLabel } from "../src/internal/serverMetrics.js"
import * as Prometheus from "../src/Prometheus.js"
import * as TurnServer from "../src/TurnServer.js"
import * as TurnServerOptions from "../src/TurnServerOptions.js"

const token = "token-alpha-0123456789"

interface Family {
  readonly type: string
  readonly samples: number
}

/**
 * Checks Prometheus text format 0.0.4 strictly and throws at the first fault: every
 * line a `# HELP`, a `# TYPE` or a sample; each name's HELP and TYPE once, before its
 * samples, which are contiguous; histogram samples `_bucket` (with `le`, counts not
 * decreasing, `+Inf` equal to `_count`), `_sum`, `_count`; label names valid, values
 * escaped; no series (name and label set) twice. The families found.
 */
const validate = (text: string): Map<string, Family> => {
  if (text !== "" && !text.endsWith("\n")) throw new Error("the page does not end with a newline")
  const families = new Map<string, { type: string; samples: number; done: boolean }>()
  const seen = new Set<string>()
  const buckets = new Map<string, Array<number>>()
  const counts = new Map<string, number>()
  let current: string | undefined
  const familyOf = (name: string): string => {
    for (const suffix of ["_bucket", "_sum", "_count"]) {
      const base = name.slice(0, -suffix.length)
      if (name.endsWith(suffix) && families.get(base)?.type === "histogram") return base
    }
    return name
  }
  const open = (name: string) => {
    if (current !== undefined && current !== name) families.get(current)!.done = true
    current = name
  }
  for (const line of text.split("\n").slice(0, -1)) {
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line)
    if (meta !== null) {
      const [, kind, name, rest] = meta
      const family = families.get(name!)
      if (kind === "TYPE") {
        if (family !== undefined) throw new Error(`a second TYPE of ${name}`)
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest!)) throw new Error(line)
        families.set(name!, { type: rest!, samples: 0, done: false })
      } else if (family !== undefined) {
        throw new Error(`HELP of ${name} after its TYPE`)
      }
      open(name!)
      continue
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\n"])*",?)*)\})? (\S+)$/
      .exec(line)
    if (sample === null) throw new Error(`not a Prometheus line: ${line}`)
    const [, name, labelText = "", value] = sample
    if (!/^([+-]Inf|NaN|-?\d+(\.\d+)?([eE][+-]?\d+)?)$/.test(value!)) throw new Error(`not a value: ${line}`)
    const base = familyOf(name!)
    const family = families.get(base)
    if (family === undefined) throw new Error(`a sample before its TYPE: ${line}`)
    if (family.done || current !== base) throw new Error(`samples of ${base} are not contiguous`)
    family.samples++
    const labels = [...labelText.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => [k!, v!])
    const names = labels.map(([k]) => k)
    if (new Set(names).size !== names.length) throw new Error(`a label twice: ${line}`)
    const key = `${name}{${[...labels].sort(([a], [b]) => (a! < b! ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join(",")}}`
    if (seen.has(key)) throw new Error(`a repeated series: ${line}`)
    seen.add(key)
    if (family.type === "histogram") {
      const rest = labels.filter(([k]) => k !== "le").map(([k, v]) => `${k}=${v}`).join(",")
      if (name!.endsWith("_bucket")) {
        if (!names.includes("le")) throw new Error(`a bucket without le: ${line}`)
        const list = buckets.get(`${base}{${rest}}`) ?? []
        const count = Number(value)
        if (list.length > 0 && count < list[list.length - 1]!) throw new Error(`a bucket count decreases: ${line}`)
        buckets.set(`${base}{${rest}}`, [...list, count])
      } else if (name!.endsWith("_count")) {
        counts.set(`${base}{${rest}}`, Number(value))
      }
    }
  }
  for (const [series, list] of buckets) {
    if (list[list.length - 1] !== counts.get(series)) throw new Error(`+Inf is not _count of ${series}`)
  }
  return new Map([...families].map(([name, { samples, type }]) => [name, { type, samples }]))
}

const seriesOf = (text: string): ReadonlyArray<string> =>
  text.split("\n").filter((line) => line !== "" && !line.startsWith("#")).map((line) =>
    line.slice(0, line.lastIndexOf(" "))
  )

// The kinds of request a client may make, in a cycle that covers every combination
// within the first 1,000: a new made-up method, lower-case ones, unknown paths, new
// turn ids, Durable Streams paths, no token.
const methods = (
  i: number
): ReadonlyArray<string> => ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "get", `BREW${i}`]
const paths = (i: number): ReadonlyArray<string> => [
  "/metrics",
  "/healthz",
  "/v1/turns",
  `/v1/turns/${randomUUID()}`,
  `/v1/turns/${randomUUID()}/events?after=0-${i}`,
  `/v1/turns/not-a-uuid-${i}/upserts`,
  `/v1/stream/events/${i}`,
  `/v1/stream/__ds/subscriptions/s${i}`,
  `/nope/${i}?access_token=${i}`,
  `/%zz${i}`
]

describe("/metrics under 10,000 requests", () => {
  it.effect("one series per label set: the page stays the same size and valid", () =>
    Effect.gen(function*() {
      const options = yield* TurnServerOptions.resolve({ tokens: [token] })
      const app = yield* quietLogs(TurnServer.makeApp(options))
      const call = (method: string, path: string, authorized: boolean) =>
        Effect.flatMap(
          app.pipe(
            Effect.provideService(
              HttpServerRequest.HttpServerRequest,
              HttpServerRequest.fromWeb(
                new Request(`http://127.0.0.1:8787${path}`, {
                  method,
                  headers: authorized ? { authorization: `Bearer ${token}` } : {}
                })
              )
            ),
            Effect.scoped,
            quietLogs
          ),
          (response) =>
            Effect.promise(async () => ({
              status: response.status,
              text: await HttpServerResponse.toWeb(response).text()
            }))
        )
      const scrape = Effect.map(call("GET", "/metrics", true), ({ status, text }) => {
        expect(status).toBe(200)
        return text
      })
      const pages: Array<string> = []
      for (let i = 0; i < 10_000; i++) {
        const path = paths(i)[i % 10]!
        yield* call(methods(i)[i % 9]!, path, i % 7 !== 0)
        if ((i + 1) % 1_000 === 0) pages.push(yield* scrape)
      }
      const first = pages[0]!
      const last = pages[pages.length - 1]!
      const families = validate(last)
      validate(first)
      expect([...families.keys()]).toStrictEqual([
        "sluice_http_request_duration_seconds",
        "sluice_http_requests_total"
      ])
      // the same series after 1,000 and after 10,000 requests, each once
      expect(seriesOf(last)).toStrictEqual(seriesOf(first))
      expect(new Set(seriesOf(last)).size).toBe(seriesOf(last).length)
      // the labels take bounded values: no method, path or turn id a client made up
      const labels = new Set([...last.matchAll(/(method|route)="([^"]*)"/g)].map(([, k, v]) => `${k}=${v}`))
      expect([...labels].sort()).toStrictEqual([
        "method=DELETE",
        "method=GET",
        "method=HEAD",
        "method=OPTIONS",
        "method=PATCH",
        "method=POST",
        "method=PUT",
        "method=other",
        "route=/healthz",
        "route=/metrics",
        "route=/v1/stream/:path",
        "route=/v1/stream/__ds",
        "route=/v1/turns",
        "route=/v1/turns/:turnId",
        "route=/v1/turns/:turnId/events",
        "route=/v1/turns/:turnId/upserts",
        "route=other"
      ])
      // only the counts grew: a digit or so per sample
      expect(last.length - first.length).toBeLessThanOrEqual(2 * seriesOf(last).length)
      expect(last.length).toBeLessThan(64 * 1024)
      const total = [...last.matchAll(/^sluice_http_requests_total\{[^}]*\} (\d+)$/gm)]
        .reduce((sum, [, n]) => sum + Number(n), 0)
      // every request counted, the scrapes included (the one being answered is not yet)
      expect(total).toBe(10_000 + pages.length - 1)
    }).pipe(
      Effect.provideService(Metric.MetricRegistry, new Map()),
      Effect.scoped,
      Effect.provide(RedisStreamsMemory.layer)
    ), 120_000)
})

describe("request metrics", () => {
  it("are made once per label set", () => {
    expect(httpRequests("GET", "/metrics", 200)).toBe(httpRequests("GET", "/metrics", 200))
    expect(httpRequests("BREW", "/metrics", 200)).toBe(httpRequests("PROPFIND", "/metrics", 200))
    expect(httpRequests("GET", "/metrics", 200)).not.toBe(httpRequests("GET", "/metrics", 404))
    expect(httpDuration("/healthz")).toBe(httpDuration("/healthz"))
  })

  it("take bounded labels", () => {
    expect(["GET", "PATCH", "get", "BREW", ""].map(methodLabel)).toStrictEqual([
      "GET",
      "PATCH",
      "other",
      "other",
      "other"
    ])
    expect([200, 499, 99, 600, 200.5].map(statusLabel)).toStrictEqual(["200", "499", "other", "other", "other"])
    expect(
      [
        "/v1/turns/x/ui-message-stream",
        "/v1/stream/a/b",
        "/v1/stream/",
        "/v1/stream/__ds/jwks.json",
        "/v1/stream/__ds"
      ].map(routeOf)
    ).toStrictEqual([
      "/v1/turns/:turnId/ui-message-stream",
      "/v1/stream/:path",
      "other",
      "/v1/stream/__ds",
      "/v1/stream/__ds"
    ])
  })
})

describe("Prometheus.render", () => {
  it.effect("writes each series once: one series in two registry entries is summed, a type clash left out", () =>
    Effect.gen(function*() {
      yield* Metric.update(Metric.counter("test_twice_total", { description: "one", attributes: { a: "1" } }), 2)
      yield* Metric.update(Metric.counter("test_twice_total", { description: "two", attributes: { a: "1" } }), 3)
      yield* Metric.update(Metric.gauge("test_twice_total", { attributes: { a: "2" } }), 7)
      const text = Prometheus.render(yield* Metric.snapshot)
      validate(text)
      expect(text).toBe("# HELP test_twice_total one\n# TYPE test_twice_total counter\ntest_twice_total{a=\"1\"} 5\n")
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())))
})

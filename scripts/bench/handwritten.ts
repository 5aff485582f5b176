/**
 * `pnpm bench handwritten`: the pieces Sluice writes by hand, each next to the library
 * that does the same job, on the same input in this one process:
 *
 * 1. Prometheus text: `Prometheus.render` (Effect's own renderer over `Metric.snapshot`)
 *    against prom-client rendering the same metric set from its own registry, and
 *    against prom-client fed from Effect's snapshots at each scrape (the bridge an app
 *    would need to keep one metric system).
 * 2. gzip negotiation: `HttpCompression.negotiate` against `negotiator`'s `encodings()`
 *    on a table of `Accept-Encoding` headers: the answer of each, and time per header.
 * 3. Page tokens: `ViewerToken` against an HS256 JWT of `jose` with the same claims:
 *    sign and verify time, token size, and what a browser needs to read the scope.
 * 4. The webhook address guard: Sluice's (`webhookLookup`, `webhookAddress`) against
 *    `request-filtering-agent` on a table of addresses, literal and resolved, plugged
 *    into the same Effect HTTP client (node:http agents), and a redirect.
 * 5. The UI message stream's SSE encoding: `UiMessageStream.encode` against the `ai`
 *    package's `JsonToSseTransformStream`, alone and after `createUIMessageStream`:
 *    bytes compared, time per chunk.
 *
 * The SSE framer's comparison with eventsource-parser is `pnpm bench sse`.
 */
import { StreamEvent } from "@sluice/core"
import * as HttpCompression from "@sluice/durable-streams/HttpCompression"
import * as Prometheus from "@sluice/server/Prometheus"
import * as UiMessageStream from "@sluice/server/UiMessageStream"
import * as ViewerToken from "@sluice/server/ViewerToken"
import { acceptEncodings } from "@sluice/testing/fixtures"
import { filteringClient } from "@sluice/testing/http"
import { createUIMessageStream, JsonToSseTransformStream, type UIMessageChunk } from "ai"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Stream from "effect/Stream"
import { build } from "esbuild"
import { decodeJwt, jwtVerify, SignJWT } from "jose"
import Negotiator from "negotiator"
import type { LookupAddress } from "node:dns"
import * as http from "node:http"
import { type AddressInfo, type LookupFunction, Socket } from "node:net"
import * as prom from "prom-client"
import { RequestFilteringHttpAgent } from "request-filtering-agent"
import type { WebhookPolicy } from "../../packages/durable-streams/src/internal/subscriptionWire.js"
import {
  GuardedHttpAgent,
  guardedLookup,
  type Resolve,
  webhookClient
} from "../../packages/durable-streams/src/internal/webhookLookup.js"
import { compare } from "./harness.js"

const micros = (seconds: number, ops: number): string => (seconds / ops * 1e6).toFixed(2)

/**
 * One pair of cases timed in alternating rounds: each one's median wall time per
 * operation, and `ratio`, the reference's time over the subject's, in wall and CPU
 * time (`2.0x / 1.9x`).
 */
const perOp = async (
  ops: number,
  reference: { readonly name: string; readonly run: () => Promise<unknown> | unknown },
  subject: { readonly name: string; readonly run: () => Promise<unknown> | unknown },
  rounds = 9
): Promise<{ readonly rows: ReadonlyArray<string>; readonly ratio: string }> => {
  const result = await compare(
    0,
    { name: reference.name, run: async () => (await reference.run(), ops) },
    { name: subject.name, run: async () => (await subject.run(), ops) },
    { rounds }
  )
  return {
    rows: [
      `| ${reference.name} | ${micros(result.reference.seconds, ops)} |`,
      `| ${subject.name} | ${micros(result.subject.seconds, ops)} |`
    ],
    ratio: `${result.wallRatio.toFixed(1)}x / ${result.cpuRatio.toFixed(1)}x`
  }
}

// ---------------------------------------------------------------------------------
// 1. Prometheus

const routes = [
  "/v1/turns",
  "/v1/turns/:turnId",
  "/v1/turns/:turnId/events",
  "/v1/turns/:turnId/upserts",
  "/v1/turns/:turnId/ui-message-stream",
  "/v1/turns/:turnId/cancel",
  "/v1/stream/*",
  "/metrics",
  "/healthz",
  "/readyz"
]
const statuses = [200, 304, 404, 500]
const eventTypes = [
  "response_start",
  "item_start",
  "item_delta",
  "item_done",
  "item_error",
  "item_cancelled",
  "response_done",
  "response_error"
]
const durationBuckets = Array.from({ length: 14 }, (_, i) => 0.001 * 2 ** i)
const byteBuckets = Array.from({ length: 10 }, (_, i) => 256 * 4 ** i)

// A fixed pseudo-random sequence, so both metric systems see the same observations.
const sequence = (seed: number) => {
  let state = seed
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648
    return state / 2147483648
  }
}

/** The same observations, made once on Effect metrics and once on prom-client's. */
interface MetricSink {
  readonly count: (name: string, help: string, labels: Record<string, string>, by: number) => void
  readonly set: (name: string, help: string, labels: Record<string, string>, value: number) => void
  readonly observe: (
    name: string,
    help: string,
    buckets: ReadonlyArray<number>,
    labels: Record<string, string>,
    value: number
  ) => void
}

const observeAll = (sink: MetricSink): void => {
  const random = sequence(7)
  for (const route of routes) {
    for (const method of ["GET", "POST"]) {
      for (const status of statuses) {
        sink.count("sluice_http_requests_total", "HTTP requests, by method, route and status", {
          method,
          route,
          status: String(status)
        }, 1 + Math.floor(random() * 1000))
      }
    }
    for (let i = 0; i < 200; i++) {
      sink.observe(
        "sluice_http_request_duration_seconds",
        "Seconds from a request to its response's head",
        durationBuckets,
        {
          route
        },
        random() * 2
      )
    }
  }
  for (const type of eventTypes) {
    sink.count(
      "sluice_events_total",
      "StreamEvents written to Stream A, by payload type",
      { type },
      Math.floor(random() * 1e6)
    )
  }
  for (const stream of ["events", "upserts"]) {
    sink.count("sluice_stream_entries_total", "Entries Redis confirmed", { stream }, Math.floor(random() * 1e6))
    sink.set("sluice_sse_readers", "Open SSE streams, by stream", { stream }, Math.floor(random() * 100))
    for (let i = 0; i < 200; i++) {
      sink.observe(
        "sluice_publish_latency_seconds",
        "Seconds from sending a batch to Redis confirming it",
        durationBuckets,
        {
          stream
        },
        random() / 10
      )
    }
  }
  sink.set("sluice_turns_active", "Turns running in this process", {}, 12)
  for (let i = 0; i < 100; i++) {
    sink.observe("sluice_snapshot_bytes", "Bytes of the turn snapshots served", byteBuckets, {}, random() * 1e6)
  }
}

/** Effect's registry holding the metric set. */
const effectRegistry = (): Metric.MetricRegistry => {
  const registry: Metric.MetricRegistry = new Map()
  const run = <A>(effect: Effect.Effect<A>) =>
    Effect.runSync(Effect.provideService(effect, Metric.MetricRegistry, registry))
  observeAll({
    count: (name, description, attributes, by) =>
      run(Metric.update(Metric.counter(name, { description, attributes }), by)),
    set: (name, description, attributes, value) =>
      run(Metric.update(Metric.gauge(name, { description, attributes }), value)),
    observe: (name, description, boundaries, attributes, value) =>
      run(Metric.update(Metric.histogram(name, { description, boundaries, attributes }), value))
  })
  return registry
}

/** prom-client's registry holding the same metric set. */
const promRegistry = (): prom.Registry => {
  const registry = new prom.Registry()
  const counters = new Map<string, prom.Counter>()
  const gauges = new Map<string, prom.Gauge>()
  const histograms = new Map<string, prom.Histogram>()
  const labelNames = (labels: Record<string, string>) => Object.keys(labels)
  observeAll({
    count: (name, help, labels, by) => {
      const counter = counters.get(name) ??
        new prom.Counter({ name, help, labelNames: labelNames(labels), registers: [registry] })
      counters.set(name, counter)
      counter.inc(labels, by)
    },
    set: (name, help, labels, value) => {
      const gauge = gauges.get(name) ??
        new prom.Gauge({ name, help, labelNames: labelNames(labels), registers: [registry] })
      gauges.set(name, gauge)
      gauge.set(labels, value)
    },
    observe: (name, help, buckets, labels, value) => {
      const histogram = histograms.get(name) ??
        new prom.Histogram({ name, help, buckets: [...buckets], labelNames: labelNames(labels), registers: [registry] })
      histograms.set(name, histogram)
      histogram.observe(labels, value)
    }
  })
  return registry
}

type PromValue = { value: number; labels: Record<string, string | number>; metricName?: string }

const labelsOf = (snapshot: Metric.Metric.Snapshot): Record<string, string> =>
  Object.fromEntries(
    Object.entries(snapshot.attributes ?? {}).filter(([key]) => key !== "unit" && key !== "time_unit").map((
      [key, value]
    ) => [key, String(value)])
  )

// One snapshot as prom-client's values: what a bridge from Effect's metrics must write.
const promValues = (snapshot: Metric.Metric.Snapshot): Array<PromValue> => {
  const labels = labelsOf(snapshot)
  switch (snapshot.type) {
    case "Counter":
      return [{ value: Number(snapshot.state.count), labels }]
    case "Gauge":
      return [{ value: Number(snapshot.state.value), labels }]
    case "Histogram": {
      const out: Array<PromValue> = snapshot.state.buckets.map(([le, count]) => ({
        value: count,
        labels: { ...labels, le },
        metricName: `${snapshot.id}_bucket`
      }))
      out.push(
        { value: snapshot.state.count, labels: { ...labels, le: "+Inf" }, metricName: `${snapshot.id}_bucket` },
        { value: snapshot.state.sum, labels, metricName: `${snapshot.id}_sum` },
        { value: snapshot.state.count, labels, metricName: `${snapshot.id}_count` }
      )
      return out
    }
    default:
      return []
  }
}

const promType = (type: Metric.Metric.Type): "counter" | "gauge" | "histogram" | "untyped" =>
  type === "Counter" ? "counter" : type === "Gauge" ? "gauge" : type === "Histogram" ? "histogram" : "untyped"

/**
 * prom-client fed from Effect's metrics: at each scrape, the snapshots regrouped by
 * name into prom-client's collector objects (`get()`), which its registry renders.
 */
const bridgeScrape = async (registry: Metric.MetricRegistry): Promise<string> => {
  const snapshots = Metric.snapshotUnsafe(Context.make(Metric.MetricRegistry, registry))
  const byName = new Map<string, Array<Metric.Metric.Snapshot>>()
  for (const snapshot of snapshots) byName.set(snapshot.id, [...(byName.get(snapshot.id) ?? []), snapshot])
  const target = new prom.Registry()
  for (const [name, group] of byName) {
    const first = group[0]!
    const collected = {
      name,
      help: first.description ?? name,
      type: promType(first.type),
      values: group.flatMap(promValues),
      aggregator: "sum" as const
    }
    // prom-client's registry reads a metric's `name` and `get()` only; its typings name
    // `type` as a numeric enum where the registry writes the string it is given
    Reflect.apply(target.registerMetric, target, [{ name, get: () => Promise.resolve(collected) }])
  }
  return target.metrics()
}

/** The samples of a text exposition: `name{sorted labels}` to its value. */
const samples = (text: string): Map<string, number> => {
  const out = new Map<string, number>()
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue
    const space = line.lastIndexOf(" ")
    const series = line.slice(0, space)
    const brace = series.indexOf("{")
    const name = brace < 0 ? series : series.slice(0, brace)
    const labels = brace < 0
      ? []
      : series.slice(brace + 1, -1).split(/,(?=[a-z_]+=")/).map((pair) => {
        const [key, value] = [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 2, -1)]
        return key === "le" ? `${key}=${value === "+Inf" || value === "Infinity" ? "+Inf" : Number(value)}` : pair
      }).sort()
    out.set(`${name}{${labels.join(",")}}`, Number(line.slice(space + 1)))
  }
  return out
}

const sameSamples = (a: Map<string, number>, b: Map<string, number>): string => {
  const missing = [...a.keys()].filter((key) => !b.has(key))
  const extra = [...b.keys()].filter((key) => !a.has(key))
  const differ = [...a].filter(([key, value]) => b.has(key) && Math.abs(b.get(key)! - value) > 1e-9 * Math.abs(value))
  return missing.length + extra.length + differ.length === 0
    ? `the same ${a.size} samples`
    : `${missing.length} missing, ${extra.length} extra, ${differ.length} different (e.g. ${
      [...missing, ...extra, ...differ.map(([key]) => key)].slice(0, 3).join("; ")
    })`
}

const prometheusSection = async (): Promise<string> => {
  const effect = effectRegistry()
  const promClient = promRegistry()
  const ours = () => Effect.runSync(Effect.provideService(Prometheus.text, Metric.MetricRegistry, effect))
  const oursText = ours()
  const promText = await promClient.metrics()
  const bridged = await bridgeScrape(effect)
  const series = Metric.snapshotUnsafe(Context.make(Metric.MetricRegistry, effect)).length
  const vsProm = await perOp(1, { name: "prom-client `registry.metrics()`", run: () => promClient.metrics() }, {
    name: "Sluice `Prometheus.text` (Metric.snapshot + Effect's renderer)",
    run: ours
  }, 51)
  const vsBridge = await perOp(
    1,
    {
      name: "prom-client fed from Effect's snapshots at each scrape",
      run: () => bridgeScrape(effect)
    },
    { name: "Sluice `Prometheus.text`", run: ours },
    51
  )
  return [
    `\n## Prometheus text: ${series} Effect series (${
      routes.length * 2 * statuses.length
    } labelled counters, 13 histograms of 10-14 buckets, gauges), ${
      (Buffer.byteLength(oursText) / 1024).toFixed(0)
    } KiB per scrape`,
    "",
    `Samples, Sluice against prom-client's own registry: ${sameSamples(samples(oursText), samples(promText))}; ` +
    `against prom-client fed from Effect's snapshots: ${sameSamples(samples(oursText), samples(bridged))}.`,
    "",
    "| case | µs per scrape |",
    "|---|---:|",
    ...vsProm.rows,
    ...vsBridge.rows.slice(0, 1),
    "",
    `Sluice is ${vsProm.ratio} prom-client's own registry and ${vsBridge.ratio} prom-client fed from Effect's metrics (wall / CPU time, rounds alternated, medians of 51).`
  ].join("\n")
}

// ---------------------------------------------------------------------------------
// 2. gzip negotiation

const negotiatorEncoding = (header: string | undefined): string => {
  const negotiator = new Negotiator({ headers: { "accept-encoding": header } })
  return negotiator.encodings(["gzip", "identity"])[0] ?? "identity"
}

// negotiator 1.x's `preferred` option (not in its 0.6 typings): gzip first on a tie.
const negotiatorPreferred = (header: string | undefined): string => {
  const negotiator = new Negotiator({ headers: { "accept-encoding": header } })
  const found: unknown = Reflect.apply(negotiator.encodings, negotiator, [["gzip", "identity"], {
    preferred: ["gzip"]
  }])
  return Array.isArray(found) && typeof found[0] === "string" ? found[0] : "identity"
}

const gzipSection = async (): Promise<string> => {
  const rows = [
    "| Accept-Encoding | expected | Sluice | negotiator | negotiator, gzip preferred | note |",
    "|---|---|---|---|---|---|"
  ]
  // answers unlike the expected one, by the kind of case
  const off = { ours: { rfc: 0, invalid: 0, open: 0 }, negotiator: { rfc: 0, invalid: 0, open: 0 } }
  for (const [header, expected, note] of acceptEncodings) {
    const ours = HttpCompression.negotiate(header)
    const theirs = negotiatorEncoding(header)
    const preferred = negotiatorPreferred(header)
    const kind = note?.startsWith("open") === true ? "open" : note === "invalid q-value" ? "invalid" : "rfc"
    if (ours !== expected) off.ours[kind]++
    if (theirs !== expected) off.negotiator[kind]++
    const open = kind === "open"
    const mark = (answer: string) => (answer === expected || open ? answer : `**${answer}**`)
    rows.push(
      `| ${header === undefined ? "(none)" : `\`${JSON.stringify(header).slice(1, -1)}\``} | ${expected} | ${
        mark(ours)
      } | ${mark(theirs)} | ${mark(preferred)} | ${note ?? ""} |`
    )
  }
  const headers = acceptEncodings.map(([header]) => header)
  const repeat = 200
  const timing = await perOp(headers.length * repeat, {
    name: "negotiator `encodings(['gzip', 'identity'])`",
    run: () => {
      for (let i = 0; i < repeat; i++) for (const header of headers) negotiatorEncoding(header)
    }
  }, {
    name: "Sluice `HttpCompression.negotiate`",
    run: () => {
      for (let i = 0; i < repeat; i++) for (const header of headers) HttpCompression.negotiate(header)
    }
  })
  return [
    `\n## gzip negotiation: ${acceptEncodings.length} Accept-Encoding headers`,
    "",
    `Answers unlike the expected one (in bold): where RFC 9110 decides, Sluice ${off.ours.rfc}, negotiator ${off.negotiator.rfc}; on invalid q-values, Sluice ${off.ours.invalid}, negotiator ${off.negotiator.invalid} (it takes \`q=1.5\`, \`q=0.1234\` and \`q=\` as gzip); in open cases (not counted as wrong) negotiator differs ${off.negotiator.open} time(s).`,
    "",
    ...rows,
    "",
    "| case | µs per header |",
    "|---|---:|",
    ...timing.rows,
    "",
    `Sluice is ${timing.ratio} negotiator's speed (wall / CPU time, rounds alternated, medians).`
  ].join("\n")
}

// ---------------------------------------------------------------------------------
// 3. Page tokens

const tokenSection = async (): Promise<string> => {
  const key = ViewerToken.deriveKey(["token-alpha", "token-beta"])
  const hmacKey = await crypto.subtle.importKey("raw", key.bytes, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify"
  ])
  const expiresAt = Date.now() + 3_600_000
  const ours = ViewerToken.sign(key, { expiresAt, scope: "read" })
  const jwt = () =>
    new SignJWT({ scope: "read" }).setProtectedHeader({ alg: "HS256" }).setExpirationTime(Math.floor(expiresAt / 1000))
      .sign(hmacKey)
  const theirs = await jwt()
  const verified = await jwtVerify(theirs, hmacKey, { algorithms: ["HS256"] })
  if (verified.payload["scope"] !== "read") throw new Error("jose did not verify its own token")
  const n = 2000
  const sign = await perOp(n, {
    name: "jose `SignJWT` HS256 (WebCrypto key)",
    run: async () => {
      for (let i = 0; i < n; i++) await jwt()
    }
  }, {
    name: "Sluice `ViewerToken.sign`",
    run: () => {
      for (let i = 0; i < n; i++) ViewerToken.sign(key, { expiresAt, scope: "read" })
    }
  })
  const verify = await perOp(n, {
    name: "jose `jwtVerify` HS256",
    run: async () => {
      for (let i = 0; i < n; i++) await jwtVerify(theirs, hmacKey, { algorithms: ["HS256"] })
    }
  }, {
    name: "Sluice `ViewerToken.verify` (run as an Effect)",
    run: () => {
      for (let i = 0; i < n; i++) Effect.runSync(ViewerToken.verify(key, ours))
    }
  })
  // What the viewer page would ship to read the scope: jose's decoder, bundled for a browser.
  const bundled = await build({
    stdin: {
      contents: "import { decodeJwt } from 'jose'; console.log(decodeJwt(location.hash).scope)",
      resolveDir: "."
    },
    bundle: true,
    minify: true,
    write: false,
    platform: "browser",
    format: "iife",
    logLevel: "silent"
  })
  const decoderBytes = bundled.outputFiles[0]!.contents.length
  return [
    "\n## Page tokens: `v1.<expiresAt>.<scope>.<mac>` against an HS256 JWT with the same claims",
    "",
    `Token size: Sluice ${ours.length} characters (\`${ours.slice(0, 24)}…\`), jose ${theirs.length} (\`${
      theirs.slice(0, 24)
    }…\`). In a browser, the viewer reads the scope as the token's third dot-separated field; a JWT's scope is base64url JSON (jose's \`decodeJwt\` bundled for a browser: ${
      (decoderBytes / 1024).toFixed(1)
    } KiB minified; decoded JWT payload: \`${JSON.stringify(decodeJwt(theirs))}\`).`,
    "",
    "| case | µs per token |",
    "|---|---:|",
    ...sign.rows,
    ...verify.rows,
    "",
    `Signing: Sluice ${sign.ratio} jose's speed; verifying: ${verify.ratio} (wall / CPU time, rounds alternated, medians; jose is asynchronous, WebCrypto).`
  ].join("\n")
}

// ---------------------------------------------------------------------------------
// 4. The webhook address guard

const strict: WebhookPolicy = { loopbackHttp: false, allowHosts: [] }

/** Webhook hosts: a literal address, or a name with the addresses it resolves to. */
const webhookCases: ReadonlyArray<
  readonly [host: string, resolvesTo: ReadonlyArray<string> | undefined, expected: "refuse" | "allow", why: string]
> = [
  ["127.0.0.1", undefined, "refuse", "loopback"],
  ["10.1.2.3", undefined, "refuse", "private"],
  ["172.16.0.1", undefined, "refuse", "private"],
  ["192.168.1.1", undefined, "refuse", "private"],
  ["100.64.0.1", undefined, "refuse", "shared (CGN)"],
  ["169.254.169.254", undefined, "refuse", "link-local (cloud metadata)"],
  ["0.0.0.0", undefined, "refuse", "unspecified: connects to this host"],
  ["[::]", undefined, "refuse", "unspecified"],
  ["[::1]", undefined, "refuse", "loopback"],
  ["[fe80::1]", undefined, "refuse", "link-local"],
  ["[fd12:3456::1]", undefined, "refuse", "unique-local"],
  ["[fec0::1]", undefined, "refuse", "site-local"],
  ["[::ffff:127.0.0.1]", undefined, "refuse", "IPv4-mapped loopback"],
  ["[::ffff:a9fe:a9fe]", undefined, "refuse", "IPv4-mapped link-local"],
  ["[64:ff9b::a9fe:a9fe]", undefined, "refuse", "NAT64 of link-local"],
  ["[2002:a00:1::]", undefined, "refuse", "6to4 of private"],
  ["[::7f00:1]", undefined, "refuse", "IPv4-compatible loopback"],
  ["[1::1]", undefined, "refuse", "not global unicast (unassigned)"],
  ["8.8.8.8", undefined, "allow", "public"],
  ["[2606:4700::1111]", undefined, "allow", "public"],
  ["[::ffff:8.8.8.8]", undefined, "allow", "IPv4-mapped public"],
  ["[64:ff9b::808:808]", undefined, "allow", "NAT64 of public (an IPv6-only host behind DNS64)"],
  ["[2002:808:808::1]", undefined, "allow", "6to4 of public"],
  ["hooks.example", ["93.184.216.34"], "allow", "public name"],
  ["hooks.example", ["10.0.0.5"], "refuse", "name to private"],
  ["hooks.example", ["93.184.216.34", "127.0.0.1"], "refuse", "name to public and loopback"],
  ["hooks.example", ["::ffff:10.0.0.5"], "refuse", "name to mapped private"],
  ["hooks.example", ["169.254.169.254"], "refuse", "name to link-local"],
  ["hooks.example", ["64:ff9b::5db8:d822"], "allow", "name through DNS64 (IPv6-only host)"]
]

const found = (addresses: ReadonlyArray<string>): Array<LookupAddress> =>
  addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))

/** A resolver that answers `addresses` for any name, as Sluice's guarded lookup calls it. */
const fakeResolve = (addresses: ReadonlyArray<string>): Resolve => (_hostname, _options, callback) =>
  callback(null, found(addresses))

/** The same as a socket's `lookup`, as request-filtering-agent wraps it. */
const fakeLookup = (addresses: ReadonlyArray<string>): LookupFunction => (_hostname, options, callback) => {
  const all = found(addresses)
  if (options.all === true) callback(null, all)
  else callback(null, all[0]!.address, all[0]!.family)
}

/** Whether a connection through `agent` to `host` is refused before it is opened. */
const agentRefuses = (
  agent: http.Agent,
  host: string,
  lookup: LookupFunction | undefined
): Promise<boolean> =>
  new Promise((resolve) => {
    let settled = false
    const settle = (refused: boolean) => {
      if (!settled) resolve(refused)
      settled = true
    }
    const options = {
      host: host.replace(/^\[|\]$/g, ""),
      port: 9,
      ...(lookup === undefined ? {} : { lookup })
    }
    // `createConnection` is Node's agent hook, the one request-filtering-agent overrides
    // (request-filtering-agent calls back with its refusal; Node's own agent calls back
    // on connecting, with no argument)
    const made = agent.createConnection(options, (error) => {
      settle(error instanceof Error)
    })
    if (!(made instanceof Socket)) return settle(false)
    const socket = made
    socket.on("error", (error: NodeJS.ErrnoException) => {
      settle(
        /not allowed|private|loopback|link-local/i.test(error.message) &&
          error.code !== "ECONNREFUSED" && error.code !== "ENETUNREACH"
      )
    })
    // passed: Node connects on the next tick, and the socket is closed after that
    const passed = () => {
      settle(false)
      setImmediate(() => socket.destroy())
    }
    socket.on("lookup", (error: Error | null) => {
      if (error === null) passed()
    })
    socket.on("connectionAttempt", passed)
    socket.on("connect", passed)
    setTimeout(() => {
      settle(false)
      socket.destroy()
    }, 200).unref()
    if (lookup === undefined && !socket.destroyed) {
      // a literal the agent let through: Node connects without a lookup
      setImmediate(() => {
        settle(false)
        socket.destroy()
      })
    }
  })

const oursRefuses = (host: string, resolvesTo: ReadonlyArray<string> | undefined): Promise<boolean> =>
  agentRefuses(
    new GuardedHttpAgent(strict),
    host,
    resolvesTo === undefined ? undefined : guardedLookup(strict, fakeResolve(resolvesTo))
  )

const libraryRefuses = (host: string, resolvesTo: ReadonlyArray<string> | undefined): Promise<boolean> =>
  agentRefuses(new RequestFilteringHttpAgent(), host, resolvesTo === undefined ? undefined : fakeLookup(resolvesTo))

/** A receiver on this host: answers 200, or redirects `/redirect` to `location`. */
const receiver = (location: () => string) =>
  Effect.acquireRelease(
    Effect.callback<http.Server>((resume) => {
      const server = http.createServer((request, response) => {
        if (request.url === "/redirect") response.writeHead(302, { location: location() }).end()
        else response.writeHead(200, { "content-type": "application/json" }).end("{\"done\":true}")
      })
      // every address of the host, so that 127.0.0.2 reaches it too
      server.listen(0, () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.sync(() => server.close())
  )

/** The outcome of a POST through a client layer: its status, or why it failed. */
const post = (url: string, client: Layer.Layer<HttpClient.HttpClient>, followRedirects: boolean) =>
  Effect.gen(function*() {
    const base = yield* HttpClient.HttpClient
    const used = followRedirects ? HttpClient.followRedirects(base) : base
    const response = yield* used.execute(HttpClientRequest.post(url))
    return `${response.status}`
  }).pipe(
    Effect.scoped,
    Effect.catch((error) => {
      // the socket's error when there is one: the guard's refusal, or the network's
      const cause = "cause" in error.reason ? error.reason.cause : undefined
      const text = cause instanceof Error ? cause.message : error.message
      return Effect.succeed(`failed: ${text.split("\n")[0]!.slice(0, 110)}`)
    }),
    Effect.provide(client)
  )

const libraryClient = filteringClient

const oursClient = webhookClient

const ssrfSection = async (): Promise<string> => {
  const rows = [
    "| host | resolves to | should | Sluice | request-filtering-agent | what it is |",
    "|---|---|---|---|---|---|"
  ]
  let oursWrong = 0
  let libraryWrong = 0
  for (const [host, resolvesTo, expected, why] of webhookCases) {
    const ours = (await oursRefuses(host, resolvesTo)) ? "refuse" : "allow"
    const library = (await libraryRefuses(host, resolvesTo)) ? "refuse" : "allow"
    if (ours !== expected) oursWrong++
    if (library !== expected) libraryWrong++
    const mark = (answer: string) => (answer === expected ? answer : `**${answer}**`)
    rows.push(
      `| \`${host}\` | ${resolvesTo === undefined ? "(literal)" : resolvesTo.join(", ")} | ${expected} | ${
        mark(ours)
      } | ${mark(library)} | ${why} |`
    )
  }
  // Plugged into the same Effect client (node:http), against a real receiver on loopback.
  const plugged = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    let port = 0
    const server = yield* receiver(() => `http://127.0.0.2:${port}/`)
    port = (server.address() as AddressInfo).port
    const direct = `http://127.0.0.1:${port}/`
    const redirect = `http://127.0.0.1:${port}/redirect`
    const loopbackAllowed = libraryClient({ allowIPAddressList: ["127.0.0.1"] })
    const oursLoopback = oursClient({ loopbackHttp: false, allowHosts: [`127.0.0.1:${port}`] })
    return [
      [
        "POST to 127.0.0.1, default policy",
        yield* post(direct, oursClient(strict), false),
        yield* post(direct, libraryClient({}), false)
      ],
      [
        "POST to 127.0.0.1, the receiver allowed",
        yield* post(direct, oursLoopback, false),
        yield* post(direct, loopbackAllowed, false)
      ],
      [
        "302 from the allowed receiver to 127.0.0.2, redirects followed",
        yield* post(redirect, oursLoopback, true),
        yield* post(redirect, loopbackAllowed, true)
      ],
      [
        "302 to 127.0.0.2, as webhooks are posted (no redirect followed)",
        yield* post(redirect, oursLoopback, false),
        yield* post(redirect, loopbackAllowed, false)
      ]
    ]
  })))
  // An allow-list entry in CIDR form meeting an IPv4-mapped address (ipaddr.js cannot
  // match an IPv6 address against an IPv4 range): what request-filtering-agent does.
  const warnings: Array<string> = []
  const warn = console.warn
  console.warn = (...args: Array<unknown>) => void warnings.push(String(args[0]).split("\n")[0]!)
  const mappedRefused = await agentRefuses(
    new RequestFilteringHttpAgent({ allowIPAddressList: ["127.0.0.0/8"] }),
    "[::ffff:127.0.0.1]",
    undefined
  )
  console.warn = warn
  return [
    `\n## Webhook address guard: ${webhookCases.length} hosts, strict policy (no allow-list, no loopback)`,
    "",
    `Answers off the table: Sluice ${oursWrong}, request-filtering-agent ${libraryWrong} (in bold). Each one's agent opens the connection (\`createConnection\`): a literal host checked there, a name through the agent's lookup.`,
    "",
    ...rows,
    "",
    "Both plugged into the same Effect client (`NodeHttpClient`, node:http agents; request-filtering-agent through the `HttpAgent` service), a real receiver on 127.0.0.1:",
    "",
    "| request | Sluice | request-filtering-agent |",
    "|---|---|---|",
    ...plugged.map(([what, ours, library]) => `| ${what} | ${ours} | ${library} |`),
    "",
    `request-filtering-agent with \`allowIPAddressList: ["127.0.0.0/8"]\` and a connection to \`::ffff:127.0.0.1\`: ${
      mappedRefused ? "refused" : "allowed"
    }, ${warnings.length} console warning(s)${warnings.length > 0 ? ` (\`${warnings[0]}\`)` : ""}.`
  ].join("\n")
}

// ---------------------------------------------------------------------------------
// 5. UI message stream encoding

const runId = "5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69"
const uiEvent = (payload: StreamEvent.Payload, i: number): StreamEvent.StreamEvent =>
  StreamEvent.envelope({ runId }, payload, `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`, i)

/** A turn of reasoning, text deltas, a tool call and its output, as StreamEvents. */
const uiTurn = (deltas: number): Array<StreamEvent.StreamEvent> => {
  const payloads: Array<StreamEvent.Payload> = [
    {
      type: "response_start",
      response_id: runId,
      turn_id: runId,
      thread_id: runId,
      model_id: "bench",
      provider_id: "bench",
      created_at: 1
    },
    { type: "item_start", item_id: "r0", item_type: "reasoning" }
  ]
  const words = ["stream", " token", " delta", " the", " of", " événement", " \"quoted\"", " ☂", "\n"]
  let reasoning = ""
  for (let i = 0; i < deltas / 8; i++) {
    reasoning += words[i % words.length]!
    payloads.push({ type: "item_delta", item_id: "r0", delta_content: words[i % words.length]! })
  }
  payloads.push(
    { type: "item_done", item_id: "r0", final_item: { type: "reasoning", id: "r0", content: reasoning } },
    { type: "item_start", item_id: "m0", item_type: "message" }
  )
  let text = ""
  for (let i = 0; i < deltas; i++) {
    text += words[i % words.length]!
    payloads.push({ type: "item_delta", item_id: "m0", delta_content: words[i % words.length]! })
  }
  payloads.push(
    { type: "item_done", item_id: "m0", final_item: { type: "message", id: "m0", content: text, origin: "agent" } },
    { type: "item_start", item_id: "c0", item_type: "function_call", name: "search" },
    { type: "item_delta", item_id: "c0", delta_content: "{\"query\":" },
    { type: "item_delta", item_id: "c0", delta_content: "\"sluice\"}" },
    {
      type: "item_done",
      item_id: "c0",
      final_item: {
        type: "function_call",
        id: "c0",
        call_id: "call_0",
        name: "search",
        arguments: "{\"query\":\"sluice\"}"
      }
    },
    {
      type: "item_done",
      item_id: "o0",
      final_item: { type: "function_call_output", id: "o0", call_id: "call_0", output: "{\"hits\":3}", success: true }
    },
    { type: "response_done", response_id: runId, status: "complete", finish_reason: "stop" }
  )
  return payloads.map(uiEvent)
}

const drain = async (stream: ReadableStream<string>): Promise<Array<string>> => {
  const out: Array<string> = []
  const reader = stream.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return out
    out.push(value)
  }
}

const fromArray = <A>(items: ReadonlyArray<A>): ReadableStream<A> => {
  let i = 0
  return new ReadableStream<A>({
    pull(controller) {
      if (i < items.length) controller.enqueue(items[i++]!)
      else controller.close()
    }
  })
}

// The chunks as the `ai` package types them (the same objects: ours are a subset).
const asAiChunks = (chunks: ReadonlyArray<UiMessageStream.UiMessageChunk>): ReadonlyArray<UIMessageChunk> => chunks

const uiSection = async (): Promise<string> => {
  const events = uiTurn(20_000)
  let state = UiMessageStream.initial
  const chunks: Array<UiMessageStream.UiMessageChunk> = []
  for (const event of events) {
    const [next, made] = UiMessageStream.step(state, event)
    state = next
    chunks.push(...made)
  }
  const aiChunks = asAiChunks(chunks)
  const ours = () => {
    const out: Array<string> = []
    for (const chunk of chunks) {
      out.push(
        chunk.type === "finish" || chunk.type === "abort"
          ? UiMessageStream.encode(chunk) + UiMessageStream.done
          : UiMessageStream.encode(chunk)
      )
    }
    return out
  }
  const oursInStream = () =>
    Effect.runPromise(Stream.runCollect(
      Stream.fromIterable(chunks).pipe(
        Stream.map((chunk) =>
          chunk.type === "finish" || chunk.type === "abort"
            ? UiMessageStream.encode(chunk) + UiMessageStream.done
            : UiMessageStream.encode(chunk)
        )
      )
    ))
  const jsonToSse = () => drain(fromArray(aiChunks).pipeThrough(new JsonToSseTransformStream()))
  const created = () =>
    drain(
      createUIMessageStream({
        execute: ({ writer }) => {
          for (const chunk of aiChunks) writer.write(chunk)
        }
      }).pipeThrough(new JsonToSseTransformStream())
    )
  const oursText = ours().join("")
  const sseText = (await jsonToSse()).join("")
  const createdText = (await created()).join("")
  const sameBytes = (other: string) =>
    other === oursText
      ? "identical"
      : `different (${Buffer.byteLength(other)} bytes against ${Buffer.byteLength(oursText)})`
  const n = chunks.length
  const vsSse = await perOp(n, { name: "`ai` JsonToSseTransformStream (web streams)", run: jsonToSse }, {
    name: "Sluice `UiMessageStream.encode`, in a loop",
    run: ours
  })
  const vsCreated = await perOp(n, {
    name: "`ai` createUIMessageStream + JsonToSseTransformStream",
    run: created
  }, { name: "Sluice `encode` in an Effect `Stream.map` (as served)", run: oursInStream })
  return [
    `\n## UI message stream encoding: ${n.toLocaleString("en-US")} chunks (${
      (Buffer.byteLength(oursText) / 1e6).toFixed(1)
    } MB of SSE) from ${events.length.toLocaleString("en-US")} StreamEvents`,
    "",
    `Bytes: JsonToSseTransformStream ${sameBytes(sseText)}; createUIMessageStream + JsonToSseTransformStream ${
      sameBytes(createdText)
    } to Sluice's.`,
    "",
    "| case | µs per chunk |",
    "|---|---:|",
    ...vsSse.rows,
    ...vsCreated.rows,
    "",
    `Sluice's loop is ${vsSse.ratio} JsonToSseTransformStream's speed; in an Effect Stream, ${vsCreated.ratio} createUIMessageStream + JsonToSseTransformStream (wall / CPU time, rounds alternated, medians).`
  ].join("\n")
}

/** Runs every comparison and returns the report. */
export const run = async (): Promise<string> => {
  const sections: Array<string> = []
  for (const section of [prometheusSection, gzipSection, tokenSection, ssrfSection, uiSection]) {
    sections.push(await section())
  }
  return sections.join("\n")
}

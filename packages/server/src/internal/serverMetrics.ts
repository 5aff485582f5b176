/**
 * The server's own metrics: requests by route and status, open SSE readers, and the
 * size of the snapshots it serves. The turn metrics (`TurnMetrics`) are the redis
 * package's.
 *
 * @internal
 */
import type { TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Stream from "effect/Stream"

// The methods counted by name; any other is counted as `other`, so that a client
// cannot add a series per method it makes up.
const knownMethods = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT"])

/**
 * The `method` label of a request: its method when it is one of HTTP's (RFC 9110 and
 * `PATCH`), else `other`.
 *
 * @internal
 */
export const methodLabel = (method: string): string => knownMethods.has(method) ? method : "other"

/**
 * The `status` label of a response: its status code from 100 to 599, else `other`.
 *
 * @internal
 */
export const statusLabel = (status: number): string =>
  Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : "other"

// Each series' metric is made once, on its first request: one registry entry per label
// set, and no attributes merged or series key computed per request.
const requestCounters = new Map<string, Metric.Counter<number>>()
const durationHistograms = new Map<string, Metric.Histogram<number>>()

/**
 * The counter of requests with a method, route and status (labels bounded by
 * `methodLabel` and `statusLabel`; `route` is one of `routeOf`'s), the same metric for
 * the same labels.
 *
 * @internal
 */
export const httpRequests = (method: string, route: string, status: number): Metric.Counter<number> => {
  const attributes = { method: methodLabel(method), route, status: statusLabel(status) }
  const key = `${attributes.method} ${attributes.status} ${route}`
  const known = requestCounters.get(key)
  if (known !== undefined) return known
  const made = Metric.counter("sluice_http_requests_total", {
    description: "HTTP requests, by method, route and status",
    attributes
  })
  requestCounters.set(key, made)
  return made
}

/**
 * The histogram of request durations of a route, the same metric for the same route.
 *
 * @internal
 */
export const httpDuration = (route: string): Metric.Histogram<number> => {
  const known = durationHistograms.get(route)
  if (known !== undefined) return known
  const made = Metric.histogram("sluice_http_request_duration_seconds", {
    description: "Seconds from a request to its response's head (an SSE stream's length is not counted)",
    boundaries: Metric.exponentialBoundaries({ start: 0.001, factor: 2, count: 14 }),
    attributes: { route }
  })
  durationHistograms.set(route, made)
  return made
}

const sseReaders = {
  events: Metric.gauge("sluice_sse_readers", {
    description: "Open SSE streams, by stream",
    attributes: { stream: "events" }
  }),
  upserts: Metric.gauge("sluice_sse_readers", {
    description: "Open SSE streams, by stream",
    attributes: { stream: "upserts" }
  })
} as const

/** @internal */
export const snapshotBytes = Metric.histogram("sluice_snapshot_bytes", {
  description: "Bytes of the turn snapshots served",
  boundaries: Metric.exponentialBoundaries({ start: 256, factor: 4, count: 10 })
})

/**
 * An SSE feed observed: counted in `sluice_sse_readers` while it is open, and run in a
 * span `sluice.sse` naming the turn and the stream.
 *
 * @internal
 */
export const observeFeed =
  (stream: TurnKeys.TurnStream, turnId: string) => <A, E, R>(body: Stream.Stream<A, E, R>): Stream.Stream<A, E, R> =>
    Stream.unwrap(
      Effect.as(
        Effect.acquireRelease(Metric.modify(sseReaders[stream], 1), () => Metric.modify(sseReaders[stream], -1)),
        body
      )
    ).pipe(
      Stream.withSpan("sluice.sse", {
        kind: "server",
        attributes: { "sluice.turn_id": turnId, "sluice.stream": stream }
      })
    )

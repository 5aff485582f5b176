/**
 * The server's own metrics: requests by route and status, open SSE readers, and the
 * size of the snapshots it serves. The turn metrics (`TurnMetrics`) are the redis
 * package's.
 *
 * @internal
 */
import type { TurnKeys } from "@sluice/redis"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Stream from "effect/Stream"

/** @internal */
export const httpRequests = (method: string, route: string, status: number): Metric.Counter<number> =>
  Metric.counter("sluice_http_requests_total", {
    description: "HTTP requests, by method, route and status",
    attributes: { method, route, status: String(status) }
  })

/** @internal */
export const httpDuration = (route: string): Metric.Histogram<number> =>
  Metric.histogram("sluice_http_request_duration_seconds", {
    description: "Seconds from a request to its response's head (an SSE stream's length is not counted)",
    boundaries: Metric.exponentialBoundaries({ start: 0.001, factor: 2, count: 14 }),
    attributes: { route }
  })

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

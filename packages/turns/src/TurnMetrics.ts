/**
 * The metrics of turns, kept with Effect's `Metric` (one registry per process): what
 * the pipeline started and ended, what reached each stream of a turn, how long Redis
 * took to confirm it, and the writes and leases that went wrong. The producer (the
 * pipeline, the publisher) and the readers (the server) update the same metrics, so a
 * process running both reports them once. `Metric.snapshot` reads them all.
 *
 * @since 0.3.0
 */
import * as Metric from "effect/Metric"
import type * as TurnKeys from "./TurnKeys.js"

// One metric per attribute value, made once with its attribute (not wrapped by
// `Metric.withAttributes`, which adds the attributes to the context at every update),
// so that the merged attributes and series key of each are computed once.
/** A counter of numbers, as every counter here is. */
type Counter = Metric.Counter<number>

const perTag = <K extends string, M>(make: (value: K) => M) => {
  const made = new Map<K, M>()
  return (value: K): M => {
    const known = made.get(value)
    if (known !== undefined) return known
    const metric = make(value)
    made.set(value, metric)
    return metric
  }
}

/**
 * Turns the pipeline started.
 *
 * @since 0.3.0
 * @category metrics
 */
export const turnsStarted = Metric.counter("sluice_turns_started_total", { description: "Turns the pipeline started" })

/**
 * Turns refused, by the `limit` of the pipeline they met (`maxTurns`, `maxLagMs`; see
 * `TurnAdmission` in `@sluice/pipeline`).
 *
 * @since 0.3.0
 * @category metrics
 */
export const turnsRefused: (limit: string) => Counter = perTag((limit: string) =>
  Metric.counter("sluice_turns_refused_total", {
    description: "Turns refused past a limit of the pipeline, by limit",
    attributes: { limit }
  })
)

/**
 * Turns running now in this process.
 *
 * @since 0.3.0
 * @category metrics
 */
export const turnsActive = Metric.gauge("sluice_turns_active", { description: "Turns running in this process" })

/**
 * How late the process runs its timers, in seconds, as the lag probe of a pipeline
 * with `maxLagMs` measures it every 100 ms (`TurnAdmission` in `@sluice/pipeline`);
 * absent without one.
 *
 * @since 0.3.0
 * @category metrics
 */
export const processLag = Metric.gauge("sluice_process_lag_seconds", {
  description: "How late the process runs its timers (the pipeline's lag probe, with maxLagMs)"
})

/**
 * Turns ended, by `status` (`complete`, `error`, `aborted`, `cancelled`, ...).
 *
 * @since 0.3.0
 * @category metrics
 */
export const turnsEnded: (status: string) => Counter = perTag((status: string) =>
  Metric.counter("sluice_turns_ended_total", { description: "Turns ended, by status", attributes: { status } })
)

/**
 * StreamEvents the pipeline handled, by payload `type`.
 *
 * @since 0.3.0
 * @category metrics
 */
export const events: (type: string) => Counter = perTag((type: string) =>
  Metric.counter("sluice_events_total", { description: "StreamEvents of turns, by payload type", attributes: { type } })
)

/**
 * Entries Redis confirmed, by `stream` (`events` = Stream A, `upserts` = Stream B).
 *
 * @since 0.3.0
 * @category metrics
 */
export const entries: (stream: TurnKeys.TurnStream) => Counter = perTag((stream: TurnKeys.TurnStream) =>
  Metric.counter("sluice_stream_entries_total", {
    description: "Entries written to a turn's stream",
    attributes: { stream }
  })
)

/**
 * Seconds from sending a batch of entries to Redis confirming it, by `stream`.
 *
 * @since 0.3.0
 * @category metrics
 */
export const publishLatency: (stream: TurnKeys.TurnStream) => Metric.Histogram<number> = perTag((
  stream: TurnKeys.TurnStream
) =>
  Metric.histogram("sluice_publish_latency_seconds", {
    description: "Seconds for Redis to confirm a batch of entries",
    boundaries: Metric.exponentialBoundaries({ start: 0.0005, factor: 2, count: 14 }),
    attributes: { stream }
  })
)

/**
 * Writes that found Redis unavailable (each is retried while the retry policy allows),
 * by `stream`.
 *
 * @since 0.3.0
 * @category metrics
 */
export const publishRetries: (stream: TurnKeys.TurnStream) => Counter = perTag((stream: TurnKeys.TurnStream) =>
  Metric.counter("sluice_publish_retries_total", {
    description: "Writes that found Redis unavailable",
    attributes: { stream }
  })
)

/**
 * Producer leases found lapsed: by the producer itself (`side="producer"`, its turn
 * stops) or by a reader that then ended the turn `producer_lost` (`side="reader"`).
 *
 * @since 0.3.0
 * @category metrics
 */
export const leaseExpiries: (side: "producer" | "reader") => Counter = perTag((side: "producer" | "reader") =>
  Metric.counter("sluice_lease_expiries_total", { description: "Producer leases found lapsed", attributes: { side } })
)

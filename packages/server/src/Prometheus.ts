/**
 * The process's Effect metrics (`Metric.snapshot`) as Prometheus text exposition
 * format 0.0.4, as `GET /metrics` serves them: counters and gauges as they are,
 * histograms as cumulative `_bucket{le=...}` series with `_sum` and `_count`,
 * frequencies as one counter series per value, summaries as quantiles.
 *
 * A thin facade over Effect's own renderer (`effect/observability/PrometheusMetrics`):
 * this module only orders the metric families by name, so that the output is stable,
 * and renders a given list of snapshots (Effect's renders its registry). Names and
 * label keys are made valid as Effect makes them (invalid characters become `_`, runs
 * of `_` are collapsed, a trailing `_` dropped), and the attributes `unit` and
 * `time_unit` are not labels.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as PrometheusMetrics from "effect/observability/PrometheusMetrics"

/**
 * The content type of the text format.
 *
 * @since 0.2.0
 * @category constants
 */
export const contentType = "text/plain; version=0.0.4; charset=utf-8"

const ignore = (): void => {}

/**
 * Renders metric snapshots as Prometheus text: one `# HELP` / `# TYPE` per metric name,
 * then its series; names and label keys made valid, label values escaped. Sorted by
 * name, so the output is stable. Effect's `PrometheusMetrics` renders them, from a
 * registry holding exactly these snapshots.
 *
 * @since 0.2.0
 * @category rendering
 */
export const render = (snapshots: ReadonlyArray<Metric.Metric.Snapshot>): string => {
  const sorted = [...snapshots].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const registry: Metric.MetricRegistry = new Map()
  sorted.forEach((snapshot, i) => {
    registry.set(String(i), {
      id: snapshot.id,
      type: snapshot.type,
      description: snapshot.description,
      attributes: snapshot.attributes,
      hooks: { get: () => snapshot.state, update: ignore, modify: ignore }
    })
  })
  return PrometheusMetrics.formatUnsafe(Context.make(Metric.MetricRegistry, registry))
}

/**
 * The text of every metric of the process now.
 *
 * @since 0.2.0
 * @category rendering
 */
export const text: Effect.Effect<string> = Effect.map(Metric.snapshot, render)

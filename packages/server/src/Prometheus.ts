/**
 * The process's Effect metrics (`Metric.snapshot`) as Prometheus text exposition
 * format 0.0.4, as `GET /metrics` serves them: counters and gauges as they are,
 * histograms as cumulative `_bucket{le=...}` series with `_sum` and `_count`,
 * frequencies as one counter series per value, summaries as quantiles.
 *
 * A thin facade over Effect's own renderer (`effect/observability/PrometheusMetrics`):
 * this module only orders the metric families by name, so that the output is stable,
 * keeps each series once (`series`), and renders a given list of snapshots (Effect's
 * renders its registry). Names and
 * label keys are made valid as Effect makes them (invalid characters become `_`, runs
 * of `_` are collapsed, a trailing `_` dropped), and the attributes `unit` and
 * `time_unit` are not labels.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as PrometheusMetrics from "effect/observability/PrometheusMetrics"

/**
 * The content type of the text format.
 *
 * @since 0.1.0
 * @category constants
 */
export const contentType = "text/plain; version=0.0.4; charset=utf-8"

const ignore = (): void => {}

// The series a snapshot is: its name and its labels (those the renderer writes).
const seriesKey = (snapshot: Metric.Metric.Snapshot): string =>
  JSON.stringify([
    snapshot.id,
    Object.entries(snapshot.attributes ?? {})
      .filter(([key]) => key !== "unit" && key !== "time_unit")
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  ])

// Two snapshots of one series: counters add up (of one kind of number); of anything
// else, the first is kept.
const merge = (first: Metric.Metric.Snapshot, next: Metric.Metric.Snapshot): Metric.Metric.Snapshot => {
  if (first.type !== "Counter" || next.type !== "Counter") return first
  const [a, b] = [first.state.count, next.state.count]
  if (typeof a === "number" && typeof b === "number") return { ...first, state: { ...first.state, count: a + b } }
  if (typeof a === "bigint" && typeof b === "bigint") return { ...first, state: { ...first.state, count: a + b } }
  return first
}

/**
 * The snapshots as Prometheus may read them: one per series (a name and a label set,
 * which Effect keeps apart when their descriptions differ: counters of one series add
 * up, of anything else the first is kept), and one type per name (a snapshot whose
 * type differs from its name's first is left out), sorted by name.
 *
 * @since 0.3.0
 * @category rendering
 */
export const series = (snapshots: ReadonlyArray<Metric.Metric.Snapshot>): ReadonlyArray<Metric.Metric.Snapshot> => {
  const sorted = [...snapshots].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const types = new Map<string, Metric.Metric.Type>()
  const kept = new Map<string, Metric.Metric.Snapshot>()
  for (const snapshot of sorted) {
    const type = types.get(snapshot.id)
    if (type === undefined) types.set(snapshot.id, snapshot.type)
    else if (type !== snapshot.type) continue
    const key = seriesKey(snapshot)
    const known = kept.get(key)
    kept.set(key, known === undefined ? snapshot : merge(known, snapshot))
  }
  return [...kept.values()]
}

/**
 * Renders metric snapshots as Prometheus text: one `# HELP` / `# TYPE` per metric name,
 * then its series, each once (`series`); names and label keys made valid, label values
 * escaped. Sorted by name, so the output is stable. Effect's `PrometheusMetrics`
 * renders them, from a registry holding exactly these snapshots.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (snapshots: ReadonlyArray<Metric.Metric.Snapshot>): string => {
  const registry: Metric.MetricRegistry = new Map()
  series(snapshots).forEach((snapshot, i) => {
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
 * @since 0.1.0
 * @category rendering
 */
export const text: Effect.Effect<string> = Effect.map(Metric.snapshot, render)

/**
 * The process's Effect metrics (`Metric.snapshot`) as Prometheus text exposition
 * format 0.0.4, as `GET /metrics` serves them: counters and gauges as they are,
 * histograms as cumulative `_bucket{le=...}` series with `_sum` and `_count`,
 * frequencies as one counter series per value, summaries as quantiles.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import type * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"

/**
 * The content type of the text format.
 *
 * @since 0.2.0
 * @category constants
 */
export const contentType = "text/plain; version=0.0.4; charset=utf-8"

const sanitizeName = (name: string): string => {
  const cleaned = name.replace(/[^a-zA-Z0-9_:]/g, "_")
  return /^[0-9]/.test(cleaned) ? `_${cleaned}` : cleaned
}

const escapeLabel = (value: string): string => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, "\\\"")

const escapeHelp = (value: string): string => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const formatNumber = (value: number | bigint): string =>
  typeof value === "bigint"
    ? value.toString()
    : Number.isNaN(value)
    ? "NaN"
    : value === Infinity
    ? "+Inf"
    : value === -Infinity
    ? "-Inf"
    : String(value)

type Labels = ReadonlyArray<readonly [string, string]>

const labelText = (labels: Labels): string =>
  labels.length === 0
    ? ""
    : `{${labels.map(([key, value]) => `${sanitizeName(key)}="${escapeLabel(value)}"`).join(",")}}`

const sample = (name: string, labels: Labels, value: number | bigint): string =>
  `${name}${labelText(labels)} ${formatNumber(value)}`

interface Family {
  readonly type: "counter" | "gauge" | "histogram" | "summary"
  readonly help: string | undefined
  readonly lines: Array<string>
}

/**
 * Renders metric pairs as Prometheus text: one `# HELP` / `# TYPE` per metric name,
 * then its series; names and label keys made valid (`[a-zA-Z0-9_:]`), label values
 * escaped. Sorted by name, so the output is stable.
 *
 * @since 0.2.0
 * @category rendering
 */
export const render = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped>): string => {
  const families = new Map<string, Family>()
  const family = (name: string, type: Family["type"], help: string | undefined): Family => {
    const known = families.get(name)
    if (known !== undefined) return known
    const made: Family = { type, help, lines: [] }
    families.set(name, made)
    return made
  }
  for (const pair of pairs) {
    const name = sanitizeName(pair.metricKey.name)
    const help = Option.getOrUndefined(pair.metricKey.description)
    const labels: Labels = pair.metricKey.tags.map((tag) => [tag.key, tag.value] as const)
    const state = pair.metricState
    if (MetricState.isCounterState(state)) {
      family(name, "counter", help).lines.push(sample(name, labels, state.count))
    } else if (MetricState.isGaugeState(state)) {
      family(name, "gauge", help).lines.push(sample(name, labels, state.value))
    } else if (MetricState.isHistogramState(state)) {
      const lines = family(name, "histogram", help).lines
      let sawInfinity = false
      for (const [bound, count] of state.buckets) {
        if (bound === Infinity) sawInfinity = true
        lines.push(sample(`${name}_bucket`, [...labels, ["le", formatNumber(bound)]], count))
      }
      if (!sawInfinity) lines.push(sample(`${name}_bucket`, [...labels, ["le", "+Inf"]], state.count))
      lines.push(sample(`${name}_sum`, labels, state.sum), sample(`${name}_count`, labels, state.count))
    } else if (MetricState.isFrequencyState(state)) {
      const lines = family(name, "counter", help).lines
      for (const [value, count] of state.occurrences) lines.push(sample(name, [...labels, ["key", value]], count))
    } else if (MetricState.isSummaryState(state)) {
      const lines = family(name, "summary", help).lines
      for (const [quantile, value] of state.quantiles) {
        if (Option.isSome(value)) {
          lines.push(sample(name, [...labels, ["quantile", formatNumber(quantile)]], value.value))
        }
      }
      lines.push(sample(`${name}_sum`, labels, state.sum), sample(`${name}_count`, labels, state.count))
    }
  }
  const out: Array<string> = []
  for (const name of [...families.keys()].sort()) {
    const { help, lines, type } = families.get(name)!
    if (help !== undefined && help !== "") out.push(`# HELP ${name} ${escapeHelp(help)}`)
    out.push(`# TYPE ${name} ${type}`, ...lines)
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`
}

/**
 * The text of every metric of the process now.
 *
 * @since 0.2.0
 * @category rendering
 */
export const text: Effect.Effect<string> = Effect.map(Metric.snapshot, render)

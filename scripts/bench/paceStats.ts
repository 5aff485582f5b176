/**
 * A delay histogram for the live-pace bench: 0.1 ms buckets up to 60 s.
 *
 * @internal
 */
const BUCKETS = 600_000

/** Delays in milliseconds; percentiles to the bucket's upper edge. */
export class Histogram {
  readonly counts = new Uint32Array(BUCKETS + 1)
  total = 0
  max = 0
  add(ms: number) {
    const bucket = Math.min(BUCKETS, Math.max(0, Math.floor(ms * 10)))
    this.counts[bucket]!++
    this.total++
    if (ms > this.max) this.max = ms
  }
  percentile(p: number): number {
    const rank = Math.ceil(this.total * p)
    let seen = 0
    for (let i = 0; i <= BUCKETS; i++) {
      seen += this.counts[i]!
      if (seen >= rank) return (i + 1) / 10
    }
    return this.max
  }
}

/** A duration in milliseconds, to 0.1 ms below 10 ms. */
export const ms = (value: number) => value < 10 ? value.toFixed(1) : Math.round(value).toLocaleString("en-US")

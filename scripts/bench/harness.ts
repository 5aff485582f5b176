/**
 * Timing helpers for the benchmark scripts: warm up, run several rounds, report the
 * median. Wall-clock time is fine here: these are scripts, never tests.
 */
import { performance } from "node:perf_hooks"

/** One measured case. */
export interface Measurement {
  readonly name: string
  readonly seconds: number
  readonly bytes: number
  readonly events: number
}

/** Runs `run` `warmup` times, then `rounds` times, and returns the median duration. */
export const measure = async (
  name: string,
  bytes: number,
  run: () => Promise<number> | number,
  options: { readonly warmup?: number; readonly rounds?: number } = {}
): Promise<Measurement> => {
  let events = 0
  for (let i = 0; i < (options.warmup ?? 5); i++) events = await run()
  const times: Array<number> = []
  for (let i = 0; i < (options.rounds ?? 9); i++) {
    const start = performance.now()
    events = await run()
    times.push((performance.now() - start) / 1000)
  }
  times.sort((a, b) => a - b)
  return { name, seconds: times[Math.floor(times.length / 2)]!, bytes, events }
}

const pad = (text: string, width: number) => text.padEnd(width)

/** Prints measurements as a table with MB/s, events/s and the ratio to `reference`. */
export const report = (title: string, rows: ReadonlyArray<Measurement>, reference: Measurement): string => {
  const lines = [`\n## ${title}`, "", "| case | MB/s | events/s | vs reference |", "|---|---:|---:|---:|"]
  for (const row of rows) {
    const mbs = row.bytes / row.seconds / 1e6
    const eps = row.events / row.seconds
    const ratio = reference.seconds / row.seconds
    lines.push(`| ${pad(row.name, 10)} | ${mbs.toFixed(1)} | ${Math.round(eps).toLocaleString("en-US")} | ${ratio.toFixed(2)}x |`)
  }
  return lines.join("\n")
}

/** Cuts bytes into reads of `size` bytes. */
export const reads = (bytes: Uint8Array, size: number): Array<Uint8Array> => {
  const out: Array<Uint8Array> = []
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size))
  return out
}

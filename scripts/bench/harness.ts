/**
 * Timing helpers for the benchmark scripts: warm up, run several rounds, report the
 * median. Wall-clock time is fine here: these are scripts, never tests.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
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

/** Two cases measured side by side, with CPU time as well as wall time. */
export interface Comparison {
  readonly reference: Measurement
  readonly subject: Measurement
  /** reference / subject, on median wall time */
  readonly wallRatio: number
  /** reference / subject, on median CPU time of this process (steadier on a shared machine) */
  readonly cpuRatio: number
}

const median = (values: Array<number>): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/**
 * Measures two cases in alternating rounds (reference, subject, reference, ...), so a
 * change of load on a shared machine hits both alike, and reports wall and CPU-time
 * medians.
 */
export const compare = async (
  bytes: number,
  reference: { readonly name: string; readonly run: () => Promise<number> | number },
  subject: { readonly name: string; readonly run: () => Promise<number> | number },
  options: { readonly warmup?: number; readonly rounds?: number } = {}
): Promise<Comparison> => {
  const wall = { reference: [] as Array<number>, subject: [] as Array<number> }
  const cpu = { reference: [] as Array<number>, subject: [] as Array<number> }
  const events = { reference: 0, subject: 0 }
  const once = async (which: "reference" | "subject", record: boolean) => {
    const run = which === "reference" ? reference.run : subject.run
    const startCpu = process.cpuUsage()
    const start = performance.now()
    events[which] = await run()
    const seconds = (performance.now() - start) / 1000
    const used = process.cpuUsage(startCpu)
    if (record) {
      wall[which].push(seconds)
      cpu[which].push((used.user + used.system) / 1e6)
    }
  }
  for (let i = 0; i < (options.warmup ?? 3); i++) {
    await once("reference", false)
    await once("subject", false)
  }
  for (let i = 0; i < (options.rounds ?? 9); i++) {
    await once("reference", true)
    await once("subject", true)
  }
  const ref = { name: reference.name, seconds: median(wall.reference), bytes, events: events.reference }
  const sub = { name: subject.name, seconds: median(wall.subject), bytes, events: events.subject }
  return {
    reference: ref,
    subject: sub,
    wallRatio: ref.seconds / sub.seconds,
    cpuRatio: median(cpu.reference) / median(cpu.subject)
  }
}

/** The sentence under a comparison's table. */
export const verdict = (comparison: Comparison, reference: string): string =>
  `Sluice is ${comparison.wallRatio.toFixed(1)}x ${reference}'s speed in wall time and ${
    comparison.cpuRatio.toFixed(1)
  }x in CPU time (rounds alternated; medians).`

const pad = (text: string, width: number) => text.padEnd(width)

/** Prints measurements as a table with MB/s, events/s and the ratio to `reference`. */
export const report = (title: string, rows: ReadonlyArray<Measurement>, reference: Measurement): string => {
  const lines = [`\n## ${title}`, "", "| case | MB/s | events/s | vs reference |", "|---|---:|---:|---:|"]
  for (const row of rows) {
    const mbs = row.bytes / row.seconds / 1e6
    const eps = row.events / row.seconds
    const ratio = reference.seconds / row.seconds
    lines.push(
      `| ${pad(row.name, 10)} | ${mbs.toFixed(1)} | ${Math.round(eps).toLocaleString("en-US")} | ${ratio.toFixed(2)}x |`
    )
  }
  return lines.join("\n")
}

/** Cuts bytes into reads of `size` bytes. */
export const reads = (bytes: Uint8Array, size: number): Array<Uint8Array> => {
  const out: Array<Uint8Array> = []
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size))
  return out
}

const builtCli = "packages/cli/dist/bin.js"

/**
 * How a bench starts `sluice`: as built (`pnpm build`, as it ships) when it is, else
 * its sources under tsx; and which of the two it is, for the report.
 */
export const sluiceCommand = (): { readonly args: ReadonlyArray<string>; readonly how: string } =>
  existsSync(builtCli)
    ? { args: [builtCli], how: "as built" }
    : { args: ["--import", "tsx", "packages/cli/src/bin.ts"], how: "under tsx" }

/** A `/proc/<pid>/status` field in bytes (`VmRSS`, `VmHWM`). */
export const procBytes = (pid: number, field: string): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith(`${field}:`)) ?? ""
  return Number(line.replace(/\D+/g, "")) * 1024
}

/**
 * `sluice serve` on the Redis at `url` with one token, in a process of its own on a
 * random port, with `args` added; its process and base URL once `probe` (a path)
 * answers 200 with the token.
 */
export const startSluiceServe = async (
  url: string,
  options: {
    readonly token: string
    readonly prefix: string
    readonly probe: string
    readonly args?: ReadonlyArray<string>
  }
): Promise<{ readonly child: ChildProcess; readonly base: string }> => {
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const child = spawn(process.execPath, [
    ...sluiceCommand().args,
    "serve",
    "--port",
    String(port),
    "--host",
    "127.0.0.1",
    "--prefix",
    options.prefix,
    ...(options.args ?? [])
  ], { env: { ...process.env, REDIS_URL: url, SLUICE_API_TOKENS: options.token }, stdio: "ignore" })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 600; i++) {
    try {
      const response = await fetch(`${base}${options.probe}`, { headers: { authorization: `Bearer ${options.token}` } })
      await response.arrayBuffer()
      if (response.status === 200) return { child, base }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  child.kill()
  throw new Error("sluice serve did not answer")
}

/**
 * The turn server in a process of its own (`servedProcess.ts`), as tests measure it from
 * outside: its base URL and pid, its resident memory (/proc), and its metrics.
 */
import { tokens } from "@sluice/testing/server"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { spawnScript } from "./processes.js"

export interface Served {
  /** `http://127.0.0.1:<port>` */
  readonly base: string
  readonly pid: number
}

/** The server on the Redis at `url`, with the test tokens, the prefix and the options; killed with the scope. */
export const served = (
  url: string,
  prefix: string,
  options: Record<string, unknown> = {}
): Effect.Effect<Served, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const spawned = yield* spawnScript("servedProcess.ts", [url, prefix, JSON.stringify(options)], "listening ")
    const port = /listening (\d+)/.exec(spawned.output())?.[1]
    if (port === undefined) return yield* Effect.fail(new Error(`no port in ${spawned.output()}`))
    return { base: `http://127.0.0.1:${port}`, pid: spawned.pid }
  })

/** A process's resident memory, in bytes (`VmRSS` of /proc/<pid>/status). */
export const residentBytes = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:")) ?? ""
  return Number(line.replace(/\D+/g, "")) * 1024
}

/** The sum of a metric's series whose labels include `labels` (`stream="events"`), from `/metrics`. */
export const metric = (base: string, name: string, labels = ""): Effect.Effect<number> =>
  Effect.promise(async () => {
    const response = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${tokens[0]}` } })
    const text = await response.text()
    let sum = 0
    for (const line of text.split("\n")) {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line)
      if (match === null || match[1] !== name || !(match[2] ?? "").includes(labels)) continue
      sum += Number(match[3])
    }
    return sum
  })

/**
 * Asks `metric` every 50 ms of the clock until `done` holds of its value (for live
 * tests, `excludeTestServices`; the test's timeout bounds it).
 */
export const metricUntil = (
  base: string,
  name: string,
  done: (value: number) => boolean,
  labels = ""
): Effect.Effect<number> =>
  Effect.gen(function*() {
    for (;;) {
      const value = yield* metric(base, name, labels)
      if (done(value)) return value
      yield* Effect.sleep(Duration.millis(50))
    }
  })

// Asks `<base>/healthz` one request after another until its stdin ends, each given up
// after `deadlineMs`; then writes how many were answered 200 in time and how many not.
const probeScript = `
const [base, deadline] = process.argv.slice(1)
let answered = 0
let late = 0
let stopping = false
process.stdin.on("end", () => { stopping = true })
process.stdin.resume()
const ask = async () => {
  while (!stopping) {
    try {
      const response = await fetch(base + "/healthz", { signal: AbortSignal.timeout(Number(deadline)) })
      await response.arrayBuffer()
      if (response.status === 200) answered++
      else late++
    } catch {
      late++
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  process.stdout.write(JSON.stringify({ answered, late }))
}
ask()
`

const decodeProbes = Schema.decodeUnknownSync(
  Schema.fromJsonString(Schema.Struct({ answered: Schema.Number, late: Schema.Number }))
)

/**
 * `/healthz` of `base` asked over and over by a process of its own (so that the test's
 * own load does not delay the asking), each ask given up after `deadlineMs`, until
 * `stop`: how many were answered 200 within it, and how many not. Stopped with the
 * scope if not before.
 */
export const probing = (base: string, deadlineMs: number) =>
  Effect.gen(function*() {
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => spawn(process.execPath, ["-e", probeScript, base, String(deadlineMs)], { stdio: "pipe" })),
      (child) => Effect.sync(() => child.kill("SIGKILL"))
    )
    let output = ""
    child.stdout.on("data", (data: Buffer) => void (output += data.toString()))
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
    return {
      stop: Effect.promise(async () => {
        child.stdin.end()
        await exited
        return decodeProbes(output)
      })
    }
  })

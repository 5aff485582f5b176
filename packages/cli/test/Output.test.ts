/**
 * Output discipline: standard output holds the command's output only, every log line
 * goes to standard error once in the `--log-format`, no ANSI styles unless the stream
 * is a terminal and `NO_COLOR` is unset; the help says `sluice <command>`, each option
 * once with its default.
 */
import { describe, expect, it } from "@effect/vitest"
import { recorded, type Reply, serve } from "@sluice/testing/providers"
import * as Effect from "effect/Effect"
import * as References from "effect/References"
import * as Schema from "effect/Schema"
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Output } from "../src/index.js"
import * as Logging from "../src/Logging.js"
import { sluice } from "./support/sluice.js"

const root = join(import.meta.dirname, "..", "..", "..")
const bin = join(import.meta.dirname, "..", "src", "bin.ts")

/** The real executable, its stdout and stderr pipes (not terminals). */
const exec = (args: ReadonlyArray<string>, env: Record<string, string | undefined>) =>
  Effect.callback<{ code: number; stdout: string; stderr: string }>((resume) => {
    const child = execFile(
      process.execPath,
      ["--import", "tsx", bin, ...args],
      { cwd: root, env: { ...process.env, REDIS_URL: undefined, ...env } },
      (error, stdout, stderr) =>
        resume(Effect.succeed({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }))
    )
    return Effect.sync(() => void child.kill("SIGKILL"))
  })

const rateLimited: Reply = {
  _tag: "status",
  status: 429,
  headers: { "retry-after-ms": "5" },
  body: JSON.stringify({ error: { message: "slow down", code: "rate_limit_exceeded" } })
}
const answer: Reply = { _tag: "sse", body: recorded("openai-chat/text-simple.sse") }
const runArgs = (
  url: string
) => ["run", "--provider", "openai-chat", "--model", "m", "--base-url", `${url}/v1`, "--json", "Hi"]

const esc = "\x1b"

describe("standard output holds the command's output only", () => {
  it.live("run --json after a 429: stdout is the summary, the retry notice one line on stderr, without 'next key' for one key", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* serve([rateLimited, answer])
        const result = yield* sluice({ OPENAI_API_KEY: "only" }, runArgs(server.url))
        expect(result.code).toBe(0)
        for (const line of result.stdout.trim().split("\n")) expect(() => JSON.parse(line)).not.toThrow()
        const notices = result.stderr.trimEnd().split("\n")
        expect(notices).toHaveLength(1)
        expect(notices[0]).toMatch(/ WARN  openai-chat: attempt 1 failed \(.*slow down\); retrying$/)
      })
    ))

  it.live("with two keys the notice says it rotates", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* serve([rateLimited, answer])
        const result = yield* sluice({ OPENAI_API_KEY: "first,second" }, runArgs(server.url))
        expect(result.code).toBe(0)
        expect(result.stderr.trimEnd().split("\n")).toStrictEqual([
          expect.stringMatching(/retrying with the next API key$/)
        ])
      })
    ))

  it.live("--log-format json (or SLUICE_LOG_FORMAT=json): every log line is one JSON object", () =>
    Effect.scoped(
      Effect.gen(function*() {
        for (
          const [env, flag] of [[{}, ["--log-format", "json"]], [{ SLUICE_LOG_FORMAT: "json" }, []], [{
            SLUICE_LOG_FORMAT: "pretty"
          }, ["--log-format=json"]]] as const
        ) {
          const server = yield* serve([rateLimited, answer])
          const result = yield* sluice({ OPENAI_API_KEY: "only", ...env }, [...runArgs(server.url), ...flag])
          expect(result.code).toBe(0)
          const lines = result.stderr.trimEnd().split("\n").map((line) =>
            JSON.parse(line) as { message: unknown; logLevel: string }
          )
          expect(lines).toHaveLength(1)
          expect(lines[0]).toMatchObject({ logLevel: "WARN", message: expect.stringMatching(/retrying$/) })
        }
      })
    ))

  it.live(
    "the real executable: stdout parses line by line, the notice once on stderr, no ANSI on pipes",
    () =>
      Effect.scoped(
        Effect.gen(function*() {
          const server = yield* serve([rateLimited, answer])
          const pretty = yield* exec(runArgs(server.url), { OPENAI_API_KEY: "only" })
          expect(pretty.code).toBe(0)
          for (const line of pretty.stdout.trim().split("\n")) expect(() => JSON.parse(line)).not.toThrow()
          expect(pretty.stderr.trimEnd().split("\n")).toStrictEqual([
            expect.stringMatching(/ WARN  openai-chat: attempt 1 failed .*; retrying$/)
          ])
          expect(pretty.stderr).not.toContain(esc)
        })
      ),
    120_000
  )

  it.live("the real executable: --log-format json on stderr, one JSON object a line", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* serve([rateLimited, answer])
        const json = yield* exec([...runArgs(server.url), "--log-format", "json"], { OPENAI_API_KEY: "only" })
        expect(json.code).toBe(0)
        expect(json.stderr.trimEnd().split("\n").map((line) => JSON.parse(line) as unknown)).toStrictEqual([
          expect.objectContaining({ logLevel: "WARN" })
        ])
      })
    ), 120_000)

  it.live(
    "the real executable: help on a pipe with NO_COLOR (FORCE_COLOR notwithstanding) has no ANSI and names the program",
    () =>
      Effect.gen(function*() {
        const help = yield* exec(["replay", "--help"], { NO_COLOR: "1", FORCE_COLOR: "1" })
        expect(help.code).toBe(0)
        expect(help.stdout).not.toContain(esc)
        expect(help.stdout).toContain("$ sluice replay [--provider")
        // Node's own start-up warning that it ignores NO_COLOR beside FORCE_COLOR, and nothing of sluice's
        expect(help.stderr.split("\n").filter((line) => line !== "" && !isNodeColorWarning(line))).toStrictEqual([])
      }),
    120_000
  )
})

/** Node 24 warns on stderr, before any program runs, when NO_COLOR and FORCE_COLOR are both set. */
const isNodeColorWarning = (line: string) =>
  /^\(node:\d+\) Warning: The 'NO_COLOR' env is ignored/.test(line) || line.startsWith("(Use `node --trace-warnings")

describe("help", () => {
  it.effect("usage says sluice <command>; each option describes itself once, with its default and variable; no boilerplate", () =>
    Effect.gen(function*() {
      const { code, stdout } = yield* sluice({}, ["run", "--help"])
      expect(code).toBe(0)
      expect(stdout).not.toContain(esc)
      expect(stdout).toMatch(/^\$ sluice run \[--provider /m)
      expect(stdout).not.toMatch(/^\$ run/m)
      expect(stdout.match(/the wire API/g)).toStrictEqual(["the wire API"])
      expect(stdout).toContain("(default 300; env SLUICE_TIMEOUT)")
      expect(stdout).toContain("the Redis key prefix (default codex; env SLUICE_PREFIX)")
      expect(stdout).toContain("--log-format pretty | json")
      for (
        const boilerplate of [
          "A user-defined piece of text",
          "An integer.",
          "This setting is optional",
          "can be set from environment variables",
          "One of the following"
        ]
      ) {
        expect(stdout).not.toContain(boilerplate)
      }
    }))

  it.effect("the root help lists the commands with sluice's name", () =>
    Effect.gen(function*() {
      const { code, stdout } = yield* sluice({}, ["--help"])
      expect(code).toBe(0)
      expect(stdout).toMatch(/^\$ sluice/m)
      expect(stdout).not.toMatch(/^\$ sluice sluice/m)
      for (const command of ["normalize", "replay", "run", "serve", "demo"]) expect(stdout).toContain(command)
    }))

  it.effect("--version prints the package's version alone", () =>
    Effect.gen(function*() {
      const { code, stdout } = yield* sluice({}, ["--version"])
      const { version } = Schema.decodeUnknownSync(Schema.Struct({ version: Schema.String }))(
        JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8"))
      )
      expect([code, stdout]).toStrictEqual([0, `${version}\n`])
    }))

  it.effect("styled only on a terminal", () =>
    Effect.gen(function*() {
      const { stdout } = yield* sluice({}, ["run", "--help"], { isTTY: true })
      expect(stdout).toContain(esc)
    }))
})

describe("styles", () => {
  it("only on a terminal, and never with NO_COLOR set", () => {
    expect(Output.styled({ isTTY: true }, {})).toBe(true)
    expect(Output.styled({ isTTY: true }, { NO_COLOR: "1" })).toBe(false)
    expect(Output.styled({ isTTY: true }, { NO_COLOR: "" })).toBe(true)
    expect(Output.styled({ isTTY: false }, {})).toBe(false)
    expect(Output.styled({}, {})).toBe(false)
  })
})

describe("the pretty log line", () => {
  it.effect("colours its level only when standard error is styled", () =>
    Effect.gen(function*() {
      for (const styled of [false, true]) {
        const output = Output.memory({ stderrStyled: styled })
        yield* Effect.gen(function*() {
          const service = yield* Output.Output
          yield* Effect.logWarning("careful").pipe(
            Effect.annotateLogs("turn", "t 1"),
            Logging.withLogger("pretty", service)
          )
        }).pipe(Effect.provide(output.layer))
        expect(output.stderr()).toMatch(/^\d\d:\d\d:\d\d\.\d{3} .*WARN .*careful turn="t 1"\n$/)
        expect(output.stderr().includes(esc)).toBe(styled)
      }
    }))

  it.effect("debug lines stay out unless the level allows them", () =>
    Effect.gen(function*() {
      const output = Output.memory()
      yield* Effect.gen(function*() {
        const service = yield* Output.Output
        yield* Effect.logDebug("hidden").pipe(Logging.withLogger("json", service))
        yield* Effect.logDebug("shown").pipe(
          Logging.withLogger("json", service),
          Effect.provideService(References.MinimumLogLevel, "Debug")
        )
      }).pipe(Effect.provide(output.layer))
      expect(output.stderr().trimEnd().split("\n").map((line) => (JSON.parse(line) as { message: unknown }).message))
        .toStrictEqual(["shown"])
    }))
})

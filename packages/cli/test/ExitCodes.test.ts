/**
 * The exit-code table, a row a test, in process: 0 success; 1 the turn or its input
 * failed; 2 bad usage or configuration; 3 the infrastructure lost mid-turn. Every
 * failure is one `sluice: ...` line on standard error.
 */
import { describe, expect, it } from "@effect/vitest"
import { Summary } from "@sluice/accumulator"
import { transcriptPath } from "@sluice/testing/fixtures"
import { recorded as recordedText, serve } from "@sluice/testing/providers"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Publishing from "../src/Publishing.js"
import { sluice as sluiceIn } from "./support/sluice.js"

const fixtures = transcriptPath("recorded")
const scratch = mkdtempSync(join(tmpdir(), "sluice-exit-"))

/** The one line a failure writes on standard error. */
const oneLine = (stderr: string): string => {
  expect(stderr.endsWith("\n")).toBe(true)
  const lines = stderr.trimEnd().split("\n")
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(/^sluice: /)
  return lines[0]!
}

const sluice = (env: Record<string, string>, ...args: ReadonlyArray<string>) => sluiceIn(env, args)

describe("exit codes", () => {
  it.effect("0: success, nothing on standard error", () =>
    Effect.gen(function*() {
      const result = yield* sluice(
        {},
        "normalize",
        "--provider",
        "anthropic",
        join(fixtures, "anthropic", "tool-parallel.sse")
      )
      expect([result.code, result.stderr]).toStrictEqual([0, ""])
    }))

  it.live("1: run, a turn the provider failed; the summary is printed in full first", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* serve([
          {
            _tag: "status",
            status: 400,
            body: JSON.stringify({
              error: { message: "model m does not exist", type: "invalid_request_error", code: "model_not_found" }
            })
          }
        ])
        const result = yield* sluice(
          { OPENAI_API_KEY: "k1" },
          "run",
          "--provider",
          "openai-chat",
          "--model",
          "m",
          "--base-url",
          `${server.url}/v1`,
          "--json",
          "Hi"
        )
        expect(result.code).toBe(1)
        expect(Schema.decodeUnknownSync(Summary.Summary)(JSON.parse(result.stdout))).toMatchObject({ status: "error" })
        expect(oneLine(result.stderr)).toMatch(/^sluice: the turn [0-9a-f-]{36} failed: .*model m does not exist$/)
      })
    ))

  it.live("1: run, a stream the provider cut after output started (truncated)", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* serve([{ _tag: "cut", body: recordedText("openai-chat/text-simple.sse"), events: 2 }])
        const result = yield* sluice(
          { OPENAI_API_KEY: "k1" },
          "run",
          "--provider",
          "openai-chat",
          "--model",
          "m",
          "--base-url",
          `${server.url}/v1`,
          "--json",
          "Hi"
        )
        expect(result.code).toBe(1)
        expect(JSON.parse(result.stdout)).toMatchObject({ status: "error" })
        // the failed body is logged as it happens; the failure is the last line, once
        const lines = result.stderr.trimEnd().split("\n")
        expect(lines.filter((line) => line.startsWith("sluice: "))).toHaveLength(1)
        expect(lines.at(-1)).toMatch(/^sluice: the turn .* failed: /)
        expect(lines.slice(0, -1).every((line) => / WARN  openai-chat: the response body failed/.test(line))).toBe(true)
      })
    ))

  it.effect("1: normalize, an invalid transcript, named in one line (no Schema tree)", () =>
    Effect.gen(function*() {
      const file = join(scratch, "shape.sse")
      writeFileSync(file, "data: {\"id\": \"x\", \"choices\": 7}\n\n")
      const result = yield* sluice({}, "normalize", "--provider", "openai-chat", file)
      expect([result.code, result.stdout]).toStrictEqual([1, ""])
      expect(oneLine(result.stderr)).toMatch(/^sluice: openai-chat event at line 1/)
    }))

  it.effect("1: a transcript that does not match --provider is named as the format it looks like", () =>
    Effect.gen(function*() {
      const anthropic = join(fixtures, "anthropic", "tool-parallel.sse")
      for (const command of ["normalize", "replay"]) {
        const result = yield* sluice({}, command, "--provider", "openai-chat", anthropic)
        expect([command, result.code, result.stdout]).toStrictEqual([command, 1, ""])
        expect(oneLine(result.stderr)).toBe(
          `sluice: ${anthropic} looks like an Anthropic Messages stream, not openai-chat: pass --provider anthropic`
        )
      }
      const gemini = yield* sluice(
        {},
        "normalize",
        "--provider",
        "openai-responses",
        join(fixtures, "gemini", "tool-parallel.sse")
      )
      expect(oneLine(gemini.stderr)).toMatch(
        /looks like a Gemini generateContent stream, not openai-responses: pass --provider gemini$/
      )
      const compatible = yield* sluice(
        {},
        "normalize",
        "--provider",
        "openai-compatible",
        join(fixtures, "openai-chat", "text-simple.sse")
      )
      expect(compatible.code).toBe(0)
    }))

  it.effect("2: an unknown option is named as such, wherever it stands", () =>
    Effect.gen(function*() {
      const file = join(fixtures, "anthropic", "tool-parallel.sse")
      for (
        const args of [
          ["normalize", "--provider", "anthropic", "--verbose", file],
          ["normalize", "--verbose", "--provider", "anthropic", file],
          ["normalize", "--provider", "anthropic", file, "--verbose=1"]
        ]
      ) {
        const result = yield* sluice({}, ...args)
        expect([args, result.code, result.stdout]).toStrictEqual([args, 2, ""])
        expect(oneLine(result.stderr)).toBe(
          "sluice: unknown option --verbose for sluice normalize (see sluice normalize --help)"
        )
      }
      const root = yield* sluice({}, "--verbose", "normalize")
      expect([root.code, oneLine(root.stderr)]).toStrictEqual([
        2,
        "sluice: unknown option --verbose for sluice (see sluice --help)"
      ])
      // an option's value that starts with a dash is not an option; nor is anything after --
      const dash = yield* sluice({}, "normalize", "--provider", "anthropic", "--", "--verbose")
      expect(dash.stderr).not.toContain("unknown option")
    }))

  it.effect("2: other usage errors of the parser are one plain line too", () =>
    Effect.gen(function*() {
      const result = yield* sluice({}, "normalize", "--provider", "nope", "x")
      expect(result.code).toBe(2)
      expect(oneLine(result.stderr)).not.toContain("\x1b")
      const missing = yield* sluice({}, "run", "Hi")
      expect(missing.code).toBe(2)
      expect(oneLine(missing.stderr)).toBe(
        "sluice: missing --provider (or set SLUICE_PROVIDER); missing --model (or set SLUICE_MODEL)"
      )
      const command = yield* sluice({}, "nope")
      expect([command.code, oneLine(command.stderr)]).toStrictEqual([
        2,
        "sluice: unknown command \"nope\" for sluice: use one of normalize, replay, run, serve, token, demo (see sluice --help)"
      ])
      // Effect's own wording of the parser's errors ("Missing argument", "Unexpected positional") reads as Sluice's
      const argument = yield* sluice({}, "replay", "--provider", "anthropic")
      expect([argument.code, oneLine(argument.stderr)]).toStrictEqual([2, "sluice: missing argument FILE"])
      const extra = yield* sluice({}, "normalize", "--provider", "anthropic", "a.sse", "b.sse")
      expect([extra.code, oneLine(extra.stderr)]).toStrictEqual([2, "sluice: unexpected argument \"b.sse\""])
    }))

  it.effect("2: a missing key", () =>
    Effect.gen(function*() {
      const result = yield* sluice({}, "run", "--provider", "anthropic", "--model", "m", "Hi")
      expect(result.code).toBe(2)
      expect(oneLine(result.stderr)).toMatch(/needs an API key: set ANTHROPIC_API_KEY/)
    }))

  it.effect("2: Redis unreachable at start, its password not shown", () =>
    Effect.gen(function*() {
      const sample = join(import.meta.dirname, "..", "samples", "anthropic-weather.sse")
      const result = yield* sluice(
        { SLUICE_REDIS_URL: "redis://user:hunter2@127.0.0.1:1" },
        "replay",
        "--provider",
        "anthropic",
        sample
      )
      expect([result.code, result.stdout]).toStrictEqual([2, ""])
      const line = oneLine(result.stderr)
      expect(line).toMatch(/^sluice: cannot use Redis at redis:\/\/user:\*\*\*@127\.0\.0\.1:1/)
      expect(line).not.toContain("hunter2")
    }), 60_000)

  it.effect("2: a Redis Cluster named by the environment and unreachable at start", () =>
    Effect.gen(function*() {
      const sample = join(import.meta.dirname, "..", "samples", "anthropic-weather.sse")
      const result = yield* sluice({ REDIS_CLUSTER_NODES: "127.0.0.1:1" }, "replay", "--provider", "anthropic", sample)
      expect([result.code, result.stdout]).toStrictEqual([2, ""])
      expect(oneLine(result.stderr)).toMatch(/^sluice: cannot use the Redis Cluster at 127\.0\.0\.1:1/)
    }), 60_000)

  it.effect("2: a bad setting in the environment, named", () =>
    Effect.gen(function*() {
      const format = yield* sluice({ SLUICE_LOG_FORMAT: "xml" }, "normalize", "--provider", "anthropic", "x")
      expect([format.code, oneLine(format.stderr)]).toStrictEqual([
        2,
        "sluice: --log-format must be pretty or json, got xml"
      ])
      const delay = yield* sluice({ SLUICE_DELAY_MS: "soon" }, "replay", "--provider", "anthropic", "x")
      expect(delay.code).toBe(2)
      expect(oneLine(delay.stderr)).toContain("SLUICE_DELAY_MS")
    }))

  it("3: Redis lost mid-turn, past the publisher's retries", () => {
    const failure = Publishing.failureOf({ _tag: "PublishError", message: "XADD failed" })
    expect([failure.exitCode, failure.message]).toStrictEqual([3, "Redis was lost mid-turn: XADD failed"])
    expect(Publishing.failureOf({ _tag: "WireDecodeError", message: "bad" }).exitCode).toBe(1)
  })
})

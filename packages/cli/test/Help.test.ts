/**
 * `sluice --help` and the usage errors, seen from outside: every
 * line of the help fits 100 columns (or a narrower terminal), secret options show a
 * placeholder rather than a type name, Effect's `--wizard` and `--completions` belong
 * to the root command only, a bad `--provider` names the option, the value and the
 * choices, and a missing option names its `SLUICE_*` variable.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { sluice } from "./support/sluice.js"

const here = dirname(fileURLToPath(import.meta.url))
const bin = join(here, "..", "src", "bin.ts")

const commands = ["normalize", "replay", "run", "serve", "demo"] as const
const esc = "\x1b"
const ansi = /\x1b\[[0-9;]*m/g

/** The help of `sluice [command] --help`, as a pipe or a terminal of `columns` gets it. */
const help = (command: string | undefined, options: { readonly isTTY?: boolean; readonly columns?: number } = {}) =>
  Effect.gen(function*() {
    const result = yield* sluice({}, [...(command === undefined ? [] : [command]), "--help"], options)
    expect([result.code, result.stderr]).toStrictEqual([0, ""])
    return result.stdout
  })

const widest = (text: string): number => Math.max(...text.replace(ansi, "").split("\n").map((line) => line.length))

describe("sluice --help", () => {
  it.effect("every line of the root's and each command's help is at most 100 columns", () =>
    Effect.gen(function*() {
      for (const command of [undefined, ...commands]) {
        const text = yield* help(command)
        expect({ command, widest: widest(text) <= 100 }).toStrictEqual({ command, widest: true })
      }
    }))

  it.effect(
    "the real executable on a pipe: the widest help (serve) fits 100 columns, the root's lists --completions",
    () =>
      Effect.gen(function*() {
        const exec = (args: ReadonlyArray<string>) =>
          Effect.callback<{ code: number; stdout: string; stderr: string }>((resume) => {
            execFile(
              process.execPath,
              ["--import", "tsx", bin, ...args],
              { cwd: join(here, "..") },
              (error, stdout, stderr) =>
                resume(Effect.succeed({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }))
            )
          })
        const [serve, root] = yield* Effect.all([exec(["serve", "--help"]), exec(["--help"])], {
          concurrency: "unbounded"
        })
        expect([serve.code, serve.stderr, root.code, root.stderr]).toStrictEqual([0, "", 0, ""])
        expect(widest(serve.stdout)).toBeLessThanOrEqual(100)
        expect(serve.stdout).not.toContain("--completions")
        expect(root.stdout).toContain("--completions")
      }),
    120_000
  )

  it.effect("a narrower terminal gets help as wide as it is; a wider one still 100 columns", () =>
    Effect.gen(function*() {
      for (const command of [undefined, ...commands]) {
        const narrow = yield* help(command, { isTTY: true, columns: 60 })
        expect(narrow).toContain(esc)
        expect({ command, fits: widest(narrow) <= 60 }).toStrictEqual({ command, fits: true })
        const wide = yield* help(command, { isTTY: true, columns: 300 })
        expect({ command, fits: widest(wide) <= 100 }).toStrictEqual({ command, fits: true })
      }
    }))

  it.effect("wrapping keeps every word: the usage and the descriptions say what they said on one line", () =>
    Effect.gen(function*() {
      const text = yield* help("run")
      const usage = text.slice(text.indexOf("$ sluice run"), text.indexOf("\n\nARGUMENTS"))
      expect(usage.split("\n").length).toBeGreaterThan(1)
      expect(usage.replace(/\s+/g, " ")).toContain(
        "[--provider openai-chat | openai-compatible | openai-responses | anthropic | gemini] [--model text]"
      )
      expect(usage.replace(/\s+/g, " ")).toMatch(/\[--redis-url url\] <PROMPT>$/)
      expect(text.replace(/\s+/g, " ")).toContain(
        "a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>) the turn joins: every event carries it, the turn's spans are its children (env SLUICE_TRACEPARENT)"
      )
    }))

  it.effect("secret options show what to give, not a type name", () =>
    Effect.gen(function*() {
      for (const command of [undefined, ...commands]) expect(yield* help(command)).not.toMatch(/redacted/i)
      const serve = yield* help("serve")
      expect(serve).toContain("[--redis-url url]")
      expect(serve).toContain("[--read-tokens token,...]")
      expect(serve).toMatch(/^--read-tokens token,\.\.\.$/m)
    }))

  it.effect("--wizard and --completions are on the root's help only, and only the root takes them", () =>
    Effect.gen(function*() {
      const root = yield* help(undefined)
      expect(root).toContain("--wizard")
      expect(root).toContain("--completions")
      for (const command of commands) {
        const text = yield* help(command)
        expect([command, text.includes("--wizard"), text.includes("--completions")]).toStrictEqual([
          command,
          false,
          false
        ])
        expect(text).toContain("--log-format pretty | json")
      }
      const wizard = yield* sluice({}, ["run", "--wizard"])
      expect([wizard.code, wizard.stdout, wizard.stderr]).toStrictEqual([
        2,
        "",
        "sluice: unknown option --wizard for sluice run (see sluice run --help)\n"
      ])
    }))
})

describe("usage errors", () => {
  it.effect("a bad --provider names the option, the value and the accepted values", () =>
    Effect.gen(function*() {
      for (const args of [["--provider", "foo"], ["--provider=foo"]]) {
        const result = yield* sluice({}, ["normalize", ...args, "x"])
        expect([result.code, result.stdout, result.stderr]).toStrictEqual([
          2,
          "",
          "sluice: invalid --provider \"foo\": expected one of openai-chat, openai-compatible, openai-responses, anthropic, gemini\n"
        ])
      }
    }))

  it.effect("a bad value from the environment names the variable, the option and the accepted values", () =>
    Effect.gen(function*() {
      const provider = yield* sluice({ SLUICE_PROVIDER: "foo" }, ["run", "--model", "m", "Hi"])
      expect([provider.code, provider.stdout, provider.stderr]).toStrictEqual([
        2,
        "",
        "sluice: invalid SLUICE_PROVIDER (for --provider): expected one of openai-chat, openai-compatible, openai-responses, anthropic, gemini\n"
      ])
      const timeout = yield* sluice({ SLUICE_TIMEOUT: "soon" }, [
        "run",
        "--provider",
        "anthropic",
        "--model",
        "m",
        "Hi"
      ])
      expect([timeout.code, timeout.stderr]).toStrictEqual([
        2,
        "sluice: invalid SLUICE_TIMEOUT (for --timeout): expected an integer\n"
      ])
    }))

  it.effect("a value of the wrong kind names the option and the value", () =>
    Effect.gen(function*() {
      const result = yield* sluice({}, ["run", "--provider", "anthropic", "--model", "m", "--timeout", "soon", "Hi"])
      expect([result.code, result.stderr]).toStrictEqual([
        2,
        "sluice: invalid --timeout \"soon\": expected an integer\n"
      ])
    }))

  it.effect("a missing option names the variable that can give it", () =>
    Effect.gen(function*() {
      const both = yield* sluice({}, ["run", "Hi"])
      expect([both.code, both.stdout, both.stderr]).toStrictEqual([
        2,
        "",
        "sluice: missing --provider (or set SLUICE_PROVIDER); missing --model (or set SLUICE_MODEL)\n"
      ])
      const model = yield* sluice({ SLUICE_PROVIDER: "anthropic" }, ["run", "Hi"])
      expect([model.code, model.stderr]).toStrictEqual([2, "sluice: missing --model (or set SLUICE_MODEL)\n"])
      const provider = yield* sluice({}, ["normalize", "x"])
      expect([provider.code, provider.stderr]).toStrictEqual([
        2,
        "sluice: missing --provider (or set SLUICE_PROVIDER)\n"
      ])
    }))

  it.effect(
    "serve's help names SLUICE_API_TOKENS and the provider keys and base URLs; run's the keys and base URLs",
    () =>
      Effect.gen(function*() {
        const environment = (text: string) => text.slice(text.indexOf("ENVIRONMENT"), text.indexOf("GLOBAL OPTIONS"))
        const serve = environment(yield* help("serve"))
        for (const variable of ["SLUICE_API_TOKENS", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"]) {
          expect(serve).toContain(variable)
        }
        for (const variable of ["OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GEMINI_BASE_URL"]) {
          expect(serve).toContain(variable)
        }
        expect(serve.replace(/\s+/g, " ")).toContain("the server does not start")
        const run = environment(yield* help("run"))
        for (const variable of ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GEMINI_BASE_URL"]) {
          expect(run).toContain(variable)
        }
        expect(run).not.toContain("SLUICE_API_TOKENS")
        expect(yield* help("normalize")).not.toContain("ENVIRONMENT")
      }),
    60_000
  )
})

import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import { Summary } from "@sluice/accumulator"
import { fixture, recorded, type Reply, serve } from "@sluice/testing/providers"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Cli, Output } from "../src/index.js"

/** Runs `sluice run ...` in process with the given environment; returns its exit code and output. */
const run = (env: Record<string, string>, args: ReadonlyArray<string>, options: { readonly isTTY?: boolean } = {}) =>
  Effect.gen(function*() {
    const output = Output.memory(options)
    const exit = yield* Cli.run(["node", "sluice", "run", ...args]).pipe(
      Effect.provide(Layer.merge(NodeServices.layer, output.layer)),
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })),
      Effect.exit
    )
    return { code: Cli.exitCode(exit), stdout: output.stdout(), stderr: output.stderr() }
  })

const decodeSummary = Schema.decodeUnknownSync(Summary.Summary)
const summaryLine = (stdout: string) => decodeSummary(JSON.parse(stdout.split("\nsummary: ")[1] ?? "null"))

const cases = [
  {
    provider: "openai-chat",
    key: "OPENAI_API_KEY",
    header: "authorization",
    value: "Bearer k1",
    path: "/v1/chat/completions",
    base: "/v1",
    transcript: recorded("openai-chat/text-simple.sse")
  },
  {
    provider: "openai-compatible",
    key: "OPENAI_API_KEY",
    header: "authorization",
    value: "Bearer k1",
    path: "/v1/chat/completions",
    base: "/v1",
    transcript: recorded("openai-compatible/deepseek-thinking.sse")
  },
  {
    provider: "openai-responses",
    key: "OPENAI_API_KEY",
    header: "authorization",
    value: "Bearer k1",
    path: "/v1/responses",
    base: "/v1",
    transcript: recorded("openai-responses/reasoning-summary-tool.sse")
  },
  {
    provider: "anthropic",
    key: "ANTHROPIC_API_KEY",
    header: "x-api-key",
    value: "k1",
    path: "/v1/messages",
    base: "",
    transcript: recorded("anthropic/thinking-then-tool.sse")
  },
  {
    provider: "gemini",
    key: "GEMINI_API_KEY",
    header: "x-goog-api-key",
    value: "k1",
    path: "/v1beta/models/m1:streamGenerateContent?alt=sse",
    base: "/v1beta",
    transcript: recorded("gemini/thought-then-tool.sse")
  }
] as const

describe("sluice run", () => {
  for (const c of cases) {
    it.live(`${c.provider}: --json prints the summary of the live turn only; the key and --base-url are used`, () =>
      Effect.scoped(Effect.gen(function*() {
        const server = yield* serve([{ _tag: "sse", body: c.transcript }])
        const { code, stderr, stdout } = yield* run({ [c.key]: "k1" }, [
          "--provider",
          c.provider,
          "--model",
          "m1",
          "--system",
          "Be brief.",
          "--base-url",
          server.url + c.base,
          "--json",
          "Hello"
        ])
        expect(stderr).toBe("")
        expect(code).toBe(0)
        expect(stdout.trim().split("\n")).toHaveLength(1)
        const summary = decodeSummary(JSON.parse(stdout))
        expect(summary).toMatchObject({ provider: c.provider, status: "complete" })
        const [received] = server.requests()
        expect(received?.url).toBe(c.path)
        expect(received?.headers[c.header]).toBe(c.value)
        expect(JSON.stringify(received?.body)).toContain("Be brief.")
        expect(JSON.stringify(received?.body)).toContain("Hello")
      })))
  }

  it.effect("prints the answer as it streams, tool calls shown, then where the turn was published and its summary", () =>
    Effect.gen(function*() {
      const server = yield* serve([{ _tag: "sse", body: recorded("anthropic/tool-parallel.sse") }])
      const { code, stdout } = yield* run({ ANTHROPIC_API_KEY: "k1", ANTHROPIC_BASE_URL: server.url }, [
        "--provider",
        "anthropic",
        "--model",
        "claude-test",
        "Add and multiply 2 and 3"
      ])
      expect(code).toBe(0)
      const [answer] = stdout.split("\nturn ")
      expect(answer).toContain("I'll add and multiply the numbers 2 and 3 for you.")
      expect(answer).toMatch(/-> tool call add\(\{"a": ?2, ?"b": ?3\}\) \[toolu_/)
      expect(answer).toMatch(/-> tool call multiply\(/)
      expect(stdout).toContain("upserts and turn events published to the embedded in-memory store")
      expect(stdout).toMatch(/Stream A: codex:turn:\{[0-9a-f-]{36}\}:events/)
      const summary = summaryLine(stdout)
      expect(summary.status).toBe("complete")
      expect(summary.toolCalls.map((call) => call.name)).toStrictEqual(["add", "multiply"])
      expect(server.requests()[0]?.url).toBe("/v1/messages")
    }))

  it.effect("reasoning is dimmed with ANSI on a terminal, and plain otherwise", () =>
    Effect.gen(function*() {
      const replies: ReadonlyArray<Reply> = [{ _tag: "sse", body: fixture("anthropic/thinking-tools.sse") }]
      const args = ["--provider", "anthropic", "--model", "m"]
      const terminal = yield* serve(replies)
      const styled = yield* run({ ANTHROPIC_API_KEY: "k" }, [...args, "--base-url", terminal.url, "Hi"], {
        isTTY: true
      })
      const pipe = yield* serve(replies)
      const plain = yield* run({ ANTHROPIC_API_KEY: "k" }, [...args, "--base-url", pipe.url, "Hi"])
      expect(styled.stdout).toContain("\x1b[2mTwo lookups, \x1b[22m\x1b[2mboth at once.\x1b[22m")
      expect(plain.stdout).toContain("Two lookups, both at once.")
      expect(plain.stdout).not.toContain("\x1b[")
    }))

  it.live("rotates to the next key of the comma-separated list on a retryable error", () =>
    Effect.scoped(
      Effect.gen(function*() {
        const server = yield* serve([
          {
            _tag: "status",
            status: 429,
            headers: { "retry-after-ms": "5" },
            body: JSON.stringify({ error: { message: "slow down", code: "rate_limit_exceeded" } })
          },
          { _tag: "sse", body: recorded("openai-chat/text-simple.sse") }
        ])
        const { code, stdout } = yield* run({ OPENAI_API_KEY: "first,second" }, [
          "--provider",
          "openai-chat",
          "--model",
          "m",
          "--base-url",
          `${server.url}/v1`,
          "--json",
          "Hi"
        ])
        expect(code).toBe(0)
        expect(decodeSummary(JSON.parse(stdout)).status).toBe("complete")
        expect(server.requests().map((r) => r.headers.authorization)).toStrictEqual(["Bearer first", "Bearer second"])
      })
    ))

  it.effect("a provider that refuses the request ends the turn with status error and its message; exit code 1", () =>
    Effect.gen(function*() {
      const server = yield* serve([
        {
          _tag: "status",
          status: 401,
          body: JSON.stringify({ type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } })
        }
      ])
      const { code, stderr, stdout } = yield* run({ ANTHROPIC_API_KEY: "bad" }, [
        "--provider",
        "anthropic",
        "--model",
        "m",
        "--base-url",
        server.url,
        "Hi"
      ])
      expect(code).toBe(1)
      expect(stderr).toMatch(
        /^sluice: the turn [0-9a-f-]{36} failed: api_error authentication_error: invalid x-api-key\n$/
      )
      expect(stdout).toContain("error: api_error authentication_error: invalid x-api-key")
      expect(summaryLine(stdout)).toMatchObject({
        status: "error",
        errors: [{ type: "api_error", code: "authentication_error", message: "invalid x-api-key", retryable: false }]
      })
    }))

  it.effect("a missing key is bad usage (exit 2) naming the variable", () =>
    Effect.gen(function*() {
      const { code, stderr, stdout } = yield* run({}, ["--provider", "gemini", "--model", "m", "Hi"])
      expect(code).toBe(2)
      expect(stdout).toBe("")
      expect(stderr).toContain("sluice run --provider gemini needs an API key: set GEMINI_API_KEY")
      const empty = yield* run({ OPENAI_API_KEY: " , " }, ["--provider", "openai-compatible", "--model", "m", "Hi"])
      expect(empty.code).toBe(2)
      expect(empty.stderr).toContain("set OPENAI_API_KEY")
    }))

  it.effect("a base URL that is not an http(s) URL, or a missing model, is bad usage", () =>
    Effect.gen(function*() {
      const bad = yield* run({ OPENAI_API_KEY: "k" }, [
        "--provider",
        "openai-chat",
        "--model",
        "m",
        "--base-url",
        "ftp://x",
        "Hi"
      ])
      expect(bad.code).toBe(2)
      expect(bad.stderr).toContain("--base-url must be an http(s) URL, got ftp://x")
      expect((yield* run({ OPENAI_API_KEY: "k" }, ["--provider", "openai-chat", "Hi"])).code).toBe(2)
    }))

  it.effect("a --timeout that is not from 1 to 3600 seconds is bad usage", () =>
    Effect.gen(function*() {
      for (const timeout of ["0", "3601", "-5"]) {
        const bad = yield* run({ OPENAI_API_KEY: "k" }, [
          "--provider",
          "openai-chat",
          "--model",
          "m",
          "--timeout",
          timeout,
          "Hi"
        ])
        expect([bad.code, bad.stderr.includes(`--timeout must be from 1 to 3600 seconds, got ${timeout}`)])
          .toStrictEqual([2, true])
      }
    }))
})

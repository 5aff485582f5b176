import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import { Summary, Turn } from "@sluice/accumulator"
import { StreamBMessage, StreamEvent } from "@sluice/core"
import { transcriptPath } from "@sluice/testing/fixtures"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Cli, Output } from "../src/index.js"

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, "..", "..", "..")
const recorded = transcriptPath("recorded")
const bin = join(here, "..", "src", "bin.ts")

/** Runs the command in process; returns its exit code and what it wrote. */
const run = (...args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const output = Output.memory()
    const exit = yield* Cli.run(["node", "sluice", ...args]).pipe(
      Effect.provide(Layer.merge(NodeServices.layer, output.layer)),
      Effect.exit
    )
    return { code: Cli.exitCode(exit), stdout: output.stdout(), stderr: output.stderr() }
  })

const scratch = mkdtempSync(join(tmpdir(), "sluice-cli-"))
const scratchFile = (name: string, text: string) => {
  const path = join(scratch, name)
  writeFileSync(path, text)
  return path
}

const decodeEvent = Schema.decodeUnknownSync(StreamEvent.StreamEvent)
const decodeSummary = Schema.decodeUnknownSync(Summary.Summary)

describe("sluice normalize", () => {
  it.effect("prints the summary of a recorded Anthropic turn (docs/cli.md#normalize)", () =>
    Effect.gen(function*() {
      const { code, stderr, stdout } = yield* run(
        "normalize",
        "--provider",
        "anthropic",
        join(recorded, "anthropic", "tool-parallel.sse")
      )
      expect(stderr).toBe("")
      expect(code).toBe(0)
      const lines = stdout.trim().split("\n")
      expect(lines).toHaveLength(1)
      const summary = decodeSummary(JSON.parse(lines[0]!))
      expect(summary.provider).toBe("anthropic")
      expect(summary.status).toBe("complete")
      expect(summary.text).toBe("I'll add and multiply the numbers 2 and 3 for you.")
      expect(summary.toolCalls.map((call) => [call.name, call.arguments])).toStrictEqual([
        ["add", { a: 2, b: 3 }],
        ["multiply", { a: 2, b: 3 }]
      ])
      expect(summary.finishReason).toBe("tool-calls")
      expect(summary.usage.total).toBe(
        summary.usage.input + summary.usage.cacheRead + summary.usage.cacheWrite + summary.usage.output
      )
    }))

  it.effect("a web-search turn lists no client tool calls: the searches the provider ran are providerToolCalls", () =>
    Effect.gen(function*() {
      for (const provider of ["anthropic", "openai-responses"]) {
        const { code, stdout } = yield* run(
          "normalize",
          "--provider",
          provider,
          join(recorded, provider, "web-search.sse")
        )
        expect(code).toBe(0)
        const summary = decodeSummary(JSON.parse(stdout))
        expect([provider, summary.toolCalls]).toStrictEqual([provider, []])
        expect(summary.providerToolCalls.length).toBeGreaterThan(0)
        expect(summary.finishReason).toBe("stop")
      }
      const responses = yield* run(
        "normalize",
        "--provider",
        "openai-responses",
        join(recorded, "openai-responses", "web-search.sse")
      )
      const searches = decodeSummary(JSON.parse(responses.stdout)).providerToolCalls
      expect(new Set(searches.map((call) => call.name))).toStrictEqual(new Set(["web_search_call"]))
      expect(searches[0]?.arguments).toStrictEqual({ type: "search", query: "tech news today December 5 2025" })
    }))

  it.effect("a grounded Gemini turn lists its Google Search as a providerToolCall, no client tool calls", () =>
    Effect.gen(function*() {
      const file = join(recorded, "..", "gemini", "grounding.sse")
      const { code, stdout } = yield* run("normalize", "--provider", "gemini", file)
      expect(code).toBe(0)
      const summary = decodeSummary(JSON.parse(stdout))
      expect(summary.toolCalls).toStrictEqual([])
      expect(summary.providerToolCalls.map((call) => [call.name, call.arguments])).toStrictEqual([
        ["google_search", { queries: ["who won euro 2024"] }]
      ])
      expect(summary.finishReason).toBe("stop")
    }))

  it.effect("--events prints StreamEvents whose fold is the printed summary", () =>
    Effect.gen(function*() {
      const file = join(recorded, "openai-responses", "reasoning-summary-tool.sse")
      const events = yield* run("normalize", "--provider", "openai-responses", "--events", file)
      const summary = yield* run("normalize", "--provider", "openai-responses", file)
      expect(events.code).toBe(0)
      const decoded = events.stdout.trim().split("\n").map((line) => decodeEvent(JSON.parse(line)))
      expect(decoded[0]?.type).toBe("response_start")
      expect(decoded.at(-1)?.type).toBe("response_done")
      const turn = Result.getOrThrow(Turn.fromEvents(decoded))
      expect(Summary.fromTurn(turn)).toStrictEqual(JSON.parse(summary.stdout))
    }))

  it.effect("--non-streaming reads a JSON response into the same summary shape", () =>
    Effect.gen(function*() {
      const body = {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-test",
        content: [{ type: "text", text: "Hi!" }],
        stop_reason: "end_turn",
        usage: { input_tokens: 5, output_tokens: 2, cache_read_input_tokens: 3 }
      }
      const { code, stdout } = yield* run(
        "normalize",
        "--provider",
        "anthropic",
        "--non-streaming",
        scratchFile("ns.json", JSON.stringify(body))
      )
      expect(code).toBe(0)
      expect(JSON.parse(stdout)).toMatchObject({
        provider: "anthropic",
        status: "complete",
        text: "Hi!",
        finishReason: "stop",
        usage: { input: 5, output: 2, cacheRead: 3, cacheWrite: 0, reasoning: 0, total: 10 }
      })
    }))

  it.effect("an in-stream provider error is a turn with status error, not a failure", () =>
    Effect.gen(function*() {
      const file = join(recorded, "openai-compatible", "openrouter-midstream-error.sse")
      const { code, stdout } = yield* run("normalize", "--provider", "openai-compatible", file)
      expect(code).toBe(0)
      const summary = decodeSummary(JSON.parse(stdout))
      expect(summary.status).toBe("error")
      expect(summary.errors[0]).toMatchObject({ message: "Token limit reached" })
    }))

  it.effect("invalid input exits 1 with a message naming the line", () =>
    Effect.gen(function*() {
      const file = scratchFile("bad.sse", "event: message_start\ndata: {\"type\":\"message_start\",\n\n")
      const { code, stderr, stdout } = yield* run("normalize", "--provider", "anthropic", file)
      expect(code).toBe(1)
      expect(stdout).toBe("")
      expect(stderr).toMatch(/^sluice: anthropic event at line 1 is not JSON/)
    }))

  it.effect("a non-streaming body that is not JSON exits 1", () =>
    Effect.gen(function*() {
      const { code, stderr } = yield* run(
        "normalize",
        "--provider",
        "gemini",
        "--non-streaming",
        scratchFile("x.json", "{nope")
      )
      expect(code).toBe(1)
      expect(stderr).toContain("is not a JSON document")
    }))

  it.effect("a file that is not SSE at all is bad input naming its first line, not a truncated stream", () =>
    Effect.gen(function*() {
      const notSse = scratchFile("notes.txt", "hello world\nthis is not SSE\n")
      for (const command of ["normalize", "replay"] as const) {
        const { code, stderr } = yield* run(command, "--provider", "openai-chat", notSse)
        expect([command, code, stderr.trimEnd().split("\n").at(-1)]).toStrictEqual([
          command,
          1,
          `sluice: ${notSse} is not SSE: its first line "hello world" is not an SSE field (data:, event:, id:, retry:) or comment (:)`
        ])
      }
      // a body that opens with a comment or blank lines is SSE
      const commented = scratchFile("commented.sse", ": keep-alive\n\ndata: [DONE]\n\n")
      expect((yield* run("normalize", "--provider", "openai-chat", commented)).stderr).not.toContain("is not SSE")
    }))

  it.effect("bad usage exits 2: a missing file, an unknown provider, a missing argument", () =>
    Effect.gen(function*() {
      expect((yield* run("normalize", "--provider", "anthropic", join(scratch, "missing.sse"))).code).toBe(2)
      expect((yield* run("normalize", "--provider", "nope", "x")).code).toBe(2)
      expect((yield* run("normalize", "--provider", "anthropic")).code).toBe(2)
    }))
})

describe("sluice replay", () => {
  it.effect("a transcript cut in the middle of a data: line is a truncated turn, not invalid input; replay's failed turn exits 1", () =>
    Effect.gen(function*() {
      const whole = readFileSync(join(recorded, "anthropic", "thinking-then-tool.sse"), "utf8")
      const cut = scratchFile("cut.sse", whole.slice(0, whole.indexOf("\"thinking\":", 1200) + 20))
      for (const command of ["normalize", "replay"] as const) {
        const { code, stdout, stderr } = yield* run(command, "--provider", "anthropic", cut)
        if (command === "normalize") expect([command, code, stderr]).toStrictEqual([command, 0, ""])
        else {expect([command, code, stderr]).toStrictEqual([
            command,
            1,
            expect.stringMatching(/^sluice: the turn [0-9a-f-]{36} failed: .*stream_truncated.*\n$/)
          ])}
        const summary = decodeSummary(JSON.parse(command === "normalize" ? stdout : stdout.split("\nsummary: ")[1]!))
        expect(summary.status).toBe("error")
        expect(summary.errors.map((error) => error.code)).toStrictEqual(["stream_truncated"])
        expect(summary.reasoning.length).toBeGreaterThan(0)
      }
    }))

  it.effect("a replay that stops on invalid input ends both streams and exits 1", () =>
    Effect.gen(function*() {
      const bad = scratchFile(
        "bad.sse",
        "event: message_start\ndata: {\"type\": \"message_start\", \"message\": 7}\n\n"
      )
      const { code, stdout, stderr } = yield* run("replay", "--provider", "anthropic", "--jsonl", bad)
      expect(code).toBe(1)
      expect(stderr).toMatch(/^sluice: .*line 1/)
      const payloads = stdout.trim().split("\n").map((line) => JSON.parse(JSON.parse(line).payload) as { type: string })
      expect(payloads.map((payload) => payload.type)).toContain("turn_error")
    }))

  it.effect("--jsonl prints exactly one StreamBMessage a line, ending with the turn's completion", () =>
    Effect.gen(function*() {
      const turn = "0b4c7a52-9a55-4f1e-8f0a-3a1b2c3d4e5f"
      const { code, stdout } = yield* run(
        "replay",
        "--provider",
        "anthropic",
        "--jsonl",
        "--turn",
        turn,
        join(recorded, "anthropic", "thinking-then-tool.sse")
      )
      expect(code).toBe(0)
      const messages = stdout.trim().split("\n").map((line) =>
        Schema.decodeUnknownSync(StreamBMessage.StreamBMessage)(JSON.parse(line))
      )
      expect(messages.every((message) => message.turnId === turn)).toBe(true)
      const payloads = messages.map((message) =>
        JSON.parse(message.payload) as { type: string; changeType?: string; itemType?: string }
      )
      expect(payloads[0]?.type).toBe("turn_started")
      expect(payloads.at(-1)).toMatchObject({ type: "turn_completed", status: "complete" })
      expect(payloads.filter((p) => p.changeType === "completed").map((p) => p.itemType)).toStrictEqual([
        "reasoning",
        "tool_call"
      ])
    }))

  it.effect("prints upserts and a summary naming the streams, and refuses a turn id that is not a UUID", () =>
    Effect.gen(function*() {
      const human = yield* run("replay", "--provider", "openai-chat", join(recorded, "openai-chat", "text-simple.sse"))
      expect(human.code).toBe(0)
      expect(human.stdout).toContain("upsert message/completed item_0 \"Olá!\"")
      expect(human.stdout).toMatch(/Stream B: codex:turn:\{[0-9a-f-]{36}\}:upserts/)
      const bad = yield* run(
        "replay",
        "--provider",
        "openai-chat",
        "--turn",
        "not-a-uuid",
        join(recorded, "openai-chat", "text-simple.sse")
      )
      expect(bad.code).toBe(2)
      expect(bad.stderr).toContain("--turn must be a UUID")
    }))
})

describe("the sluice executable", () => {
  const exec = (args: ReadonlyArray<string>) =>
    Effect.callback<{ code: number; stdout: string; stderr: string }>((resume) => {
      execFile(
        process.execPath,
        ["--import", "tsx", bin, ...args],
        { cwd: root, env: { ...process.env, REDIS_URL: undefined } },
        (error, stdout, stderr) =>
          resume(Effect.succeed({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }))
      )
    })

  it.effect(
    "exits 0, 1 and 2 as docs/errors.md#exit-codes says, never with a stack trace",
    () =>
      Effect.gen(function*() {
        const [ok, invalid, usage] = yield* Effect.all([
          exec(["normalize", "--provider", "gemini", join(recorded, "gemini", "tool-parallel.sse")]),
          exec(["normalize", "--provider", "openai-chat", scratchFile("broken.sse", "data: {\"choices\": [}\n\n")]),
          exec(["normalize", "--provider", "openai-chat"])
        ], { concurrency: "unbounded" })
        expect(ok.code).toBe(0)
        expect(JSON.parse(ok.stdout)).toMatchObject({ provider: "gemini", status: "complete" })
        expect(invalid.code).toBe(1)
        expect(invalid.stderr).toMatch(/line 1/)
        expect(usage.code).toBe(2)
        for (const result of [invalid, usage]) expect(result.stderr).not.toMatch(/\n\s+at /)
      }),
    360_000
  ) // three processes at once, each compiling the sources through tsx, on a busy machine
})

/**
 * `pnpm bench languageModel`: `effect/ai`'s `LanguageModel.streamText` on Sluice
 * (`SluiceLanguageModel`: the live `ProviderClient` through `FetchHttpClient` and a fake
 * `fetch`, the normalizer, the parts conversion, `effect/ai`'s decoding of the parts) on
 * the repository's transcripts of each wire API, next to Sluice's normalizer alone
 * (`decodeSse`) on the same bytes: CPU time per SSE event (the wire's chunk) of each,
 * and what the `LanguageModel` layer costs on top.
 *
 * Effect's own providers are not beside it: `@effect/ai-openai` and
 * `@effect/ai-anthropic` 4.0.0-beta.106 (their newest 4.x releases) declare the peer
 * `effect ^4.0.0-beta.106` but import `effect/unstable/ai/*`, `effect/unstable/http/*`
 * and `effect/Encoding`, which effect 4.1.5 no longer has: they do not load on the
 * effect this repository runs (`ERR_MODULE_NOT_FOUND`).
 */
import { SluiceLanguageModel } from "@sluice/effect-ai"
import { Providers } from "@sluice/providers"
import { transcriptsDir } from "@sluice/testing/fixtures"
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { recordedFetch } from "./aiSdk.js"
import { reads } from "./harness.js"

const fixtures = transcriptsDir

/** The transcripts of one wire API in the repository. */
const transcriptsOf = (wire: string): Array<{ readonly name: string; readonly chunks: Array<Uint8Array> }> =>
  [join(fixtures, wire), join(fixtures, "recorded", wire)].flatMap((dir) => {
    let names: Array<string> = []
    try {
      names = readdirSync(dir).filter((name) => name.endsWith(".sse"))
    } catch {
      // none here
    }
    return names.map((name) => ({ name, chunks: reads(readFileSync(join(dir, name)), 16 * 1024) }))
  })

/** SSE events in a body: its blank-line-separated blocks that carry data. */
const eventsIn = (chunks: ReadonlyArray<Uint8Array>): number =>
  chunks.map((chunk) => new TextDecoder().decode(chunk)).join("").split(/\r?\n\r?\n/).filter((block) =>
    /(^|\n)data:/.test(block)
  ).length

/** The body the fake `fetch` answers with next. */
let current: ReadonlyArray<Uint8Array> = []
const fetch: typeof globalThis.fetch = (input, init) => recordedFetch(current)(input, init)
const http = FetchHttpClient.layer.pipe(Layer.provide(Layer.succeed(FetchHttpClient.Fetch, fetch)))

type Runtime = ManagedRuntime.ManagedRuntime<LanguageModel.LanguageModel, never>

/** Reads one transcript with `streamText` to its end: its part count, or undefined when it failed or erred. */
const readOne = (runtime: Runtime, chunks: ReadonlyArray<Uint8Array>): Promise<number | undefined> => {
  current = chunks
  return runtime.runPromiseExit(
    Stream.runCollect(LanguageModel.streamText({ prompt: "bench" }))
  ).then((exit) =>
    Exit.isSuccess(exit) && exit.value.every((part) => part.type !== "error") &&
      exit.value.some((part) => part.type === "finish")
      ? exit.value.length
      : undefined
  )
}

const apiKey = Redacted.make("bench")
const wires = ["anthropic", "openai-chat", "openai-responses", "gemini"] as const

/** Sluice's normalizer alone on one transcript: its event count, or undefined when it failed. */
const decodeOne = (wire: typeof wires[number], chunks: ReadonlyArray<Uint8Array>): Promise<number | undefined> =>
  Effect.runPromiseExit(
    Stream.runCount(Stream.fromIterable(chunks).pipe(Providers.get(wire).decodeSse({ modelId: "bench" })))
  ).then((exit) => Exit.isSuccess(exit) ? exit.value : undefined)

/** Reads every transcript once on each pass: the parts read in all. */
const readAll = async (
  read: (chunks: ReadonlyArray<Uint8Array>) => Promise<number | undefined>,
  all: ReadonlyArray<ReadonlyArray<Uint8Array>>,
  passes: number
) => {
  let parts = 0
  for (let pass = 0; pass < passes; pass++) {
    for (const chunks of all) parts += (await read(chunks)) ?? 0
  }
  return parts
}

/**
 * The median CPU seconds of this process per run of each side, the sides run in
 * alternating rounds after `warmup` rounds, so a change of load hits both alike.
 */
const cpuMedians = async (
  sides: readonly [() => Promise<unknown>, () => Promise<unknown>],
  warmup: number,
  rounds: number
): Promise<readonly [number, number]> => {
  const cpu: readonly [Array<number>, Array<number>] = [[], []]
  for (let round = 0; round < warmup + rounds; round++) {
    for (const side of [0, 1] as const) {
      const start = process.cpuUsage()
      await sides[side]()
      const used = process.cpuUsage(start)
      if (round >= warmup) cpu[side].push((used.user + used.system) / 1e6)
    }
  }
  const median = (values: Array<number>) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0
  return [median(cpu[0]), median(cpu[1])]
}

export const run = async (): Promise<string> => {
  const lines = [
    "\n## effect/ai LanguageModel.streamText on Sluice, the repository's transcripts",
    "",
    "| wire API | transcripts (SSE events) | decodeSse, CPU µs/event | streamText, CPU µs/event | streamText / decodeSse |",
    "|---|---:|---:|---:|---:|"
  ]
  for (const wire of wires) {
    const runtime: Runtime = ManagedRuntime.make(
      SluiceLanguageModel.layer({
        provider: wire,
        model: "bench",
        apiKeys: [apiKey],
        baseUrl: "http://bench",
        retry: { maxRetries: 0 }
      }).pipe(Layer.provide(http))
    )
    const kept: Array<Array<Uint8Array>> = []
    for (const { chunks } of transcriptsOf(wire)) {
      // a transcript that is an error on purpose, or a turn of tool calls (an error part without a toolkit), is left out
      if ((await readOne(runtime, chunks)) !== undefined && (await decodeOne(wire, chunks)) !== undefined) {
        kept.push(chunks)
      }
    }
    const events = kept.reduce((sum, chunks) => sum + eventsIn(chunks), 0)
    const passes = Math.max(1, Math.ceil(20_000 / Math.max(1, events)))
    const [decodeCpu, streamCpu] = await cpuMedians(
      [
        () => readAll((chunks) => decodeOne(wire, chunks), kept, passes),
        () => readAll((chunks) => readOne(runtime, chunks), kept, passes)
      ],
      2,
      7
    )
    const perEvent = (seconds: number) => (seconds / (events * passes) * 1e6).toFixed(2)
    lines.push(
      `| ${wire} | ${kept.length} (${events}) | ${perEvent(decodeCpu)} | ${perEvent(streamCpu)} | ${
        (streamCpu / decodeCpu).toFixed(2)
      }x |`
    )
    await runtime.dispose()
  }
  lines.push(
    "",
    "Medians of this process's CPU time, the two run in alternating rounds. Effect's own providers",
    "(`@effect/ai-openai`, `@effect/ai-anthropic` 4.0.0-beta.106) do not load on effect 4.1.5: not compared."
  )
  return lines.join("\n")
}

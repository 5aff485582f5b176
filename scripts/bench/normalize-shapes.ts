/**
 * Normalization on ~10 MB transcripts of two shapes for every provider
 * (`pnpm bench normalize-shapes`): text-heavy (many text deltas) and tool-heavy
 * (parallel calls whose arguments stream in 1-7 byte fragments), Sluice's `Sse.decode`
 * + `normalize` next to the AI SDK provider model's `doStream` fed the same bytes, in
 * alternating rounds. `BENCH_SHAPES_MB` sets the size, `BENCH_SHAPES` and
 * `BENCH_PROVIDERS` pick the cases.
 */
import { createAnthropic } from "@ai-sdk/anthropic"
import { createGoogleGenerativeAI } from "@ai-sdk/google"
import { createOpenAI } from "@ai-sdk/openai"
import { Sse } from "@sluice/core"
import { Anthropic, Gemini, type Normalizer, OpenAiChat, OpenAiResponses } from "@sluice/providers"
import { drain, prompt, recordedFetch } from "./aiSdk.js"
import { compare, reads } from "./harness.js"
import { anthropicTranscript, openAiChatTranscript } from "./normalize-anthropic-openai-chat.js"
import { geminiTranscript, responsesTranscript } from "./normalize-responses-gemini.js"
import { body, count } from "./sse.js"
import * as Tools from "./toolTranscripts.js"

const BYTES = Number(process.env.BENCH_SHAPES_MB ?? 10) * 1e6
/** The shapes to run (`BENCH_SHAPES=tool-heavy` for one); both by default. */
const SHAPES = (process.env.BENCH_SHAPES ?? "text-heavy,tool-heavy").split(",")
/** The providers to run, by a word of their name (`BENCH_PROVIDERS=gemini,anthropic`); all by default. */
const PROVIDERS = process.env.BENCH_PROVIDERS?.toLowerCase().split(",")

interface StreamingModel {
  readonly doStream: (
    options: { readonly prompt: typeof prompt }
  ) => PromiseLike<{ readonly stream: ReadableStream<unknown> }>
}

/** Text-heavy transcripts of about `BYTES`: each generator's bytes per delta, measured on a small one. */
const textOf = (make: (deltas: number) => string): string => {
  const small = make(1000).length / 1000
  return make(Math.round(BYTES / small))
}

const providers: ReadonlyArray<{
  readonly name: string
  readonly normalize: Normalizer.Normalize
  readonly model: (fetch: typeof globalThis.fetch) => StreamingModel
  readonly text: () => string
  readonly tools: () => string
}> = [
  {
    name: "OpenAI Chat Completions",
    normalize: OpenAiChat.normalize,
    model: (fetch) => createOpenAI({ apiKey: "bench", fetch }).chat("gpt-4o"),
    text: () => textOf(openAiChatTranscript),
    tools: () => Tools.openAiChat(BYTES)
  },
  {
    name: "OpenAI Responses",
    normalize: OpenAiResponses.normalize,
    model: (fetch) => createOpenAI({ apiKey: "bench", fetch }).responses("gpt-5"),
    text: () => textOf(responsesTranscript),
    tools: () => Tools.openAiResponses(BYTES)
  },
  {
    name: "Anthropic Messages",
    normalize: Anthropic.normalize,
    model: (fetch) => createAnthropic({ apiKey: "bench", fetch })("claude-sonnet-4-5"),
    text: () => textOf(anthropicTranscript),
    tools: () => Tools.anthropic(BYTES)
  },
  {
    name: "Gemini",
    normalize: Gemini.normalize,
    model: (fetch) => createGoogleGenerativeAI({ apiKey: "bench", fetch })("gemini-2.5-pro"),
    text: () => textOf(geminiTranscript),
    tools: () => Tools.gemini(BYTES)
  }
]

/** The transcript's `data:` payloads, each one event's JSON (cut out once, not timed). */
const dataLines = (bytes: Uint8Array): ReadonlyArray<string> => {
  const lines: Array<string> = []
  for (const line of new TextDecoder().decode(bytes).split("\n")) {
    if (line.startsWith("data: ") && line !== "data: [DONE]") lines.push(line.slice(6))
  }
  if (lines.length === 0) throw new Error("no data lines in the transcript")
  return lines
}

/** `JSON.parse` of every event's JSON and nothing else: what no decoder that reads it can skip. */
const parseEvery = (lines: ReadonlyArray<string>): number => {
  for (const line of lines) JSON.parse(line)
  return lines.length
}

/** Runs the two-shape normalization benchmark and returns its report. */
export const run = async (): Promise<string> => {
  const lines = [
    `\n## Normalization against the AI SDK, ~${(BYTES / 1e6).toFixed(0)} MB transcripts of two shapes, 16 KiB reads`,
    "",
    "| provider | shape | MB | events | AI SDK MB/s | Sluice MB/s | wall ratio | CPU ratio | ceiling: AI SDK over JSON.parse alone |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|"
  ]
  for (const provider of providers) {
    if (PROVIDERS !== undefined && !PROVIDERS.some((word) => provider.name.toLowerCase().includes(word))) continue
    for (const [shape, make] of [["text-heavy", provider.text], ["tool-heavy", provider.tools]] as const) {
      if (!SHAPES.includes(shape)) continue
      const bytes = new TextEncoder().encode(make())
      const chunks = reads(bytes, 16 * 1024)
      const comparison = await compare(
        bytes.length,
        {
          name: "AI SDK doStream",
          run: async () => drain((await provider.model(recordedFetch(chunks)).doStream({ prompt })).stream)
        },
        { name: "Sluice", run: () => count(body(chunks).pipe(Sse.decode(), provider.normalize())) },
        { warmup: 1, rounds: 3 }
      )
      // Sluice against the parse-only floor, alternated as well: the ceiling is the AI
      // SDK's time over the floor's, through Sluice's time measured beside each.
      const sluice = { name: "Sluice", run: () => count(body(chunks).pipe(Sse.decode(), provider.normalize())) }
      const events = dataLines(bytes)
      const floor = await compare(
        bytes.length,
        { name: "JSON.parse alone", run: () => parseEvery(events) },
        sluice,
        {
          warmup: 1,
          rounds: 3
        }
      )
      const ceiling = comparison.wallRatio / floor.wallRatio
      const mbs = (seconds: number) => (bytes.length / seconds / 1e6).toFixed(1)
      lines.push(
        `| ${provider.name} | ${shape} | ${(bytes.length / 1e6).toFixed(1)} | ${
          comparison.subject.events.toLocaleString("en-US")
        } | ` +
          `${mbs(comparison.reference.seconds)} | ${mbs(comparison.subject.seconds)} | ` +
          `${comparison.wallRatio.toFixed(1)}x | ${comparison.cpuRatio.toFixed(1)}x | ${ceiling.toFixed(1)}x |`
      )
    }
  }
  lines.push(
    "",
    "Ratios: the AI SDK's median time over Sluice's (rounds alternated; 1 warm-up, 3 measured rounds each). " +
      "The ceiling is the AI SDK's median time over that of only `JSON.parse`-ing each event's JSON (cut out " +
      "of the transcript beforehand) and nothing else (measured against Sluice in alternated rounds as well): the most any " +
      "decoder that parses each event's JSON could reach."
  )
  return lines.join("\n")
}

/**
 * `pnpm bench [section ...]`: runs the benchmark sections (all by default) in this one
 * process and prints a Markdown report. Results are written down in BENCHMARKS.md.
 */
import * as Accumulator from "./bench/accumulator.js"
import * as Durable from "./bench/durable.js"
import * as NormalizeAnthropicOpenAiChat from "./bench/normalize-anthropic-openai-chat.js"
import * as NormalizeResponsesGemini from "./bench/normalize-responses-gemini.js"
import * as NormalizeShapes from "./bench/normalize-shapes.js"
import * as Pace from "./bench/pace.js"
import * as Pipeline from "./bench/pipeline.js"
import * as PipelineStages from "./bench/pipelineStages.js"
import * as Readers from "./bench/readers.js"
import * as Sse from "./bench/sse.js"
import * as Startup from "./bench/startup.js"
import * as Storage from "./bench/storage.js"
import * as TurnMemory from "./bench/turnMemory.js"
import * as Upserts from "./bench/upserts.js"

const sections: Record<string, () => Promise<string>> = {
  sse: Sse.run,
  "normalize-anthropic-openai-chat": NormalizeAnthropicOpenAiChat.run,
  "normalize-responses-gemini": NormalizeResponsesGemini.run,
  "normalize-shapes": NormalizeShapes.run,
  accumulator: Accumulator.run,
  upserts: Upserts.run,
  pipeline: Pipeline.run,
  "pipeline-stages": PipelineStages.run,
  startup: Startup.run,
  pace: Pace.run,
  storage: Storage.run,
  durable: Durable.run,
  readers: Readers.run,
  "turn-memory": TurnMemory.run
}

const main = async () => {
  const wanted = process.argv.slice(2)
  const names = wanted.length > 0 ? wanted : Object.keys(sections)
  process.stdout.write(`# Sluice benchmarks (node ${process.version}, ${new Date().toISOString()})\n`)
  for (const name of names) {
    const section = sections[name]
    if (section === undefined) {
      process.stderr.write(`unknown section ${name}; known: ${Object.keys(sections).join(", ")}\n`)
      process.exitCode = 2
      return
    }
    process.stdout.write((await section()) + "\n")
  }
}

await main()

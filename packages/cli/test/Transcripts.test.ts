import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import { Summary, Turn } from "@sluice/accumulator"
import { StreamEvent } from "@sluice/core"
import { transcriptsDir } from "@sluice/testing/fixtures"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { Cli, Output } from "../src/index.js"

// Every transcript in the repository that has the non-streaming response of the same
// content next to it: the summary `sluice normalize` prints must be the same for both,
// and the same as the fold of the events `--events` prints.
const fixtures = transcriptsDir
// each provider's folder (the recorded bodies, and the shared turn file beside them, aside)
const providers = readdirSync(fixtures, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== "recorded")
  .map((entry) => entry.name)
const pairs = providers.flatMap((provider) =>
  readdirSync(join(fixtures, provider))
    .filter((file) => file.endsWith(".sse") && existsSync(join(fixtures, provider, file.replace(/\.sse$/, ".json"))))
    .map((file) => ({
      provider,
      sse: join(fixtures, provider, file),
      json: join(fixtures, provider, file.replace(/\.sse$/, ".json"))
    }))
)

const run = (...args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const output = Output.memory()
    const exit = yield* Cli.run(["node", "sluice", ...args]).pipe(
      Effect.provide(Layer.merge(NodeServices.layer, output.layer)),
      Effect.exit
    )
    expect(output.stderr()).toBe("")
    expect(Cli.exitCode(exit)).toBe(0)
    return output.stdout()
  })

const decodeEvent = Schema.decodeUnknownSync(StreamEvent.StreamEvent)

describe("every transcript pair in the repository", () => {
  it("there are pairs for every wire API", () => {
    expect(new Set(pairs.map((pair) => pair.provider))).toStrictEqual(
      new Set(["anthropic", "gemini", "openai-chat", "openai-responses"])
    )
  })

  for (const pair of pairs) {
    it.effect(`${pair.provider}/${pair.sse.split("/").at(-1)}: streamed summary = non-streaming summary = fold of --events`, () =>
      Effect.gen(function*() {
        const streamed = JSON.parse(yield* run("normalize", "--provider", pair.provider, pair.sse))
        const nonStreaming = JSON.parse(
          yield* run("normalize", "--provider", pair.provider, "--non-streaming", pair.json)
        )
        const events = (yield* run("normalize", "--provider", pair.provider, "--events", pair.sse))
          .trim()
          .split("\n")
          .map((line) => decodeEvent(JSON.parse(line)))
        expect(nonStreaming).toStrictEqual(streamed)
        expect(Summary.fromTurn(Result.getOrThrow(Turn.fromEvents(events)))).toStrictEqual(streamed)
      }))
  }
})

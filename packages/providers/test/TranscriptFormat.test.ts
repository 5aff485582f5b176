import { describe, expect, it } from "@effect/vitest"
import { transcriptsDir } from "@sluice/testing/fixtures"
import * as Option from "effect/Option"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { ProviderName, TranscriptFormat } from "../src/index.js"

const fixtures = transcriptsDir

// Every transcript in the repository (SSE bodies, non-streaming JSON bodies), with the
// format of the folder it lies in.
const transcripts = [fixtures, join(fixtures, "recorded")].flatMap((base) =>
  readdirSync(base)
    .filter((dir) => ProviderName.ProviderName.literals.some((name) => name === dir))
    .flatMap((dir) =>
      readdirSync(join(base, dir))
        .filter((file) => (file.endsWith(".sse") || file.endsWith(".json")) && !file.endsWith(".source.json"))
        .map((file) => ({
          path: join(base, dir, file),
          name: `${dir}/${file}`,
          provider: dir as ProviderName.ProviderName
        }))
    )
)

describe("TranscriptFormat.detect", () => {
  it("tells every transcript in the repository as the format its provider reads", () => {
    expect(transcripts.length).toBeGreaterThan(20)
    const wrong = transcripts.flatMap((transcript) => {
      const detected = TranscriptFormat.detect(readFileSync(transcript.path, "utf8"))
      return Option.contains(detected, TranscriptFormat.ofProvider(transcript.provider))
        ? []
        : [[transcript.name, detected]]
    })
    expect(wrong).toStrictEqual([])
  })

  it("reads AI SDK stream parts, JSON lines and single payloads", () => {
    const parts = [
      "data: {\"type\":\"start\"}",
      "data: {\"type\":\"start-step\"}",
      "data: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"Hi\"}"
    ].join("\n\n")
    expect(TranscriptFormat.detect(parts)).toStrictEqual(Option.some("ai-sdk"))
    expect(TranscriptFormat.detect("{\"type\":\"response.created\"}\n{\"type\":\"response.completed\"}")).toStrictEqual(
      Option.some("openai-responses")
    )
    expect(TranscriptFormat.detect("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}]}}]}")).toStrictEqual(
      Option.some("gemini")
    )
    expect(TranscriptFormat.detect("event: message_start\n\n")).toStrictEqual(Option.some("anthropic"))
  })

  it("names nothing for text that is none of them", () => {
    for (const text of ["", "hello", "data: [DONE]\n\n", "data: {\"type\":\"ping\"}\n\n", "{nope"]) {
      expect(TranscriptFormat.detect(text)).toStrictEqual(Option.none())
    }
  })

  it("labels each format for people; openai-compatible reads OpenAI Chat's", () => {
    expect(TranscriptFormat.label("anthropic")).toBe("an Anthropic Messages stream")
    expect(TranscriptFormat.ofProvider("openai-compatible")).toBe("openai-chat")
  })
})

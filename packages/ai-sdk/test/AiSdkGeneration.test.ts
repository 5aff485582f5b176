/**
 * `AiSdkGeneration.generateStreaming(model, messages, options)`: the AI SDK's
 * `streamText` on a model, as the `IContent`s Sluice's own `generateStreaming` gives.
 */
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider"
import { describe, expect, it } from "@effect/vitest"
import type { IContent } from "@sluice/accumulator"
import { ProviderError } from "@sluice/core"
import { jsonSchema, simulateReadableStream } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { AiSdkGeneration } from "../src/index.js"

const usage = {
  inputTokens: { total: 10, noCache: 7, cacheRead: 3, cacheWrite: 0 },
  outputTokens: { total: 5, text: 3, reasoning: 2 }
}

const mockModel = (chunks: ReadonlyArray<LanguageModelV4StreamPart>) =>
  new MockLanguageModelV4({
    modelId: "mock-model",
    doStream: async () => ({
      stream: simulateReadableStream({ chunks: [...chunks], initialDelayInMs: null, chunkDelayInMs: null })
    })
  })

/** Every `IContent` the iterable yields, and what it rejected with, if anything. */
const drain = async (iterable: AsyncIterable<IContent.IContent>) => {
  const contents: Array<IContent.IContent> = []
  try {
    for await (const content of iterable) contents.push(content)
    return { contents, failure: undefined }
  } catch (failure) {
    return { contents, failure }
  }
}

/** A tool without `execute`: the turn ends at its call, which the caller runs. */
const add = { description: "Adds one", inputSchema: jsonSchema({ type: "object" }) }

describe("AiSdkGeneration.generateStreaming", () => {
  it("gives text pieces as they come, then the calls to run (history ids), then the usage", async () => {
    const model = mockModel([
      { type: "stream-start", warnings: [] },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Hel" },
      { type: "text-delta", id: "t", delta: "" },
      { type: "text-delta", id: "t", delta: "lo" },
      { type: "text-end", id: "t" },
      { type: "tool-input-start", id: "call_1", toolName: "add" },
      { type: "tool-input-delta", id: "call_1", delta: "{\"a\":1}" },
      { type: "tool-input-end", id: "call_1" },
      { type: "tool-call", toolCallId: "call_1", toolName: "add", input: "{\"a\":1}" },
      { type: "finish", usage, finishReason: { unified: "tool-calls", raw: "tool_use" } }
    ])
    const { contents, failure } = await drain(
      AiSdkGeneration.generateStreaming(model, [{ role: "user", content: "add one" }], {
        system: "Be brief.",
        temperature: 0.3,
        tools: { add }
      })
    )
    expect(failure).toBeUndefined()
    const blocks = contents.flatMap((content) => content.blocks)
    expect(blocks.filter((block) => block.type === "text").map((block) => block.type === "text" && block.text))
      .toStrictEqual(["Hel", "lo"])
    const calls = blocks.flatMap((block) => block.type === "tool_call" ? [block] : [])
    expect(calls).toHaveLength(1)
    expect(calls[0]).toMatchObject({ name: "add", parameters: { a: 1 } })
    expect(calls[0]?.id).toMatch(/^hist_tool_/)
    expect(contents[contents.length - 1]?.metadata?.usage).toStrictEqual({ inputTokens: 10, outputTokens: 5 })
    // the call options reached the model
    const call = model.doStreamCalls[0]
    expect(call?.temperature).toBe(0.3)
    expect(call?.prompt[0]).toMatchObject({ role: "system", content: "Be brief." })
    expect(call?.tools?.map((definition) => definition.name)).toStrictEqual(["add"])
  }, 30_000)

  it("rejects with the classified ProviderError after the text that came before it", async () => {
    const model = mockModel([
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "par" },
      { type: "error", error: Object.assign(new Error("Too many requests"), { statusCode: 429, isRetryable: true }) }
    ])
    const { contents, failure } = await drain(
      AiSdkGeneration.generateStreaming(model, [{ role: "user", content: "x" }], { onError: () => {} })
    )
    expect(contents.flatMap((content) => content.blocks)).toStrictEqual([{ type: "text", text: "par" }])
    expect(failure).toBeInstanceOf(ProviderError.ProviderError)
    expect(failure).toMatchObject({ type: "rate_limit", status: 429, retryable: true })
  }, 30_000)
})

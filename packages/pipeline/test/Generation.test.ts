/**
 * The first design's `generateStreaming` against a loopback HTTP server that replays recorded
 * provider answers (test/fixtures/generation/README.md names their sources).
 */
import { describe, expect, it } from "@effect/vitest"
import type { IContent } from "@sluice/accumulator"
import { ProviderError } from "@sluice/core"
import { LlmRequest, ProviderClient } from "@sluice/providers"
import * as Loopback from "@sluice/testing/providers"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Generation } from "../src/index.js"

const fixture = (name: string) => readFileSync(join(__dirname, "fixtures", "generation", name), "utf8")

// The providers' loopback server (a recorded answer per request, SSE one event per
// write), for the async tests of the `AsyncIterable` form: open until `close`.
const serve = async (replies: ReadonlyArray<Loopback.Reply>) => {
  const scope = Effect.runSync(Scope.make())
  const loopback = await Effect.runPromise(Scope.provide(Loopback.serve(replies), scope))
  return {
    url: loopback.url,
    requests: loopback.requests,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const sse = (body: string): Loopback.Reply => ({ _tag: "sse", body })

const settings = (provider: ProviderClient.Settings["provider"], baseUrl: string): ProviderClient.Settings => ({
  provider,
  apiKeys: [Redacted.make("key-a")],
  baseUrl,
  retry: { maxRetries: 0 }
})

const collect = async (iterable: AsyncIterable<IContent.IContent>) => {
  const out: Array<IContent.IContent> = []
  for await (const content of iterable) out.push(content)
  return out
}

const request = LlmRequest.prompt("claude-sonnet-4-20250514", "Add and multiply 2 and 3")

describe("Generation.generateStreaming", () => {
  it("yields each text piece, then the tool calls in history form, then the usage", async () => {
    const server = await serve([sse(fixture("anthropic-tool-parallel.sse"))])
    try {
      const contents = await collect(Generation.generateStreaming(settings("anthropic", server.url), request))
      const texts = contents.flatMap((content) =>
        content.blocks.flatMap((block) => (block.type === "text" ? [block.text] : []))
      )
      // every piece is its own IContent, empty pieces skipped
      expect(texts).toStrictEqual(["I'll add and", " multiply the numbers", " 2 and 3 for", " you."])
      expect(contents.slice(0, 4).every((content) => content.blocks.length === 1)).toBe(true)
      expect(contents[4]).toStrictEqual({
        speaker: "ai",
        blocks: [
          {
            type: "tool_call",
            id: "hist_tool_toolu_01UYxUYC2zRPY8wiutnF48eP",
            name: "add",
            parameters: { a: 2, b: 3 }
          },
          {
            type: "tool_call",
            id: "hist_tool_toolu_01VaRx1jpWCvPhi7L4kywAcd",
            name: "multiply",
            parameters: { a: 2, b: 3 }
          }
        ]
      })
      expect(contents[5]).toStrictEqual({
        speaker: "ai",
        blocks: [],
        metadata: { usage: { inputTokens: 502, outputTokens: 137 } }
      })
      expect(contents).toHaveLength(6)
      expect(server.requests()).toHaveLength(1)
      expect((server.requests()[0]?.body as Record<string, unknown>).stream).toBe(true)
    } finally {
      await server.close()
    }
  }, 30_000)

  it("takes GenerationOptions: temperature, maxTokens, tools without parameters", async () => {
    const server = await serve([sse(fixture("openai-chat-tool-parallel.sse"))])
    try {
      const live = await Effect.runPromise(
        ProviderClient.make(settings("openai-chat", server.url)).pipe(Effect.provide(FetchHttpClient.layer))
      )
      const contents = await collect(Generation.generateStreaming(live, LlmRequest.prompt("gpt-4o-mini", "hi"), {
        temperature: 2,
        maxTokens: 200,
        tools: [{ name: "add", description: "adds" }, { name: "multiply", parameters: { type: "object" } }]
      }))
      const body = server.requests()[0]?.body as Record<string, unknown>
      expect(body.temperature).toBe(2)
      expect(
        (body.tools as ReadonlyArray<{ readonly function: { readonly parameters: unknown } }>).map((tool) =>
          tool.function.parameters
        )
      ).toStrictEqual([{}, { type: "object" }])
      const calls = contents.flatMap((content) => content.blocks.filter((block) => block.type === "tool_call"))
      expect(calls.map((call) => call.name)).toStrictEqual(["add", "multiply"])
      expect(calls.every((call) => call.id.startsWith("hist_tool_"))).toBe(true)
      expect(contents.at(-1)?.metadata?.usage).toBeDefined()
    } finally {
      await server.close()
    }
  }, 30_000)

  it("a temperature above 2 rejects the first next() with LlmRequestError naming it, and sends nothing", async () => {
    const server = await serve([])
    try {
      const iterable = Generation.generateStreaming(settings("gemini", server.url), request, { temperature: 2.5 })
      await expect(collect(iterable)).rejects.toMatchObject({ _tag: "LlmRequestError", field: "temperature" })
      expect(server.requests()).toHaveLength(0)
    } finally {
      await server.close()
    }
  }, 30_000)

  it("a provider error mid-stream is thrown as its ProviderError after what came before", async () => {
    const server = await serve([sse(fixture("openrouter-midstream-error.sse"))])
    const yielded: Array<IContent.IContent> = []
    try {
      const iterable = Generation.generateStreaming(settings("openai-compatible", server.url), request)
      const failure = await (async () => {
        try {
          for await (const content of iterable) yielded.push(content)
          return undefined
        } catch (error) {
          return error
        }
      })()
      expect(failure).toBeInstanceOf(ProviderError.ProviderError)
      expect(failure).toMatchObject({ message: "Token limit reached" })
      // no usage trailer after a failure
      expect(yielded.every((content) => content.metadata === undefined)).toBe(true)
    } finally {
      await server.close()
    }
  }, 30_000)

  it("streaming: false sends the non-streaming request and yields its answer in the same form", async () => {
    const server = await serve([
      { _tag: "status", status: 200, body: fixture("anthropic-thinking-tools.json") }
    ])
    try {
      const contents = await collect(
        Generation.generateStreaming(settings("anthropic", server.url), request, { streaming: false })
      )
      const body = server.requests()[0]?.body as Record<string, unknown>
      expect(body.stream).toBeUndefined()
      expect(server.requests()[0]?.headers.accept).toBe("application/json")
      expect(contents.at(-1)?.metadata?.usage).toBeDefined()
      expect(contents.some((content) => content.blocks.some((block) => block.type === "tool_call"))).toBe(true)
    } finally {
      await server.close()
    }
  }, 30_000)

  it.effect("the Effect form: Generation.stream on the ProviderClient service", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.serve([sse(fixture("anthropic-tool-parallel.sse"))])
      const contents = yield* Generation.streamWith(request).pipe(
        Stream.runCollect,
        Effect.provide(ProviderClient.layer(settings("anthropic", server.url))),
        Effect.provide(FetchHttpClient.layer)
      )
      expect(contents.at(-1)?.metadata?.usage).toStrictEqual({ inputTokens: 502, outputTokens: 137 })
      expect(contents.filter((content) => content.blocks.some((block) => block.type === "text"))).toHaveLength(4)
    }), 30_000)
})

/**
 * A tool given without a description (the first design's default `''`) and one with `""` send
 * the same request to every wire API: no description key
 * (docs/decisions/tool-description-default.md); a description given is sent.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import { type LlmRequest, LlmRequest as Requests, Providers } from "../src/index.js"
import { ProviderName } from "../src/ProviderName.js"
import type { ProviderName as Provider } from "../src/ProviderName.js"

const requestWith = (tool: LlmRequest.ToolDefinition): LlmRequest.LlmRequest => ({
  model: "m",
  messages: [{ _tag: "user", text: "hi" }],
  tools: [tool]
})

const encoded = (provider: Provider, tool: LlmRequest.ToolDefinition): string =>
  JSON.stringify(Providers.encode(provider, requestWith(tool), { apiKey: "k", baseUrl: "http://x" }).body)

describe("a tool's description", () => {
  it("decodes absent when the tool gives none", () => {
    const decoded = Requests.validateResult({
      ...requestWith({ name: "lookup", parameters: {} }),
      tools: [{ name: "lookup" }]
    })
    expect(Result.isSuccess(decoded) && decoded.success.tools).toStrictEqual([{ name: "lookup", parameters: {} }])
  }, 30_000)

  for (const provider of ProviderName.literals) {
    it(`${provider}: absent and "" send the same request, with no description; one given is sent`, () => {
      const none = encoded(provider, { name: "lookup", parameters: {} })
      expect(encoded(provider, { name: "lookup", description: "", parameters: {} })).toBe(none)
      expect(none).not.toContain("\"description\"")
      expect(encoded(provider, { name: "lookup", description: "Finds a thing", parameters: {} })).toContain(
        "\"description\":\"Finds a thing\""
      )
    }, 30_000)
  }
})

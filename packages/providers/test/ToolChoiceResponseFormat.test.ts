/**
 * `toolChoice` and `responseFormat` in every wire API's request, as each API documents
 * them (docs/providers.md#tool-choice-and-response-format), left out when unset; a
 * forced tool the request does not define is refused naming `toolChoice.tool`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import { LlmRequest, Providers } from "../src/index.js"
import type { ProviderName } from "../src/ProviderName.js"

const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }

const base: LlmRequest.LlmRequest = {
  model: "m",
  messages: [{ _tag: "user", text: "Weather in Paris?" }],
  tools: [{ name: "weather", description: "Current weather", parameters: schema }]
}

const bodyOf = (provider: ProviderName, options: Partial<LlmRequest.LlmRequest>) =>
  Providers.encode(provider, { ...base, ...options }, { apiKey: "k", baseUrl: "http://x" }).body

/** What each API's body carries for each tool choice: [auto, none, required, { tool }]. */
const choices: Record<ProviderName, { readonly key: string; readonly values: ReadonlyArray<unknown> }> = {
  "openai-chat": {
    key: "tool_choice",
    values: ["auto", "none", "required", { type: "function", function: { name: "weather" } }]
  },
  "openai-compatible": {
    key: "tool_choice",
    values: ["auto", "none", "required", { type: "function", function: { name: "weather" } }]
  },
  "openai-responses": {
    key: "tool_choice",
    values: ["auto", "none", "required", { type: "function", name: "weather" }]
  },
  anthropic: {
    key: "tool_choice",
    values: [{ type: "auto" }, { type: "none" }, { type: "any" }, { type: "tool", name: "weather" }]
  },
  gemini: {
    key: "toolConfig",
    values: [
      { functionCallingConfig: { mode: "AUTO" } },
      { functionCallingConfig: { mode: "NONE" } },
      { functionCallingConfig: { mode: "ANY" } },
      { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["weather"] } }
    ]
  }
}

const toolChoices: ReadonlyArray<LlmRequest.ToolChoice> = ["auto", "none", "required", { tool: "weather" }]

describe("tool choice", () => {
  for (const [provider, { key, values }] of Object.entries(choices) as Array<[ProviderName, typeof choices.gemini]>) {
    it(`${provider}: each choice as ${key}`, () => {
      toolChoices.forEach((toolChoice, index) => {
        expect(bodyOf(provider, { toolChoice })[key]).toStrictEqual(values[index])
      })
    }, 30_000)

    it(`${provider}: left out when unset, and without tools`, () => {
      expect(bodyOf(provider, {})).not.toHaveProperty(key)
      const { tools: _tools, ...withoutTools } = base
      const body = Providers.encode(provider, { ...withoutTools, toolChoice: "required" }, {
        apiKey: "k",
        baseUrl: "http://x"
      }).body
      expect(body).not.toHaveProperty(key)
    }, 30_000)
  }

  it("a forced tool the request does not define is refused naming toolChoice.tool", () => {
    const refused = LlmRequest.validateResult({ ...base, toolChoice: { tool: "lookup" } })
    expect(Result.isFailure(refused)).toBe(true)
    if (Result.isFailure(refused)) {
      expect(refused.failure.field).toBe("toolChoice.tool")
      expect(refused.failure.message).toContain("\"lookup\" is not one of the request's tools (weather)")
    }
    const checked = LlmRequest.checkResult({ ...base, tools: [], toolChoice: { tool: "lookup" } })
    expect(Result.isFailure(checked) && checked.failure.message).toContain("none defined")
    expect(Result.isSuccess(LlmRequest.validateResult({ ...base, toolChoice: { tool: "weather" } }))).toBe(true)
  }, 30_000)

  it("an unknown mode is refused naming toolChoice", () => {
    const refused = LlmRequest.validateResult({ ...base, toolChoice: "always" })
    expect(Result.isFailure(refused) && refused.failure.field).toBe("toolChoice")
  }, 30_000)
})

describe("response format", () => {
  const json = { type: "json", schema, name: "weather_query" } as const

  it("openai-chat and compatible: response_format json_schema, json_object, text", () => {
    for (const provider of ["openai-chat", "openai-compatible"] as const) {
      expect(bodyOf(provider, { responseFormat: json }).response_format).toStrictEqual({
        type: "json_schema",
        json_schema: { name: "weather_query", schema }
      })
      expect(bodyOf(provider, { responseFormat: { type: "json", schema } }).response_format).toStrictEqual({
        type: "json_schema",
        json_schema: { name: "response", schema }
      })
      expect(bodyOf(provider, { responseFormat: { type: "json" } }).response_format).toStrictEqual({
        type: "json_object"
      })
      expect(bodyOf(provider, { responseFormat: { type: "text" } }).response_format).toStrictEqual({ type: "text" })
      expect(bodyOf(provider, {})).not.toHaveProperty("response_format")
    }
  }, 30_000)

  it("openai-responses: text.format", () => {
    expect(bodyOf("openai-responses", { responseFormat: json }).text).toStrictEqual({
      format: { type: "json_schema", name: "weather_query", schema }
    })
    expect(bodyOf("openai-responses", { responseFormat: { type: "json" } }).text).toStrictEqual({
      format: { type: "json_object" }
    })
    expect(bodyOf("openai-responses", { responseFormat: { type: "text" } }).text).toStrictEqual({
      format: { type: "text" }
    })
    expect(bodyOf("openai-responses", {})).not.toHaveProperty("text")
  }, 30_000)

  it("anthropic: output_config.format json_schema for a schema, nothing otherwise", () => {
    expect(bodyOf("anthropic", { responseFormat: json }).output_config).toStrictEqual({
      format: { type: "json_schema", schema }
    })
    expect(bodyOf("anthropic", { responseFormat: { type: "json" } })).not.toHaveProperty("output_config")
    expect(bodyOf("anthropic", { responseFormat: { type: "text" } })).not.toHaveProperty("output_config")
    expect(bodyOf("anthropic", {})).not.toHaveProperty("output_config")
  }, 30_000)

  it("gemini: generationConfig responseMimeType and responseJsonSchema beside the other settings", () => {
    expect(bodyOf("gemini", { responseFormat: json, temperature: 0.5 }).generationConfig).toStrictEqual({
      temperature: 0.5,
      responseMimeType: "application/json",
      responseJsonSchema: schema
    })
    expect(bodyOf("gemini", { responseFormat: { type: "json" } }).generationConfig).toStrictEqual({
      responseMimeType: "application/json"
    })
    expect(bodyOf("gemini", { responseFormat: { type: "text" } }).generationConfig).toStrictEqual({
      responseMimeType: "text/plain"
    })
    expect(bodyOf("gemini", {})).not.toHaveProperty("generationConfig")
  }, 30_000)

  it("a schema that is not a JSON object is refused naming responseFormat", () => {
    const refused = LlmRequest.validateResult({ ...base, responseFormat: { type: "json", schema: "object" } })
    expect(Result.isFailure(refused) && refused.failure.field).toContain("responseFormat")
  }, 30_000)
})

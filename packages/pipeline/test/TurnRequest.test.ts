/**
 * A turn request's body checked (`POST /v1/turns`): the provider and thread taken out,
 * the rest an `LlmRequest` with its defaults; each bad body refused naming its field.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import { TurnRequest } from "../src/index.js"

const body = {
  provider: "anthropic",
  threadId: "7d6c5b4a-3f2e-4d1c-8b0a-9f8e7d6c5b4a",
  model: "claude-sonnet-4-5",
  messages: [{ _tag: "user", text: "Hi" }],
  tools: [{ name: "lookup" }]
}

const refusal = (given: unknown) => {
  const decoded = TurnRequest.decode(given)
  return Result.isFailure(decoded) ? decoded.failure.field : "accepted"
}

describe("TurnRequest.decode", () => {
  it("takes out the provider and the thread, and checks the rest as an LlmRequest", () => {
    const decoded = TurnRequest.decode(body)
    expect(Result.isSuccess(decoded)).toBe(true)
    if (Result.isFailure(decoded)) return
    expect(decoded.success.provider).toBe("anthropic")
    expect(decoded.success.threadId).toBe(body.threadId)
    expect(decoded.success.request.model).toBe("claude-sonnet-4-5")
    expect(decoded.success.request).not.toHaveProperty("provider")
    expect(decoded.success.request).not.toHaveProperty("threadId")
    // the LlmRequest's defaults: a tool without parameters gets {}
    expect(decoded.success.request.tools?.[0]?.parameters).toStrictEqual({})
  })

  it("refuses each bad body, naming the field", () => {
    expect(refusal([body])).toBe("request")
    expect(refusal(null)).toBe("request")
    expect(refusal({ ...body, provider: "nope" })).toBe("provider")
    expect(refusal({ ...body, provider: undefined })).toBe("provider")
    expect(refusal({ ...body, threadId: "not-a-uuid" })).toBe("threadId")
    expect(refusal({ ...body, temperature: 7 })).toBe("temperature")
    expect(refusal({ ...body, model: "" })).toBe("model")
  })
})

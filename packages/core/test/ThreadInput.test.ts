/**
 * A thread turn's request body: what decodes, and the errors that name the bad field.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as ThreadInput from "../src/ThreadInput.js"

describe("ThreadInput.decodeTurnRequest", () => {
  it("takes a UIMessage or { role, content }, tool results and options", { timeout: 10_000 }, () => {
    const ui = { id: "u1", role: "user", parts: [{ type: "text", text: "hi" }, { type: "step-start" }] }
    expect(Result.isSuccess(ThreadInput.decodeTurnRequest({ message: ui, model: "m", tools: ["weather"] }))).toBe(true)
    const plain = Result.getOrThrow(ThreadInput.decodeTurnRequest({ message: { role: "user", content: "hello" } }))
    expect(ThreadInput.toUIMessage(plain.message!, "id-1")).toStrictEqual({
      id: "id-1",
      role: "user",
      parts: [{ type: "text", text: "hello" }]
    })
    const results = Result.getOrThrow(
      ThreadInput.decodeTurnRequest({ toolResults: [{ toolCallId: "c", output: { a: 1 } }] })
    )
    expect(ThreadInput.outputText(results.toolResults![0]!.output)).toBe("{\"a\":1}")
  })

  it("names the bad field in a sentence", { timeout: 10_000 }, () => {
    const failure = (body: unknown) => Result.getFailure(ThreadInput.decodeTurnRequest(body))
    expect(failure({})).toMatchObject({ _tag: "Some", value: { field: "message" } })
    expect(failure({ message: { id: "a", role: "assistant", parts: [] } })).toMatchObject({
      value: { field: "message.role" }
    })
    expect(failure({ toolResults: [{ toolCallId: "", output: "x" }] })).toMatchObject({
      value: { field: "toolResults[0].toolCallId" }
    })
    expect(failure({ regenerate: true })._tag).toBe("None")
  })

  it("names the message's own problem whatever form it takes, not the first form's", { timeout: 10_000 }, () => {
    const failure = (body: unknown) => Result.getOrThrow(Result.flip(ThreadInput.decodeTurnRequest(body)))
    // an OpenAI-style message of another role: its role, naming the one accepted (was message.id)
    const assistant = failure({ message: { role: "assistant", content: "hi" } })
    expect(assistant.field).toBe("message.role")
    expect(assistant.reason).toContain(`role "user" is the one accepted, got "assistant"`)
    expect(failure({ message: { content: "hi" } })).toMatchObject({ field: "message.role" })
    expect(failure({ message: { id: "a", role: "system", parts: [] } }).reason).toContain(`got "system"`)
    // { role, content }: its content, its parts (were message.id)
    expect(failure({ message: { role: "user", content: 7 } })).toMatchObject({ field: "message.content" })
    expect(failure({ message: { role: "user", content: [{ type: "image", url: "x" }] } })).toMatchObject({
      field: "message.content[0].type"
    })
    expect(failure({ message: { role: "user", content: [{ type: "text", text: 7 }] } })).toMatchObject({
      field: "message.content[0].text"
    })
    // a UIMessage: its own fields
    expect(failure({ message: { role: "user", parts: [{ type: "text", text: 7 }] } })).toMatchObject({
      field: "message.id"
    })
    expect(failure({ message: { id: "u1", role: "user", parts: [{ type: "text", text: 7 }] } })).toMatchObject({
      field: "message.parts[0].text"
    })
    // the rest of the body as before
    expect(failure({ message: { role: "user", content: "ok" }, tools: [""] })).toMatchObject({ field: "tools[0]" })
  })

  it("refuses a regeneration with input of its own, naming regenerate", { timeout: 10_000 }, () => {
    const failure = (body: unknown) => Result.getOrThrow(Result.flip(ThreadInput.decodeTurnRequest(body)))
    const results = failure({ regenerate: true, toolResults: [{ toolCallId: "c", output: "x" }] })
    expect(results.field).toBe("regenerate")
    expect(results.reason).toContain("toolResults")
    const approvals = failure({ regenerate: true, approvals: [{ requestId: "r", approve: true }] })
    expect(approvals).toMatchObject({ field: "regenerate" })
    expect(approvals.reason).toContain("approvals")
    expect(failure({ regenerate: true, message: { role: "user", content: "hi" }, replaces: "t" }).reason).toContain(
      "message, replaces"
    )
    expect(
      Result.isSuccess(ThreadInput.decodeTurnRequest({ regenerate: false, message: { role: "user", content: "a" } }))
    )
      .toBe(true)
  })

  it("refuses a user message with no text, naming its parts", { timeout: 10_000 }, () => {
    const failure = (body: unknown) => Result.getOrThrow(Result.flip(ThreadInput.decodeTurnRequest(body)))
    const file = { type: "file", mediaType: "image/png", url: "data:image/png;base64,AA==" }
    expect(failure({ message: { id: "u1", role: "user", parts: [file] } })).toMatchObject({ field: "message.parts" })
    expect(failure({ message: { id: "u1", role: "user", parts: [{ type: "text", text: "  " }] } })).toMatchObject({
      field: "message.parts"
    })
    expect(failure({ message: { role: "user", content: "" } })).toMatchObject({ field: "message.content" })
    expect(failure({ message: { role: "user", content: [] } })).toMatchObject({ field: "message.content" })
    expect(
      Result.isSuccess(
        ThreadInput.decodeTurnRequest({
          message: { id: "u1", role: "user", parts: [file, { type: "text", text: "?" }] }
        })
      )
    ).toBe(true)
  })
})

describe("ThreadInput.isThreadId", () => {
  it("takes 1 to 128 letters, digits, '.', '_', ':' or '-'", { timeout: 10_000 }, () => {
    expect(["a", "chat:1.2_x-y", "x".repeat(128)].map(ThreadInput.isThreadId)).toStrictEqual([true, true, true])
    expect(["", "x".repeat(129), "a b", "a/b", "é"].map(ThreadInput.isThreadId)).toStrictEqual([
      false,
      false,
      false,
      false,
      false
    ])
  })

  it("reads a thread token's expiry, undefined for another form", { timeout: 10_000 }, () => {
    expect(ThreadInput.threadTokenExpiresAt("th1.1700000000000.write.YQ.mac")).toBe(1700000000000)
    expect(ThreadInput.threadTokenExpiresAt("bearer-token")).toBeUndefined()
    expect(ThreadInput.threadTokenExpiresAt("th1.x.write.YQ.mac")).toBeUndefined()
  })
})

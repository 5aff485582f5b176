/**
 * The newer Responses item kinds, on the vercel/ai recorded streams (see
 * fixtures/openai-responses/FIXTURES.md): custom tools, apply_patch, local and hosted
 * shells, MCP approval requests, tool search; and each kind's next request. Also a
 * message's `phase` (`commentary`), which goes back with it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Summary, Turn } from "@sluice/accumulator"
import { Json, OutputItem } from "@sluice/core"
import type { StreamEvent } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { type LlmRequest, OpenAiResponses, RoundTrip } from "../src/index.js"
import * as Providers from "../src/request/Providers.js"
import { done, finals, own, payloads, runText } from "./support/normalizerHarness.js"
import { transcriptProperties } from "./support/transcriptProperties.js"

const run = (name: string) => runText(OpenAiResponses.normalize, own("openai-responses", `${name}.sse`))

const turnOf = (events: ReadonlyArray<StreamEvent.StreamEvent>) => Result.getOrThrow(Turn.fromEvents(events))

const first: LlmRequest.LlmRequest = { model: "m", messages: [{ _tag: "user", text: "go" }] }

/** The finished items of a transcript's `response.output_item.done` events, as the provider sent them. */
const doneItems = (name: string): ReadonlyArray<Json.JsonObject> =>
  own("openai-responses", `${name}.sse`).split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)) as { readonly type: string; readonly item: Json.JsonObject })
    .filter((event) => event.type === "response.output_item.done")
    .map((event) => event.item)

/** The next request's `input` after a turn, with the given tool results and approval answers. */
const nextInput = (
  events: ReadonlyArray<StreamEvent.StreamEvent>,
  outputs: ReadonlyArray<RoundTrip.ToolOutput> = [],
  approvals: ReadonlyArray<RoundTrip.ApprovalAnswer> = []
) => {
  const turn = { provider: "openai-responses", items: Turn.finalItems(turnOf(events)) }
  const next = Result.getOrThrow(RoundTrip.continueWith(first, turn, outputs, approvals))
  return Providers.encode("openai-responses", next, { apiKey: "k", baseUrl: "http://x" }).body
    .input as ReadonlyArray<Json.JsonObject>
}

describe("OpenAI Responses custom_tool_call", () => {
  it.effect("free-text input is the call's arguments as {\"input\": ...}, never _invalid_arguments", () =>
    Effect.gen(function*() {
      const events = yield* run("vercel-custom-tool")
      const [call] = finals(events)
      expect(call).toMatchObject({
        type: "function_call",
        call_id: "call_custom_sql_001",
        name: "write_sql",
        arguments: "{\"input\":\"SELECT * FROM users WHERE age > 25\"}"
      })
      expect(call?.type === "function_call" && call.provider_executed).toBeUndefined()
      // the deltas form a prefix of the finished arguments
      const streamed = payloads(events).flatMap((p) => (p.type === "item_delta" ? [p.delta_content] : [])).join("")
      expect(streamed).toBe("{\"input\":\"SELECT * FROM users WHERE age > 25")
      const summary = Summary.fromTurn(turnOf(events))
      expect(summary.toolCalls).toMatchObject([{
        name: "write_sql",
        arguments: { input: "SELECT * FROM users WHERE age > 25" }
      }])
      expect(JSON.stringify(summary)).not.toContain("_invalid_arguments")
      expect(done(events)).toMatchObject({ finish_reason: "tool-calls" })
    }))

  it.effect("the next request sends the custom_tool_call back as it came and takes a custom_tool_call_output", () =>
    Effect.gen(function*() {
      const events = yield* run("vercel-custom-tool")
      const input = nextInput(events, [{ callId: "call_custom_sql_001", output: "3 rows" }])
      expect(input.slice(1)).toStrictEqual([
        doneItems("vercel-custom-tool")[0],
        { type: "custom_tool_call_output", call_id: "call_custom_sql_001", output: "3 rows" }
      ])
    }))

  it.effect("non-ASCII and quotes in streamed input stay a prefix of the JSON arguments", () =>
    Effect.gen(function*() {
      const input = "say \"héllo\" 😀\n"
      const event = (data: Record<string, unknown>) => `data: ${JSON.stringify(data)}\n\n`
      const item = { type: "custom_tool_call", id: "ctc_1", call_id: "call_1", name: "t", input: "" }
      const events = yield* runText(
        OpenAiResponses.normalize,
        event({ type: "response.created", response: { id: "r", output: [] } }) +
          event({ type: "response.output_item.added", output_index: 0, item }) +
          event({
            type: "response.custom_tool_call_input.delta",
            item_id: "ctc_1",
            output_index: 0,
            delta: input.slice(0, 7)
          }) +
          event({
            type: "response.custom_tool_call_input.delta",
            item_id: "ctc_1",
            output_index: 0,
            delta: input.slice(7)
          }) +
          event({ type: "response.output_item.done", output_index: 0, item: { ...item, input } }) +
          event({ type: "response.completed", response: { id: "r", status: "completed", output: [] } })
      )
      const [call] = finals(events)
      const args = call?.type === "function_call" ? call.arguments : ""
      expect(JSON.parse(args)).toStrictEqual({ input })
      const streamed = payloads(events).flatMap((p) => (p.type === "item_delta" ? [p.delta_content] : [])).join("")
      expect(args.startsWith(streamed)).toBe(true)
    }))

  it.effect("a custom tool call cut off mid-input keeps what arrived as valid JSON arguments", () =>
    Effect.gen(function*() {
      const text = own("openai-responses", "vercel-custom-tool.sse")
      const cut = text.slice(0, text.indexOf("event: response.output_item.done"))
      const events = yield* runText(OpenAiResponses.normalize, cut)
      const [call] = finals(events)
      expect(call).toMatchObject({
        type: "function_call",
        name: "write_sql",
        arguments: "{\"input\":\"SELECT * FROM users WHERE age > 25\"}"
      })
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "error" })
    }))
})

describe("OpenAI Responses apply_patch_call", () => {
  it.effect("keeps the operation (type, path, diff), named apply_patch; the diff deltas stream into it", () =>
    Effect.gen(function*() {
      const events = yield* run("vercel-apply-patch")
      const item = doneItems("vercel-apply-patch").find((raw) => raw.type === "apply_patch_call")!
      const [call] = finals(events).filter((final) => final.type === "function_call")
      expect(call).toMatchObject({ name: "apply_patch", call_id: "call_kA46f91ZwocQyMCKyyZqRyC5" })
      const args = call?.type === "function_call" ? call.arguments : ""
      expect(JSON.parse(args)).toStrictEqual(item.operation)
      const streamed = payloads(events).flatMap((p) =>
        p.type === "item_delta" && p.item_id === call?.id ? [p.delta_content] : []
      ).join("")
      expect(args.startsWith(streamed)).toBe(true)
      expect(streamed.length).toBeGreaterThan(args.length / 2)
      expect(done(events)).toMatchObject({ finish_reason: "tool-calls" })
    }))

  it.effect("the next request sends the apply_patch_call back and its apply_patch_call_output (failed for an error)", () =>
    Effect.gen(function*() {
      const events = yield* run("vercel-apply-patch")
      const input = nextInput(events, [{
        callId: "call_kA46f91ZwocQyMCKyyZqRyC5",
        output: "no such dir",
        isError: true
      }])
      const item = doneItems("vercel-apply-patch").find((raw) => raw.type === "apply_patch_call")
      expect(input.filter((entry) => entry.type === "apply_patch_call")).toStrictEqual([item])
      expect(input.filter((entry) => entry.type === "apply_patch_call_output")).toStrictEqual([
        {
          type: "apply_patch_call_output",
          call_id: "call_kA46f91ZwocQyMCKyyZqRyC5",
          status: "failed",
          output: "no such dir"
        }
      ])
      expect(input.some((entry) => entry.type === "function_call_output")).toBe(false)
    }))
})

describe("OpenAI Responses shell calls", () => {
  it.effect("local_shell_call is named local_shell, its action kept as the provider sent it; the result goes back as local_shell_call_output", () =>
    Effect.gen(function*() {
      const events = yield* run("vercel-local-shell")
      const item = doneItems("vercel-local-shell").find((raw) => raw.type === "local_shell_call")!
      const [call] = finals(events).filter(OutputItem.isClientToolCall)
      expect(call).toMatchObject({ name: "local_shell", call_id: "call_h3nm8hUG0KO9tVNuRACkL1ri" })
      expect(call?.arguments).toBe(JSON.stringify(item.action))
      expect(done(events)).toMatchObject({ finish_reason: "tool-calls" })
      const input = nextInput(events, [{ callId: "call_h3nm8hUG0KO9tVNuRACkL1ri", output: ".\n..\n" }])
      expect(input.filter((entry) => entry.type === "local_shell_call")).toStrictEqual([item])
      expect(input.at(-1)).toStrictEqual({
        type: "local_shell_call_output",
        call_id: "call_h3nm8hUG0KO9tVNuRACkL1ri",
        output: ".\n..\n"
      })
    }))

  it.effect("a client shell_call is named shell, its action as sent; the result is a shell_call_output with its max_output_length", () =>
    Effect.gen(function*() {
      const events = yield* run("vercel-shell-local")
      const item = doneItems("vercel-shell-local")[0]!
      const [call] = finals(events)
      expect(call).toMatchObject({ type: "function_call", name: "shell", arguments: JSON.stringify(item.action) })
      expect(call?.type === "function_call" && call.provider_executed).toBeUndefined()
      expect(Summary.fromTurn(turnOf(events)).toolCalls.map((c) => c.name)).toStrictEqual(["shell"])
      const input = nextInput(events, [{ callId: "call_pbxjNs1tMJUahLZKAS9qLtvw", output: "notes.txt\n" }])
      expect(input.slice(1)).toStrictEqual([
        item,
        {
          type: "shell_call_output",
          call_id: "call_pbxjNs1tMJUahLZKAS9qLtvw",
          output: [{ stdout: "notes.txt\n", stderr: "", outcome: { type: "exit", exit_code: 0 } }],
          max_output_length: 8912
        }
      ])
    }))

  it.effect("a shell_call in a hosted container is OpenAI's: one provider-executed call, its shell_call_output with every text, no client call", () =>
    Effect.gen(function*() {
      const events = yield* run("vercel-shell-container")
      const items = finals(events)
      expect(items.map((item) => item.type)).toStrictEqual(["function_call", "function_call_output", "message"])
      const [call, result] = items
      expect(call).toMatchObject({ name: "shell", provider_executed: true, call_id: "call_abc123def456ghi789jkl012" })
      expect(result).toMatchObject({ provider_executed: true, success: true, call_id: "call_abc123def456ghi789jkl012" })
      const output = doneItems("vercel-shell-container").find((raw) => raw.type === "shell_call_output")!
      expect(result?.type === "function_call_output" && JSON.parse(result.output)).toStrictEqual(output.output)
      const summary = Summary.fromTurn(turnOf(events))
      expect(summary.toolCalls).toStrictEqual([])
      expect(summary.providerToolCalls.map((c) => c.name)).toStrictEqual(["shell"])
      expect(done(events)).toMatchObject({ finish_reason: "stop" })
    }))
})

describe("OpenAI Responses shell calls, hosted, announced without their environment", () => {
  it.effect("a shell_call whose environment comes only with the finished item, and whose output follows, is not the client's", () =>
    Effect.gen(function*() {
      // the recorded stream with the environment taken off the added item
      const text = own("openai-responses", "vercel-shell-container.sse").split("\n").map((line) =>
        line.includes("\"type\":\"response.output_item.added\"") && line.includes("\"shell_call\"")
          ? line.replace(/,"environment":\{[^}]*\}/, "")
          : line
      ).join("\n")
      expect(text).not.toBe(own("openai-responses", "vercel-shell-container.sse"))
      const events = yield* runText(OpenAiResponses.normalize, text)
      expect(finals(events)[0]).toMatchObject({ name: "shell", provider_executed: true })
      expect(done(events)).toMatchObject({ finish_reason: "stop" })
    }))
})

describe("OpenAI Responses mcp_approval_request", () => {
  it.effect("is an approval_request item, not a tool call; the summary lists it apart", () =>
    Effect.gen(function*() {
      const events = yield* run("vercel-mcp-approval")
      const request = finals(events).find(OutputItem.isApprovalRequest)
      expect(request).toStrictEqual({
        type: "approval_request",
        id: "mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe",
        provider_id: "mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe",
        server_label: "zip1",
        name: "create_short_url",
        arguments:
          "{\"alias\":\"\",\"description\":\"Shortened link for ai-sdk.dev\",\"max_clicks\":100,\"password\":\"\",\"url\":\"https://ai-sdk.dev/\"}"
      })
      expect(payloads(events).some((p) => p.type === "item_delta" && p.item_id === request?.id)).toBe(false)
      const summary = Summary.fromTurn(turnOf(events))
      expect(summary.toolCalls).toStrictEqual([])
      expect(summary.approvalRequests).toMatchObject([{
        id: "mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe",
        name: "create_short_url",
        serverLabel: "zip1"
      }])
      expect(done(events)).toMatchObject({ finish_reason: "stop" })
    }))

  it.effect("the next request sends the request back, then the mcp_approval_response; an unknown request id is a RoundTripError", () =>
    Effect.gen(function*() {
      const events = yield* run("vercel-mcp-approval")
      const requestItem = doneItems("vercel-mcp-approval").find((raw) => raw.type === "mcp_approval_request")
      const input = nextInput(events, [], [{
        requestId: "mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe",
        approve: false,
        reason: "not now"
      }])
      expect(input.slice(-2)).toStrictEqual([
        requestItem,
        {
          type: "mcp_approval_response",
          approval_request_id: "mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe",
          approve: false,
          reason: "not now"
        }
      ])
      const turn = { provider: "openai-responses", items: Turn.finalItems(turnOf(events)) }
      const wrong = RoundTrip.approvalResponses(turn, [{ requestId: "mcpr_other", approve: true }])
      expect(Result.isFailure(wrong) && wrong.failure).toMatchObject({ _tag: "RoundTripError", callId: "mcpr_other" })
      // an approval request is not a call to answer with a tool result
      const asResult = RoundTrip.toolResults(turn, [{
        callId: "mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe",
        output: "x"
      }])
      expect(Result.isFailure(asResult)).toBe(true)
      // other providers leave the request and its answer out
      const other = Providers.encode(
        "anthropic",
        Result.getOrThrow(
          RoundTrip.continueWith(first, turn, [], [{
            requestId: "mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe",
            approve: true
          }])
        ),
        { apiKey: "k", baseUrl: "http://x" }
      )
      expect(JSON.stringify(other.body)).not.toContain("mcp_approval")
    }))
})

describe("OpenAI Responses tool_search_call", () => {
  it.effect("a server tool search is OpenAI's (call and output provider-executed, linked); the function call after it is the client's", () =>
    Effect.gen(function*() {
      const events = yield* run("vercel-tool-search")
      const [search, found, call] = finals(events)
      expect(search).toMatchObject({
        type: "function_call",
        name: "tool_search",
        provider_executed: true,
        arguments: "{\"paths\":[\"get_weather\"]}"
      })
      expect(found).toMatchObject({ type: "function_call_output", provider_executed: true })
      expect(found?.type === "function_call_output" && search?.type === "function_call" && found.call_id)
        .toBe(search?.type === "function_call" ? search.call_id : "")
      expect(call).toMatchObject({
        type: "function_call",
        name: "get_weather",
        provider_metadata: { namespace: "get_weather" }
      })
      const summary = Summary.fromTurn(turnOf(events))
      expect(summary.toolCalls.map((c) => c.name)).toStrictEqual(["get_weather"])
      expect(summary.providerToolCalls.map((c) => c.name)).toStrictEqual(["tool_search"])
      // both go back as they came; only the function call takes a result
      const input = nextInput(events, [{ callId: "call_pddfxhfOx4gY56zn4vIIEbFp", output: "72F" }])
      const [searchItem, outputItem] = doneItems("vercel-tool-search")
      expect(input.slice(1, 3)).toStrictEqual([searchItem, outputItem])
      // the function call keeps the namespace the search gave it
      expect(input[3]).toStrictEqual({
        type: "function_call",
        call_id: "call_pddfxhfOx4gY56zn4vIIEbFp",
        name: "get_weather",
        arguments: "{\"location\":\"San Francisco, CA\",\"unit\":\"fahrenheit\"}",
        namespace: "get_weather"
      })
      expect(input.at(-1)).toStrictEqual({
        type: "function_call_output",
        call_id: "call_pddfxhfOx4gY56zn4vIIEbFp",
        output: "72F"
      })
    }))

  it.effect("a client tool search (execution client) is the client's call, answered by a tool_search_output", () =>
    Effect.gen(function*() {
      const events = yield* run("vercel-client-tool-search")
      const [search] = finals(events)
      expect(search).toMatchObject({
        type: "function_call",
        name: "tool_search",
        call_id: "call_RWTIIVfxsJW9fecsg6fy23Dy"
      })
      expect(search?.type === "function_call" && search.provider_executed).toBeUndefined()
      expect(done(events)).toMatchObject({ finish_reason: "tool-calls" })
      const tools = [{ type: "function", name: "get_weather", parameters: { type: "object" } }]
      const input = nextInput(events, [{ callId: "call_RWTIIVfxsJW9fecsg6fy23Dy", output: JSON.stringify(tools) }])
      expect(input.at(-1)).toStrictEqual({
        type: "tool_search_output",
        call_id: "call_RWTIIVfxsJW9fecsg6fy23Dy",
        execution: "client",
        status: "completed",
        tools
      })
    }))
})

describe("OpenAI Responses computer_call", () => {
  it.effect("is the client's call (tool-calls), its action kept; the screenshot goes back as computer_call_output", () =>
    Effect.gen(function*() {
      // hand-written from the Responses API reference (ResponseComputerToolCall)
      const item = {
        type: "computer_call",
        id: "cu_1",
        call_id: "call_cu_1",
        action: { type: "click", button: "left", x: 10, y: 20 },
        pending_safety_checks: [],
        status: "completed"
      }
      const event = (data: Record<string, unknown>) => `data: ${JSON.stringify(data)}\n\n`
      const events = yield* runText(
        OpenAiResponses.normalize,
        event({ type: "response.created", response: { id: "r", output: [] } }) +
          event({ type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress" } }) +
          event({ type: "response.output_item.done", output_index: 0, item }) +
          event({ type: "response.completed", response: { id: "r", status: "completed", output: [item] } })
      )
      expect(finals(events)).toMatchObject([{
        type: "function_call",
        call_id: "call_cu_1",
        arguments: JSON.stringify(item.action)
      }])
      expect(done(events)).toMatchObject({ finish_reason: "tool-calls" })
      const input = nextInput(events, [{ callId: "call_cu_1", output: "data:image/png;base64,AAAA" }])
      expect(input.slice(1)).toStrictEqual([
        item,
        {
          type: "computer_call_output",
          call_id: "call_cu_1",
          output: { type: "computer_screenshot", image_url: "data:image/png;base64,AAAA" }
        }
      ])
    }))
})

describe("OpenAI Responses compaction, and item kinds it does not know", () => {
  it.effect("a compaction item is a compaction, not a call to run, and goes back whole", () =>
    Effect.gen(function*() {
      const events = yield* run("compaction")
      const [raw] = doneItems("compaction").filter((item) => item.type === "compaction")
      expect(finals(events)[1]).toStrictEqual({
        type: "compaction",
        id: raw!.id,
        content: "",
        provider_metadata: { type: "compaction", item: raw }
      })
      const summary = Summary.fromTurn(turnOf(events))
      expect([summary.toolCalls, summary.finishReason]).toStrictEqual([[], "stop"])
      expect(nextInput(events)).toContainEqual(raw)
    }))

  it.effect("an item of an unknown kind is the provider's own: reported, kept, sent back, never a call to run", () =>
    Effect.gen(function*() {
      const item = { id: "xyz_1", type: "future_tool_call", status: "completed", query: "q" }
      const sse = [
        { type: "response.created", response: { id: "r", model: "m", status: "in_progress", output: [] } },
        { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress" } },
        { type: "response.output_item.done", output_index: 0, item },
        { type: "response.completed", response: { id: "r", model: "m", status: "completed", output: [item] } }
      ].map((data, i) => `event: ${data.type}\ndata: ${JSON.stringify({ ...data, sequence_number: i })}\n\n`).join("")
      const events = yield* runText(OpenAiResponses.normalize, sse)
      expect(finals(events)).toMatchObject([{
        type: "function_call",
        name: "future_tool_call",
        provider_executed: true,
        provider_metadata: { item }
      }])
      const summary = Summary.fromTurn(turnOf(events))
      expect([summary.toolCalls, summary.finishReason]).toStrictEqual([[], "stop"])
      expect(nextInput(events)).toContainEqual(item)
    }))
})

describe("OpenAI Responses message phase", () => {
  it.effect("a message's phase is kept, and goes back on the message in the next request", () =>
    Effect.gen(function*() {
      const events = yield* run("message-phase")
      expect(finals(events)[0]).toStrictEqual({
        type: "message",
        id: "msg_c",
        content: "Let me check.",
        origin: "agent",
        provider_metadata: { phase: "commentary" }
      })
      const input = nextInput(events, [{ callId: "call_1", output: "{\"temp\":21}" }])
      expect(input.find((item) => item.type === "message" && item.role === "assistant")).toStrictEqual({
        type: "message",
        role: "assistant",
        content: "Let me check.",
        phase: "commentary"
      })
    }))

  it.effect("a message cut off keeps the phase its added item named", () =>
    Effect.gen(function*() {
      const body = own("openai-responses", "message-phase.sse")
      const cut = body.slice(0, body.indexOf("event: response.output_text.done"))
      const events = yield* runText(OpenAiResponses.normalize, cut)
      expect(finals(events)).toStrictEqual([{
        type: "message",
        id: "msg_c",
        content: "Let me check.",
        origin: "agent",
        provider_metadata: { phase: "commentary" }
      }])
    }))
})

describe("properties", () => {
  transcriptProperties(
    Providers.get("openai-responses"),
    [
      "vercel-custom-tool",
      "vercel-apply-patch",
      "vercel-local-shell",
      "vercel-shell-local",
      "vercel-shell-container",
      "vercel-mcp-approval",
      "vercel-tool-search",
      "vercel-client-tool-search",
      "message-phase",
      "compaction"
    ].map((name) => [name, own("openai-responses", `${name}.sse`)] as const)
  )
})

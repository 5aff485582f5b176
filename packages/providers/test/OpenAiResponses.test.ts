import { describe, expect, it } from "@effect/vitest"
import { Sse } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as OpenAiResponses from "../src/openai-responses/OpenAiResponses.js"
import { done, errors, finals, ofType, options, own, ownJson, recorded, runText } from "./support/normalizerHarness.js"

const run = (text: string) => runText(OpenAiResponses.normalize, text)
const fixture = (name: string) => own("openai-responses", name)

/** One SSE event of the Responses stream. */
const event = (data: Record<string, unknown>): string =>
  `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`

const created = event({
  type: "response.created",
  response: { id: "resp_x", model: "gpt-x", status: "in_progress", output: [] }
})

describe("OpenAiResponses.normalize", () => {
  it.effect("maps a recorded plain text turn with its model and usage", () =>
    Effect.gen(function*() {
      const events = yield* run(recorded("openai-responses", "text-simple.sse"))
      expect(ofType(events, "response_start")[0]?.model_id).toBe("gpt-4o-mini-2024-07-18")
      expect(finals(events)).toStrictEqual([
        {
          type: "message",
          id: "msg_0a6fc3349e38704d016a3c120b5d28819ea807fdf185cae88e",
          content: "Hi in Portuguese is \"Oi!\"",
          origin: "agent"
        }
      ])
      const deltas = ofType(events, "item_delta").map((d) => d.delta_content).join("")
      expect(deltas).toBe("Hi in Portuguese is \"Oi!\"")
      const end = done(events)
      expect(end?.status).toBe("complete")
      expect(end?.finish_reason).toBe("stop")
      expect(end?.usage).toMatchObject({ input: 20, output: 8, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 28 })
    }))

  it.effect("keeps a recorded reasoning summary, its encrypted content, and a split function call", () =>
    Effect.gen(function*() {
      const events = yield* run(recorded("openai-responses", "reasoning-summary-tool.sse"))
      const [reasoning, call] = finals(events)
      expect(reasoning?.type).toBe("reasoning")
      if (reasoning?.type !== "reasoning") return
      expect(reasoning.content.startsWith("**Getting weather info**\n\nI need to respond")).toBe(true)
      expect(reasoning.encrypted_content?.startsWith("gAAAAABqPBJWAIvE")).toBe(true)
      expect(call).toStrictEqual({
        type: "function_call",
        id: "fc_017e85da2ae23b69016a3c12560820819db3b6e8a38dddad65",
        call_id: "call_zgUaIBRPTwxxOusyyKw5NVMH",
        name: "weather",
        arguments: "{\"location\":\"Florence, Italy\"}"
      })
      expect(done(events)).toMatchObject({ status: "complete", finish_reason: "tool-calls" })
      expect(done(events)?.usage).toMatchObject({ input: 63, output: 121, reasoning: 64, total: 184 })
    }))

  it.effect("joins summary parts with a blank line and takes encrypted content from the finished item", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("reasoning-encrypted.sse"))
      const reasoningDeltas = ofType(events, "item_delta").filter((d) => d.item_id === "rs_1").map((d) =>
        d.delta_content
      ).join("")
      const expected = "**Planning**\n\nCompare the two options.\n\n**Answer**\n\nOption B is cheaper."
      expect(reasoningDeltas).toBe(expected)
      expect(finals(events)[0]).toStrictEqual({
        type: "reasoning",
        id: "rs_1",
        content: expected,
        // summaries are stated as such, apart from raw reasoning text
        reasoning_kind: "summary",
        encrypted_content: "gAAAAABo_encrypted_reasoning_blob=="
      })
      expect(
        ofType(events, "item_delta").filter((d) => d.item_id === "rs_1").every((d) => d.reasoning_kind === "summary")
      )
        .toBe(true)
      expect(finals(events)[1]).toMatchObject({
        type: "message",
        id: "msg_1",
        content: "Option B costs less over five years."
      })
    }))

  it.effect("counts cached input apart from input and reasoning inside output", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("reasoning-encrypted.sse"))
      const usage = done(events)?.usage
      expect(usage).toMatchObject({
        input: 52,
        cacheRead: 2048,
        cacheWrite: 0,
        output: 180,
        reasoning: 128,
        total: 2280
      })
      expect(usage?.raw).toStrictEqual({
        input_tokens: 2100,
        input_tokens_details: { cached_tokens: 2048 },
        output_tokens: 180,
        output_tokens_details: { reasoning_tokens: 128 },
        total_tokens: 2280
      })
    }))

  it.effect("keeps parallel calls with interleaved argument fragments apart", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("parallel-tools.sse"))
      expect(ofType(events, "item_start").map((s) => [s.item_id, s.name])).toStrictEqual([
        ["fc_1", "get_weather"],
        ["fc_2", "get_weather"]
      ])
      const args = (id: string) =>
        ofType(events, "item_delta").filter((d) => d.item_id === id).map((d) => d.delta_content).join("")
      expect(args("fc_1")).toBe("{\"city\":\"Paris\",\"unit\":\"c\"}")
      expect(args("fc_2")).toBe("{\"city\":\"Rome\",\"unit\":\"f\"}")
      expect(finals(events).map((item) => item.type === "function_call" && [item.call_id, item.arguments]))
        .toStrictEqual([
          ["call_A", "{\"city\":\"Paris\",\"unit\":\"c\"}"],
          ["call_B", "{\"city\":\"Rome\",\"unit\":\"f\"}"]
        ])
      expect(done(events)?.finish_reason).toBe("tool-calls")
    }))

  it.effect("finalizes arguments at item done, not when a prefix parses", () =>
    Effect.gen(function*() {
      const text = created +
        event({
          type: "response.output_item.added",
          output_index: 0,
          item: { id: "fc_p", type: "function_call", call_id: "c", name: "f", arguments: "" }
        }) +
        event({ type: "response.function_call_arguments.delta", item_id: "fc_p", output_index: 0, delta: "{}" }) +
        event({ type: "response.function_call_arguments.delta", item_id: "fc_p", output_index: 0, delta: " " })
      const beforeDone = yield* run(text)
      // `{}` parses, but the item never finished: it is closed only as a truncated turn.
      expect(errors(beforeDone).map((e) => e.code)).toStrictEqual(["stream_truncated"])
      const finished = yield* run(
        text +
          event({
            type: "response.output_item.done",
            output_index: 0,
            item: { id: "fc_p", type: "function_call", call_id: "c", name: "f", arguments: "{\"a\":[1]}" }
          })
      )
      expect(ofType(finished, "item_done").map((d) => d.item_id)).toStrictEqual(["fc_p"])
      expect(finals(finished)[0]).toMatchObject({ arguments: "{\"a\":[1]}" })
    }))

  it.effect("maps a refusal to a content block with content-filter, keeping its text", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("refusal.sse"))
      expect(finals(events)).toStrictEqual([
        {
          type: "message",
          id: "msg_r",
          content: "I can't help with that.",
          origin: "agent",
          provider_metadata: { refusal: "I can't help with that." }
        }
      ])
      expect(errors(events)).toStrictEqual([
        { code: "refusal", message: "I can't help with that.", type: "content_blocked", retryable: false }
      ])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "content-filter" })
    }))

  it.effect("ends the turn at an in-stream overloaded error, keeping the text that arrived", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("error-overloaded.sse"))
      expect(finals(events)).toStrictEqual([{
        type: "message",
        id: "msg_e",
        content: "Working on it",
        origin: "agent"
      }])
      expect(errors(events)).toStrictEqual([
        {
          code: "server_is_overloaded",
          message: "The server is overloaded. Please retry.",
          type: "provider_overloaded",
          retryable: true,
          // the error event as it came (`originalError`)
          raw: {
            type: "error",
            code: "server_is_overloaded",
            message: "The server is overloaded. Please retry.",
            param: null,
            sequence_number: 4
          }
        }
      ])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "error" })
    }))

  it.effect("reads an error event whose details are nested", () =>
    Effect.gen(function*() {
      const events = yield* run(
        created + event({ type: "error", error: { type: "server_error", code: "server_error", message: "boom" } })
      )
      expect(errors(events)).toStrictEqual([{
        code: "server_error",
        message: "boom",
        type: "api_error",
        retryable: true,
        raw: { type: "error", error: { type: "server_error", code: "server_error", message: "boom" } }
      }])
    }))

  it.effect("classifies response.failed by its error code", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("failed-rate-limit.sse"))
      expect(errors(events)).toStrictEqual([
        {
          code: "rate_limit_exceeded",
          message: "Rate limit reached for requests",
          type: "rate_limit",
          retryable: true,
          raw: { code: "rate_limit_exceeded", message: "Rate limit reached for requests" }
        }
      ])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "error" })
    }))

  it.effect("maps response.incomplete: max_output_tokens is length, content_filter a content block", () =>
    Effect.gen(function*() {
      const length = yield* run(fixture("incomplete-length.sse"))
      expect(done(length)).toMatchObject({ status: "complete", finish_reason: "length" })
      expect(finals(length)[0]).toMatchObject({ content: "The first three" })
      const filtered = yield* run(
        created +
          event({
            type: "response.incomplete",
            response: { status: "incomplete", output: [], incomplete_details: { reason: "content_filter" } }
          })
      )
      expect(errors(filtered).map((e) => [e.type, e.retryable])).toStrictEqual([["content_blocked", false]])
      expect(done(filtered)).toMatchObject({ status: "error", finish_reason: "content-filter" })
    }))

  it.effect("keeps what arrived when the stream stops without a terminal event", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("truncated.sse"))
      expect(finals(events)).toStrictEqual([
        { type: "message", id: "msg_t", content: "Let me check.", origin: "agent" },
        { type: "function_call", id: "fc_t", call_id: "call_T", name: "search", arguments: "{\"q\":\"sluice\"}" }
      ])
      expect(errors(events)).toStrictEqual([
        {
          code: "stream_truncated",
          message: "openai-responses stream ended without its terminal event",
          type: "api_error",
          retryable: true
        }
      ])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "error" })
    }))

  it.effect("keeps hosted tool calls and citations instead of dropping them", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("web-search-citation.sse"))
      const [search, result, message] = finals(events)
      expect(search).toMatchObject({
        type: "function_call",
        id: "ws_1",
        call_id: "ws_1",
        name: "web_search_call",
        arguments: "{\"type\":\"search\",\"query\":\"sluice gate\"}",
        provider_executed: true,
        provider_metadata: { type: "web_search_call" }
      })
      expect(result).toStrictEqual({
        type: "function_call_output",
        id: "ws_1_result",
        call_id: "ws_1",
        output: "{}",
        success: true,
        provider_executed: true,
        provider_metadata: { type: "web_search_call", restores: [] }
      })
      expect(message).toMatchObject({
        content: "A sluice is a water channel.",
        provider_metadata: { annotations: [{ type: "url_citation", url: "https://example.org/sluice" }] }
      })
      // Hosted tools run on the provider's side: the turn is not waiting for tool results.
      expect(done(events)?.finish_reason).toBe("stop")
    }))

  it.effect("splits each recorded web_search_call into its search and the sources it found", () =>
    Effect.gen(function*() {
      const items = finals(yield* run(recorded("openai-responses", "web-search.sse")))
      const calls = items.filter((item) => item.type === "function_call")
      const results = items.filter((item) => item.type === "function_call_output")
      expect(calls.map((call) => call.call_id)).toStrictEqual(results.map((result) => result.call_id))
      expect(calls.map((call) => JSON.parse(call.arguments).type)).toStrictEqual([
        "search",
        "search",
        "open_page",
        "find_in_page",
        "find_in_page",
        "find_in_page"
      ])
      const [first] = calls
      expect(first).toMatchObject({ name: "web_search_call", provider_executed: true })
      expect(JSON.parse(first!.arguments)).toStrictEqual({ type: "search", query: "tech news today December 5 2025" })
      const sources = JSON.parse(results[0]!.output).sources
      expect(sources[0]).toStrictEqual({ type: "url", url: "https://www.wired.com/story/the-big-interview-2025-recap" })
      expect(results.every((result) => result.success && result.provider_executed === true)).toBe(true)
      // each result follows its call
      for (const result of results) expect(items[items.indexOf(result) - 1]).toMatchObject({ call_id: result.call_id })
    }))

  it.effect("splits a recorded file_search_call into its queries and its results", () =>
    Effect.gen(function*() {
      const items = finals(yield* run(recorded("openai-responses", "file-search.sse")))
      const [call, result] = items.filter((item) =>
        item.type === "function_call" || item.type === "function_call_output"
      )
      expect(call).toMatchObject({ type: "function_call", name: "file_search_call", provider_executed: true })
      expect(JSON.parse(call?.type === "function_call" ? call.arguments : "").queries).toHaveLength(3)
      expect(result).toMatchObject({
        type: "function_call_output",
        output: "{\"results\":null}",
        provider_executed: true
      })
      expect(call?.provider_metadata?.item).not.toHaveProperty("results")
    }))

  it.effect("streams recorded interpreter code as the call's JSON arguments, and its outputs as the result", () =>
    Effect.gen(function*() {
      const events = yield* run(recorded("openai-responses", "code-interpreter.sse"))
      const items = finals(events)
      const calls = items.filter((item) => item.type === "function_call")
      expect(calls).toHaveLength(3)
      const first = calls[0]!
      expect(JSON.parse(first.arguments)).toStrictEqual({
        code:
          "import random, math\nN=10000\nsums=[]\ns=0\nfor _ in range(N):\n    a=random.randint(1,6)\n    b=random.randint(1,6)\n" +
          "    sm=a+b\n    sums.append(sm)\n    s+=sm\nmin(sums), max(sums), sum(sums), sum(sums)/N\n",
        container_id: "cntr_68c2e6f380d881908a57a82d394434ff02f484f5344062e9"
      })
      // the code deltas spell the call's arguments up to the container id
      const streamed = ofType(events, "item_delta").filter((delta) => delta.item_id === first.id).map((delta) =>
        delta.delta_content
      ).join("")
      expect(first.arguments.startsWith(streamed)).toBe(true)
      expect(streamed.length).toBeGreaterThan("{\"code\":\"".length)
      const result = items.find((item) => item.type === "function_call_output" && item.call_id === first.call_id)
      expect(result).toMatchObject({
        output: JSON.stringify({ outputs: [{ type: "logs", logs: "(2, 12, 69868, 6.9868)" }] }),
        success: true
      })
    }))

  it.effect("interpreter code cut anywhere, even inside a surrogate pair, streams a prefix of the call's arguments", () =>
    Effect.gen(function*() {
      const code = "print(\"é 😀 \\n\")\n"
      const cut = code.indexOf("😀") + 1
      const item = {
        id: "ci_1",
        type: "code_interpreter_call",
        status: "completed",
        code,
        container_id: "cntr_1",
        outputs: []
      }
      const events = yield* run(
        created +
          event({
            type: "response.output_item.added",
            output_index: 0,
            item: { ...item, status: "in_progress", code: "" }
          }) +
          event({
            type: "response.code_interpreter_call_code.delta",
            item_id: "ci_1",
            output_index: 0,
            delta: code.slice(0, cut)
          }) +
          event({
            type: "response.code_interpreter_call_code.delta",
            item_id: "ci_1",
            output_index: 0,
            delta: code.slice(cut)
          }) +
          event({ type: "response.output_item.done", output_index: 0, item }) +
          event({ type: "response.completed", response: { status: "completed", output: [item] } })
      )
      const [call, result] = finals(events)
      const args = call?.type === "function_call" ? call.arguments : ""
      const streamed = ofType(events, "item_delta").filter((delta) => delta.item_id === "ci_1").map((delta) =>
        delta.delta_content
      ).join("")
      expect(args.startsWith(streamed)).toBe(true)
      expect(JSON.parse(args)).toStrictEqual({ code, container_id: "cntr_1" })
      expect(result).toMatchObject({ type: "function_call_output", call_id: "ci_1", output: "{\"outputs\":[]}" })
    }))

  it.effect("splits a recorded image_generation_call into its prompt and the image", () =>
    Effect.gen(function*() {
      const items = finals(yield* run(recorded("openai-responses", "image-generation.sse")))
      const [call, result] = items.filter((item) =>
        item.type === "function_call" || item.type === "function_call_output"
      )
      expect(call).toMatchObject({ type: "function_call", name: "image_generation_call", provider_executed: true })
      const args = JSON.parse(call?.type === "function_call" ? call.arguments : "")
      expect(args).toMatchObject({ output_format: "webp", quality: "low" })
      expect(args.revised_prompt.startsWith("Create a high-resolution")).toBe(true)
      expect(call?.provider_metadata?.item).not.toHaveProperty("result")
      const image = JSON.parse(result?.type === "function_call_output" ? result.output : "").result
      expect(image.startsWith("UklGR")).toBe(true)
    }))

  it.effect("every hosted tool: its call with what it was asked, then its result with what it gave", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("hosted-tools.sse"))
      const items = finals(events)
      const pairs = items.flatMap((item) =>
        item.type === "function_call"
          ? [[item.name, JSON.parse(item.arguments)]]
          : item.type === "function_call_output"
          ? [[item.success, JSON.parse(item.output)]]
          : []
      )
      expect(pairs).toStrictEqual([
        ["web_search_call", { type: "search", query: "sluice history" }],
        [true, {
          sources: [{ type: "url", url: "https://example.org/sluice-history" }, {
            type: "url",
            url: "https://example.org/canals"
          }]
        }],
        ["file_search_call", { queries: ["sluice gate design"] }],
        [true, {
          results: [{
            file_id: "file-1",
            filename: "gates.pdf",
            score: 0.91,
            text: "A sluice gate slides vertically.",
            attributes: {}
          }]
        }],
        ["code_interpreter_call", { code: "print('débit 😀', 6 * 7)\n", container_id: "cntr_h" }],
        [true, { outputs: [{ type: "logs", logs: "débit 😀 42" }] }],
        ["roll", { sides: 6, count: 2 }],
        [true, { output: "[3,4]", error: null }],
        ["image_generation_call", { revised_prompt: "a sluice gate at dawn", size: "1024x1024" }],
        [false, { result: null }]
      ])
      expect(
        items.every((item) =>
          item.type === "message" ||
          (item.type !== "reasoning" && "provider_executed" in item && item.provider_executed === true)
        )
      ).toBe(true)
      const message = items.at(-1)
      expect(message?.type === "message" && message.sources).toMatchObject([{
        kind: "url",
        url: "https://example.org/sluice-history",
        text_start: 0,
        text_end: 28
      }])
      expect(done(events)?.finish_reason).toBe("stop")
    }))

  it.effect("a failed hosted call or MCP call with an error gives an unsuccessful result", () =>
    Effect.gen(function*() {
      const item = (raw: Record<string, unknown>, index: number) =>
        event({ type: "response.output_item.done", output_index: index, item: raw })
      const events = yield* run(
        created +
          item({ id: "ws_f", type: "web_search_call", status: "failed", action: { type: "search", query: "q" } }, 0) +
          item({
            id: "mcp_1",
            type: "mcp_call",
            name: "roll",
            server_label: "dice",
            arguments: "{\"n\":2}",
            output: null,
            error: "server down"
          }, 1) +
          event({ type: "response.completed", response: { status: "completed", output: [] } })
      )
      const items = finals(events)
      expect(items.map((i) => [i.type, i.id])).toStrictEqual([
        ["function_call", "ws_f"],
        ["function_call_output", "ws_f_result"],
        ["function_call", "mcp_1"],
        ["function_call_output", "mcp_1_result"]
      ])
      expect(items[1]).toMatchObject({ success: false })
      expect(items[2]).toMatchObject({ name: "roll", arguments: "{\"n\":2}", provider_executed: true })
      expect(items[3]).toMatchObject({ success: false, output: JSON.stringify({ output: null, error: "server down" }) })
      expect(done(events)?.finish_reason).toBe("stop")
    }))

  it.effect("opens an item the stream never announced rather than dropping its deltas", () =>
    Effect.gen(function*() {
      const events = yield* run(
        created +
          event({ type: "response.output_text.delta", item_id: "msg_u", output_index: 0, delta: "orphan" }) +
          event({ type: "response.completed", response: { status: "completed", output: [] } })
      )
      expect(finals(events)).toStrictEqual([{ type: "message", id: "msg_u", content: "orphan", origin: "agent" }])
    }))

  it.effect("ignores event types it does not know", () =>
    Effect.gen(function*() {
      const events = yield* run(
        created + event({ type: "response.future_thing", whatever: 1 }) +
          event({ type: "response.completed", response: { output: [] } })
      )
      expect(done(events)).toMatchObject({ status: "complete", finish_reason: "stop" })
    }))

  it.effect("fails with a WireDecodeError naming the line for data that is not JSON or has the wrong shape", () =>
    Effect.gen(function*() {
      const notJson = yield* Effect.flip(run(created + "data: {nope\n\n"))
      expect(notJson).toMatchObject({
        _tag: "WireDecodeError",
        provider: "openai-responses",
        line: 4,
        reason: "InvalidJson"
      })
      const badDelta = yield* Effect.flip(
        run(created + event({ type: "response.output_text.delta", item_id: "m", delta: 7 }))
      )
      expect(badDelta).toMatchObject({ _tag: "WireDecodeError", line: 4, reason: "UnexpectedShape" })
      expect(badDelta.message).toContain("response.output_text.delta")
      const noType = yield* Effect.flip(run("data: [1,2]\n\n"))
      expect(noType).toMatchObject({ _tag: "WireDecodeError", line: 1, reason: "UnexpectedShape" })
    }))

  it.effect("stamps events with Effect's clock", () =>
    Effect.gen(function*() {
      const events = yield* Stream.make(
        Sse.encodeEvent({ data: JSON.stringify({ type: "response.completed", response: {} }) })
      ).pipe(
        Stream.encodeText,
        Sse.decode(),
        OpenAiResponses.normalize(options),
        Stream.runCollect
      )
      // TestClock starts at 0.
      expect(events.map((e) => e.timestamp)).toStrictEqual(events.map(() => 0))
    }))
})

describe("OpenAiResponses.normalizeResponse", () => {
  it.effect("decodes a non-streaming response into the same items, usage and finish", () =>
    Effect.gen(function*() {
      const events = yield* OpenAiResponses.normalizeResponse(
        ownJson("openai-responses", "reasoning-encrypted.json"),
        options
      )
      expect(ofType(events, "response_start")[0]?.model_id).toBe("gpt-5-mini-2025-08-07")
      expect(finals(events).map((item) => item.id)).toStrictEqual(["rs_1", "msg_1"])
      expect(done(events)?.usage).toMatchObject({ input: 52, cacheRead: 2048, output: 180, reasoning: 128 })
    }))

  it.effect("decodes an error body", () =>
    Effect.gen(function*() {
      const events = yield* OpenAiResponses.normalizeResponse({
        error: { code: "rate_limit_exceeded", message: "slow down" }
      }, options)
      expect(errors(events).map((e) => e.type)).toStrictEqual(["rate_limit"])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "error" })
    }))

  it.effect("fails with a WireDecodeError at line 0 for a body of the wrong shape", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(OpenAiResponses.normalizeResponse({ output: "text" }, options))
      expect(failure).toMatchObject({ _tag: "WireDecodeError", line: 0, reason: "UnexpectedShape" })
      const badItem = yield* Effect.flip(
        OpenAiResponses.normalizeResponse({
          status: "completed",
          output: [{ type: "function_call", id: "f", name: "x" }]
        }, options)
      )
      expect(badItem.message).toContain("function_call item")
    }))
})

describe("OpenAiResponses.classifyError", () => {
  it("classifies codes by kind", () => {
    const kind = (code: string) => {
      const error = OpenAiResponses.classifyError(code, "m")
      return [error.type, error.retryable]
    }
    expect(kind("rate_limit_exceeded")).toStrictEqual(["rate_limit", true])
    expect(kind("insufficient_quota")).toStrictEqual(["rate_limit", false])
    expect(kind("server_is_overloaded")).toStrictEqual(["provider_overloaded", true])
    expect(kind("slow_down")).toStrictEqual(["provider_overloaded", true])
    expect(kind("vector_store_timeout")).toStrictEqual(["timeout", true])
    expect(kind("server_error")).toStrictEqual(["api_error", true])
    expect(kind("invalid_prompt")).toStrictEqual(["api_error", false])
  })
})

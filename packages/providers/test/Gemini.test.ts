import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Gemini from "../src/gemini/Gemini.js"
import { ArgumentsBuilder, parsePath } from "../src/gemini/internal/partialArgs.js"
import * as Providers from "../src/request/Providers.js"
import { done, errors, finals, ofType, options, own, ownJson, recorded, runText } from "./support/normalizerHarness.js"
import { transcriptProperties } from "./support/transcriptProperties.js"

const run = (text: string) => runText(Gemini.normalize, text)
const fixture = (name: string) => own("gemini", name)

/** One SSE chunk as the Gemini API frames it (CRLF line ends). */
const chunk = (data: unknown): string => `data: ${JSON.stringify(data)}\r\n\r\n`
const parts = (list: ReadonlyArray<unknown>, finishReason?: string) => ({
  candidates: [{
    content: { role: "model", parts: list },
    index: 0,
    ...(finishReason === undefined ? {} : { finishReason })
  }]
})

describe("Gemini.normalize", () => {
  it.effect("joins consecutive text parts across chunks into one message, with the model version", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("text-cached-usage.sse"))
      expect(ofType(events, "response_start")[0]?.model_id).toBe("gemini-2.5-flash")
      expect(ofType(events, "item_start").map((s) => [s.item_id, s.item_type])).toStrictEqual([["item_0", "message"]])
      expect(ofType(events, "item_delta").map((d) => d.delta_content)).toStrictEqual([
        "The sky ",
        "looks blue because ",
        "of Rayleigh scattering."
      ])
      expect(finals(events)).toStrictEqual([
        {
          type: "message",
          id: "item_0",
          content: "The sky looks blue because of Rayleigh scattering.",
          origin: "agent"
        }
      ])
      expect(done(events)).toMatchObject({ status: "complete", finish_reason: "stop" })
    }))

  it.effect("keeps the last usageMetadata: cache apart from input, thoughts inside output, tool-use prompt in input", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("text-cached-usage.sse"))
      // prompt 120 (100 cached) + tool-use prompt 4; candidates 9 + thoughts 21.
      expect(done(events)?.usage).toMatchObject({
        input: 24,
        cacheRead: 100,
        cacheWrite: 0,
        output: 30,
        reasoning: 21,
        total: 154
      })
      expect(done(events)?.usage?.raw).toMatchObject({ totalTokenCount: 154, toolUsePromptTokenCount: 4 })
    }))

  it.effect("maps recorded thoughts and a function call whose thoughtSignature is kept", () =>
    Effect.gen(function*() {
      const events = yield* run(recorded("gemini", "thought-then-tool.sse"))
      const [thought, call] = finals(events)
      expect(thought?.type).toBe("reasoning")
      expect(thought?.type === "reasoning" && thought.content.startsWith("**Mapping the Inquiry**")).toBe(true)
      expect(call).toMatchObject({
        type: "function_call",
        id: "item_1",
        call_id: "call_item_1",
        name: "weather",
        arguments: "{\"location\":\"Florence, Italy\"}"
      })
      expect(call?.type === "function_call" && call.provider_metadata?.thoughtSignature).toMatch(/^CiIBvj72\+9zt1F5h/)
      expect(done(events)).toMatchObject({ status: "complete", finish_reason: "tool-calls" })
      expect(done(events)?.usage).toMatchObject({ input: 54, output: 78, reasoning: 64, total: 132 })
    }))

  it.effect("maps recorded parallel calls from one chunk, the signature only on the first", () =>
    Effect.gen(function*() {
      const events = yield* run(recorded("gemini", "tool-parallel.sse"))
      const calls = finals(events)
      expect(calls.map((c) => c.type === "function_call" && [c.name, c.arguments])).toStrictEqual([
        ["add", "{\"b\":3,\"a\":2}"],
        ["multiply", "{\"a\":2,\"b\":3}"]
      ])
      expect(calls[0]?.type === "function_call" && typeof calls[0].provider_metadata?.thoughtSignature).toBe("string")
      expect(calls[1]).not.toHaveProperty("provider_metadata")
      expect(done(events)?.finish_reason).toBe("tool-calls")
    }))

  it.effect("maps a recorded prompt block with no candidates to a content block", () =>
    Effect.gen(function*() {
      const events = yield* run(recorded("gemini", "prompt-blocked-safety.sse"))
      expect(finals(events)).toStrictEqual([])
      expect(errors(events)).toStrictEqual([
        { code: "SAFETY", message: "Gemini blocked the prompt (SAFETY)", type: "content_blocked", retryable: false }
      ])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "content-filter" })
    }))

  it.effect("keeps thought signatures on text as provider metadata and on thoughts as the signature", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("thought-signature-text.sse"))
      expect(finals(events)).toStrictEqual([
        {
          type: "reasoning",
          id: "item_0",
          content: "**Weighing options**\n\nThe user wants a short answer.",
          reasoning_kind: "summary"
        },
        {
          type: "message",
          id: "item_1",
          content: "Use a hash map.",
          origin: "agent",
          provider_metadata: { thoughtSignature: "EsQBCsEBAdHtim9" }
        }
      ])
      const thoughtSigned = yield* run(
        chunk(parts([{ text: "plan", thought: true }])) +
          chunk(parts([{ text: "", thought: true, thoughtSignature: "sig-a" }])) +
          chunk(parts([{ text: "more", thought: true, thoughtSignature: "sig-b" }], "STOP"))
      )
      // A second signature for the same item starts a new item, so neither is lost.
      expect(finals(thoughtSigned)).toStrictEqual([
        { type: "reasoning", id: "item_0", content: "plan", reasoning_kind: "summary", signature: "sig-a" },
        { type: "reasoning", id: "item_1", content: "more", reasoning_kind: "summary", signature: "sig-b" }
      ])
    }))

  it.effect("attaches a part that carries only a signature to the open item", () =>
    Effect.gen(function*() {
      const events = yield* run(chunk(parts([{ text: "hi" }, { thoughtSignature: "sig-only" }], "STOP")))
      expect(finals(events)).toStrictEqual([
        {
          type: "message",
          id: "item_0",
          content: "hi",
          origin: "agent",
          provider_metadata: { thoughtSignature: "sig-only" }
        }
      ])
    }))

  it.effect("assembles Vertex AI streamed function-call arguments and finalizes them at the call's last part", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("vertex-streamed-args.sse"))
      expect(ofType(events, "response_start")[0]?.model_id).toBe("gemini-3-pro-preview")
      expect(ofType(events, "item_start").map((s) => s.name)).toStrictEqual(["get_weather", "set_lights"])
      expect(finals(events)).toStrictEqual([
        {
          type: "function_call",
          id: "item_0",
          call_id: "call_item_0",
          name: "get_weather",
          arguments: "{\"location\":\"Boston, MA\",\"units\":\"celsius\",\"days\":3}",
          provider_metadata: { thoughtSignature: "Cn0BjzBCv" }
        },
        {
          type: "function_call",
          id: "item_1",
          call_id: "call_item_1",
          name: "set_lights",
          arguments: "{\"rooms\":[{\"name\":\"kitchen\",\"on\":true},{\"name\":\"hall\",\"dim\":null}],\"tags\":[]}"
        }
      ])
      expect(done(events)?.finish_reason).toBe("tool-calls")
    }))

  it.effect("uses the function call's own id when it has one", () =>
    Effect.gen(function*() {
      const events = yield* run(chunk(parts([{ functionCall: { id: "fc-7", name: "ping", args: {} } }], "STOP")))
      expect(finals(events)[0]).toMatchObject({ call_id: "fc-7", name: "ping", arguments: "{}" })
    }))

  it.effect("fails with a WireDecodeError for a streamed-args continuation that continues nothing", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(
        run(
          chunk(parts([{ functionCall: { partialArgs: [{ jsonPath: "$.a", stringValue: "x" }], willContinue: true } }]))
        )
      )
      expect(failure).toMatchObject({ _tag: "WireDecodeError", provider: "gemini", line: 1, reason: "UnexpectedShape" })
      expect(failure.message).toContain("continues no streamed call")
      const badPath = yield* Effect.flip(
        run(
          chunk(
            parts([{
              functionCall: { name: "f", willContinue: true, partialArgs: [{ jsonPath: "a.b", stringValue: "x" }] }
            }])
          )
        )
      )
      expect(badPath.message).toContain("does not start with $")
    }))

  it.effect("ends the turn at an in-stream error object, keeping the text that arrived", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("error-overloaded.sse"))
      expect(finals(events)).toStrictEqual([{
        type: "message",
        id: "item_0",
        content: "Partial answer",
        origin: "agent"
      }])
      expect(errors(events)).toStrictEqual([
        {
          code: "UNAVAILABLE",
          message: "The model is overloaded. Please try again later.",
          type: "provider_overloaded",
          retryable: true,
          status: 503,
          raw: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" }
        }
      ])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "error" })
    }))

  it.effect("keeps an in-stream error whole as its raw, its details (the retry delay) too", () =>
    Effect.gen(function*() {
      const error = {
        code: 429,
        message: "Resource has been exhausted (e.g. check quota).",
        status: "RESOURCE_EXHAUSTED",
        details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "27s" }]
      }
      const events = yield* run(chunk(parts([{ text: "Partial" }])) + chunk({ error }))
      expect(errors(events)).toMatchObject([{ type: "rate_limit", retryable: true, raw: error }])
    }))

  it.effect("gives the sources a message recites (citationMetadata) as its sources, and keeps them", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("recitation-citations.sse"))
      expect(finals(events)).toStrictEqual([{
        type: "message",
        id: "item_0",
        content: "To be, or not to be",
        origin: "agent",
        sources: [{ kind: "url", url: "https://example.org/hamlet", text_start: 0, text_end: 19 }],
        provider_metadata: {
          citationMetadata: {
            citationSources: [{ startIndex: 0, endIndex: 19, uri: "https://example.org/hamlet", license: "" }]
          }
        }
      }])
      expect(errors(events).map((e) => [e.code, e.type])).toStrictEqual([["RECITATION", "content_blocked"]])
    }))

  it.effect("grounding that arrives before any message belongs to the next message, its search after it", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("grounding-early.sse"))
      const items = finals(events)
      expect(items.map((item) => item.type)).toStrictEqual([
        "reasoning",
        "message",
        "message",
        "function_call",
        "function_call_output"
      ])
      expect(items[2]).toMatchObject({
        content: "Here is your poster.",
        sources: [{ kind: "url", url: "https://example.com/sb", title: "example.com" }],
        provider_metadata: { grounding: { webSearchQueries: ["super bowl 2026 logo"] } }
      })
      expect(items[3]).toMatchObject({ name: "google_search", provider_executed: true })
    }))

  it.effect("grounding with no message after it gets a message of its own at the finish", () =>
    Effect.gen(function*() {
      const grounding = { groundingChunks: [{ web: { uri: "https://a.example", title: "A" } }] }
      const events = yield* run(
        chunk({
          candidates: [{ content: { role: "model", parts: [{ text: "hm", thought: true }] }, index: 0, grounding }]
        })
          .replace("\"grounding\"", "\"groundingMetadata\"") +
          chunk(parts([], "STOP"))
      )
      expect(finals(events)).toMatchObject([
        { type: "reasoning", content: "hm" },
        { type: "message", content: "", sources: [{ url: "https://a.example" }], provider_metadata: { grounding } },
        { type: "function_call", name: "retrieval" },
        { type: "function_call_output" }
      ])
    }))

  it.effect("a Maps place of the grounding is a url source, and the search is google_maps", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("maps-grounding.sse"))
      const [message, search] = finals(events)
      expect(message).toMatchObject({
        sources: [{
          kind: "url",
          url: "https://maps.google.com/?cid=123",
          title: "Bestia",
          cited_text: "Try Bestia on Sacramento St.",
          text_end: 28
        }],
        provider_metadata: { grounding: { googleMapsWidgetContextToken: "widgetcontent/AAA" } }
      })
      expect(search).toMatchObject({ type: "function_call", name: "google_maps", provider_executed: true })
    }))

  it.effect("the url context tool's metadata is kept on the message", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("url-context.sse"))
      expect(finals(events)).toStrictEqual([{
        type: "message",
        id: "item_0",
        content: "The page says hello.",
        origin: "agent",
        provider_metadata: {
          urlContextMetadata: {
            urlMetadata: [{
              retrievedUrl: "https://example.com/page",
              urlRetrievalStatus: "URL_RETRIEVAL_STATUS_SUCCESS"
            }]
          }
        }
      }])
    }))

  it.effect("citation sources of several chunks are one list, a source given twice once", () =>
    Effect.gen(function*() {
      const cited = (uri: string) => ({ startIndex: 0, endIndex: 2, uri })
      const withCitations = (text: string, sources: ReadonlyArray<unknown>, finishReason?: string) => ({
        candidates: [{
          content: { role: "model", parts: [{ text }] },
          index: 0,
          citationMetadata: { citationSources: sources },
          ...(finishReason === undefined ? {} : { finishReason })
        }]
      })
      const events = yield* run(
        chunk(withCitations("ab", [cited("https://a.example")])) +
          chunk(withCitations("cd", [cited("https://a.example"), cited("https://b.example")], "STOP"))
      )
      expect(finals(events)).toMatchObject([{
        sources: [{ url: "https://a.example" }, { url: "https://b.example" }]
      }])
    }))

  it.effect("maps a SAFETY finish to a content block, keeping the text that arrived", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("safety-finish.sse"))
      expect(finals(events)).toStrictEqual([{ type: "message", id: "item_0", content: "Here is how", origin: "agent" }])
      expect(errors(events).map((e) => [e.code, e.type, e.retryable])).toStrictEqual([[
        "SAFETY",
        "content_blocked",
        false
      ]])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "content-filter" })
      expect(done(events)?.usage).toMatchObject({ input: 12, output: 3, total: 15 })
    }))

  it.effect("ends a stream without a finishReason as truncated, keeping what arrived and the usage so far", () =>
    Effect.gen(function*() {
      const events = yield* run(fixture("truncated.sse"))
      expect(finals(events)).toStrictEqual([
        { type: "reasoning", id: "item_0", content: "Thinking about it", reasoning_kind: "summary" },
        { type: "message", id: "item_1", content: "The answer is", origin: "agent" }
      ])
      expect(errors(events).map((e) => [e.code, e.retryable])).toStrictEqual([["stream_truncated", true]])
      expect(done(events)).toMatchObject({ status: "error", finish_reason: "error", usage: { input: 8 } })
      const midCall = yield* run(
        chunk(
          parts([{
            functionCall: {
              name: "f",
              willContinue: true,
              partialArgs: [{ jsonPath: "$.q", stringValue: "half", willContinue: true }]
            }
          }])
        )
      )
      expect(finals(midCall)).toStrictEqual([
        { type: "function_call", id: "item_0", call_id: "call_item_0", name: "f", arguments: "{\"q\":\"half\"}" }
      ])
      expect(done(midCall)).toMatchObject({ status: "error" })
    }))

  it.effect("keeps parts it has no item for in a message's provider metadata", () =>
    Effect.gen(function*() {
      const image = { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }
      const events = yield* run(chunk(parts([{ text: "Here:" }, image], "STOP")))
      expect(finals(events)).toStrictEqual([
        { type: "message", id: "item_0", content: "Here:", origin: "agent" },
        { type: "message", id: "item_1", content: "", origin: "agent", provider_metadata: { part: image } }
      ])
    }))

  it.effect("fails with a WireDecodeError naming the line for bad chunks", () =>
    Effect.gen(function*() {
      const notJson = yield* Effect.flip(run(chunk(parts([{ text: "a" }])) + "data: {\"candidates\": [\r\n\r\n"))
      expect(notJson).toMatchObject({ _tag: "WireDecodeError", provider: "gemini", line: 3, reason: "InvalidJson" })
      const badShape = yield* Effect.flip(run(chunk({ candidates: [{ content: { parts: [{ text: 5 }] } }] })))
      expect(badShape).toMatchObject({ line: 1, reason: "UnexpectedShape" })
    }))
})

describe("Gemini.mapFinishReason", () => {
  it("maps each kind of finish", () => {
    const map = (reason: string, calls = false) => {
      const mapped = Gemini.mapFinishReason(reason, calls)
      return [mapped.finishReason, mapped.error?.type, mapped.error?.retryable]
    }
    expect(map("STOP")).toStrictEqual(["stop", undefined, undefined])
    expect(map("STOP", true)).toStrictEqual(["tool-calls", undefined, undefined])
    expect(map("MAX_TOKENS")).toStrictEqual(["length", undefined, undefined])
    for (const reason of ["SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY"]) {
      expect(map(reason)).toStrictEqual(["content-filter", "content_blocked", false])
    }
    // an image not made for another reason is no content block
    for (const reason of ["IMAGE_OTHER", "NO_IMAGE"]) expect(map(reason)).toStrictEqual(["other", undefined, undefined])
    expect(map("MALFORMED_FUNCTION_CALL")).toStrictEqual(["error", "api_error", true])
    expect(map("OTHER")).toStrictEqual(["other", undefined, undefined])
    expect(map("SOMETHING_NEW")).toStrictEqual(["other", undefined, undefined])
  })
})

describe("Gemini.classifyError", () => {
  it("classifies by status, then by HTTP code", () => {
    const kind = (error: { code?: number; status?: string }) => {
      const classified = Gemini.classifyError({ message: "m", ...error })
      return [classified.type, classified.retryable, classified.code]
    }
    expect(kind({ code: 429, status: "RESOURCE_EXHAUSTED" })).toStrictEqual(["rate_limit", true, "RESOURCE_EXHAUSTED"])
    expect(kind({ code: 503, status: "UNAVAILABLE" })).toStrictEqual(["provider_overloaded", true, "UNAVAILABLE"])
    expect(kind({ code: 504, status: "DEADLINE_EXCEEDED" })).toStrictEqual(["timeout", true, "DEADLINE_EXCEEDED"])
    expect(kind({ code: 500, status: "INTERNAL" })).toStrictEqual(["api_error", true, "INTERNAL"])
    expect(kind({ code: 400, status: "INVALID_ARGUMENT" })).toStrictEqual(["api_error", false, "INVALID_ARGUMENT"])
    expect(kind({ code: 529 })).toStrictEqual(["provider_overloaded", true, "529"])
    expect(kind({})).toStrictEqual(["api_error", false, "error"])
  })
})

describe("Gemini.normalizeResponse", () => {
  it.effect("decodes a whole GenerateContentResponse", () =>
    Effect.gen(function*() {
      const events = yield* Gemini.normalizeResponse(ownJson("gemini", "thought-signature-text.json"), options)
      expect(finals(events).map((item) => item.type)).toStrictEqual(["reasoning", "message"])
      expect(done(events)).toMatchObject({
        status: "complete",
        finish_reason: "stop",
        usage: { output: 52, reasoning: 40 }
      })
    }))

  it.effect("decodes Vertex AI's array of chunks and an error body", () =>
    Effect.gen(function*() {
      const events = yield* Gemini.normalizeResponse(ownJson("gemini", "vertex-streamed-args.json"), options)
      expect(finals(events).map((item) => item.type === "function_call" && item.name)).toStrictEqual([
        "get_weather",
        "set_lights"
      ])
      const failed = yield* Gemini.normalizeResponse(ownJson("gemini", "error-body-overloaded.json"), options)
      expect(errors(failed).map((e) => e.type)).toStrictEqual(["provider_overloaded"])
    }))

  it.effect("fails with a WireDecodeError at line 0 for a body of the wrong shape", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(Gemini.normalizeResponse("text", options))
      expect(failure).toMatchObject({ _tag: "WireDecodeError", provider: "gemini", line: 0, reason: "UnexpectedShape" })
    }))
})

describe("streamed function-call arguments", () => {
  it("reads JSON paths with names, quoted names, indexes and an array marker", () => {
    expect(parsePath("$.a.b[2]['c d'][\"e\"]")).toStrictEqual({ segments: ["a", "b", 2, "c d", "e"], array: false })
    expect(parsePath("$.tags[]")).toStrictEqual({ segments: ["tags"], array: true })
    expect(typeof parsePath("$.a..b")).toBe("string")
    expect(typeof parsePath("$.a[x]")).toBe("string")
  })

  it("appends string pieces, keeps __proto__ as a plain key, and refuses conflicting paths", () => {
    const args = new ArgumentsBuilder()
    expect(args.apply({ jsonPath: "$.text", stringValue: "Hel", willContinue: true })).toBeUndefined()
    expect(args.apply({ jsonPath: "$.text", stringValue: "lo" })).toBeUndefined()
    expect(args.apply({ jsonPath: "$['__proto__'].x", numberValue: 1 })).toBeUndefined()
    expect(args.toJson()).toBe("{\"text\":\"Hello\",\"__proto__\":{\"x\":1}}")
    expect(args.apply({ jsonPath: "$.text.inner", boolValue: true })).toContain("not an object or array")
    expect(args.apply({ jsonPath: "$.list[3]", numberValue: 1 })).toContain("past the end")
  })
})

describe("Gemini transcripts", () => {
  transcriptProperties(Providers.get("gemini"), [
    ["thought-then-tool", recorded("gemini", "thought-then-tool.sse")],
    ["tool-parallel", recorded("gemini", "tool-parallel.sse")],
    ["grounding", own("gemini", "grounding.sse")],
    ["safety-finish", own("gemini", "safety-finish.sse")],
    ["recitation-citations", own("gemini", "recitation-citations.sse")],
    ["grounding-early", own("gemini", "grounding-early.sse")],
    ["maps-grounding", own("gemini", "maps-grounding.sse")],
    ["url-context", own("gemini", "url-context.sse")]
  ])
})

import { describe, expect, it } from "@effect/vitest"
import { recorded } from "@sluice/testing/providers"
import * as FastCheck from "fast-check"
import { ToolCallAccumulator } from "../src/index.js"

const { Fragment } = ToolCallAccumulator

const feedAll = (fragments: ReadonlyArray<ToolCallAccumulator.Fragment>) =>
  fragments.reduce(ToolCallAccumulator.feed, ToolCallAccumulator.empty)

const calls = (fragments: ReadonlyArray<ToolCallAccumulator.Fragment>) =>
  ToolCallAccumulator.finalize(feedAll(fragments)).map(({ arguments: args, id, name }) => ({
    id,
    name,
    arguments: args
  }))

/** Cuts text at the given points (taken modulo its length). */
const cut = (text: string, points: ReadonlyArray<number>): Array<string> => {
  const sorted = [...new Set(points.map((point) => point % (text.length + 1)))].sort((a, b) => a - b)
  const pieces: Array<string> = []
  let from = 0
  for (const point of sorted) {
    pieces.push(text.slice(from, point))
    from = point
  }
  pieces.push(text.slice(from))
  return pieces
}

describe("ToolCallAccumulator", () => {
  it("joins OpenAI fragments by index (docs/views.md's example)", () => {
    expect(
      calls([
        Fragment.OpenAi({ index: 0, id: "call_a", name: "search", arguments: "{\"q" }),
        Fragment.OpenAi({ index: 0, arguments: "uery\":\"hi\"}" })
      ])
    ).toStrictEqual([{ id: "call_a", name: "search", arguments: { query: "hi" } }])
  })

  it("joins Anthropic start / partial / stop phases (docs/views.md's example)", () => {
    expect(
      calls([
        Fragment.AnthropicStart({ index: 0, id: "tu_a", name: "search" }),
        Fragment.AnthropicPartial({ index: 0, partialJson: "{\"q" }),
        Fragment.AnthropicPartial({ index: 0, partialJson: "uery\":\"hi\"}" }),
        Fragment.AnthropicStop({ index: 0 })
      ])
    ).toStrictEqual([{ id: "tu_a", name: "search", arguments: { query: "hi" } }])
  })

  it("takes Gemini calls whole, in arrival order", () => {
    const result = ToolCallAccumulator.finalize(
      feedAll([
        Fragment.Gemini({ name: "search", args: { query: "hi" }, metadata: { thoughtSignature: "c2ln" } }),
        Fragment.Gemini({ name: "fetch", args: { url: "https://example.com" } })
      ])
    )
    expect(result.map((call) => [call.name, call.arguments, call.rawArguments, call.metadata])).toStrictEqual([
      ["search", { query: "hi" }, "{\"query\":\"hi\"}", { thoughtSignature: "c2ln" }],
      ["fetch", { url: "https://example.com" }, "{\"url\":\"https://example.com\"}", undefined]
    ])
  })

  it("orders OpenAI calls by index, then Anthropic by index, then Gemini by arrival", () => {
    const result = calls([
      Fragment.Gemini({ name: "g1", args: {} }),
      Fragment.AnthropicStart({ index: 3, id: "tu_3", name: "a3" }),
      Fragment.OpenAi({ index: 2, id: "call_2", name: "o2", arguments: "{}" }),
      Fragment.AnthropicStart({ index: 1, id: "tu_1", name: "a1" }),
      Fragment.OpenAi({ index: 0, id: "call_0", name: "o0", arguments: "{}" }),
      Fragment.Gemini({ name: "g2", args: {} })
    ])
    expect(result.map((call) => call.name)).toStrictEqual(["o0", "o2", "a1", "a3", "g1", "g2"])
  })

  it("tags malformed arguments with the raw text instead of throwing", () => {
    expect(calls([Fragment.OpenAi({ index: 0, id: "c", name: "f", arguments: "{\"a\": tru" })])[0]?.arguments)
      .toStrictEqual({
        _invalid_arguments: "{\"a\": tru"
      })
    expect(ToolCallAccumulator.parseArguments("[1,2]")).toStrictEqual({ _invalid_arguments: "[1,2]" })
    expect(ToolCallAccumulator.parseArguments("  ")).toStrictEqual({})
    expect(ToolCallAccumulator.parseArguments("{\"a\":1}")).toStrictEqual({ a: 1 })
  })

  it("matches a fragment without index to its call by id", () => {
    const result = calls([
      Fragment.OpenAi({ index: 0, id: "call_a", name: "a", arguments: "{\"x\":" }),
      Fragment.OpenAi({ index: 1, id: "call_b", name: "b", arguments: "{\"y\":" }),
      Fragment.OpenAi({ id: "call_a", arguments: "1}" }),
      Fragment.OpenAi({ id: "call_b", arguments: "2}" })
    ])
    expect(result).toStrictEqual([
      { id: "call_a", name: "a", arguments: { x: 1 } },
      { id: "call_b", name: "b", arguments: { y: 2 } }
    ])
  })

  it("sends a fragment with neither index nor id to the call the previous fragment went to", () => {
    const result = calls([
      Fragment.OpenAi({ id: "call_a", name: "a", arguments: "{\"x\":" }),
      Fragment.OpenAi({ arguments: "1}" })
    ])
    expect(result).toStrictEqual([{ id: "call_a", name: "a", arguments: { x: 1 } }])
  })

  it("accepts indexes that start above zero and interleave", () => {
    const result = calls([
      Fragment.OpenAi({ index: 3, id: "call_c", name: "c", arguments: "{\"n\"" }),
      Fragment.OpenAi({ index: 5, id: "call_e", name: "e", arguments: "{\"m\"" }),
      Fragment.OpenAi({ index: 3, arguments: ":3}" }),
      Fragment.OpenAi({ index: 5, arguments: ":5}" })
    ])
    expect(result).toStrictEqual([
      { id: "call_c", name: "c", arguments: { n: 3 } },
      { id: "call_e", name: "e", arguments: { m: 5 } }
    ])
  })

  it("treats a duplicate id as one call", () => {
    expect(
      calls([
        Fragment.OpenAi({ index: 0, id: "call_a", name: "a", arguments: "{\"x\"" }),
        Fragment.OpenAi({ index: 0, id: "call_a", name: "a", arguments: ":1}" })
      ])
    ).toStrictEqual([{ id: "call_a", name: "a", arguments: { x: 1 } }])
    expect(
      calls([
        Fragment.AnthropicStart({ index: 0, id: "tu_a", name: "a" }),
        Fragment.AnthropicStart({ index: 1, id: "tu_a", name: "a" }),
        Fragment.AnthropicPartial({ index: 1, partialJson: "{\"x\":1}" })
      ])
    ).toStrictEqual([{ id: "tu_a", name: "a", arguments: { x: 1 } }])
    expect(
      calls([
        Fragment.Gemini({ id: "g", name: "a", args: { x: 1 } }),
        Fragment.Gemini({ id: "g", name: "a", args: { x: 1 } })
      ])
    ).toStrictEqual([{ id: "g", name: "a", arguments: { x: 1 } }])
  })

  it("starts a new call when a server reuses an index with a new id", () => {
    const result = calls([
      Fragment.OpenAi({ index: 0, id: "call_a", name: "a", arguments: "{}" }),
      Fragment.OpenAi({ index: 0, id: "call_b", name: "b", arguments: "{}" })
    ])
    expect(result.map((call) => call.id)).toStrictEqual(["call_a", "call_b"])
  })

  it("does not finalize a call because a prefix of its arguments parses", () => {
    const first = ToolCallAccumulator.step(
      ToolCallAccumulator.empty,
      Fragment.AnthropicStart({ index: 0, id: "tu", name: "f" })
    )
    const parsable = ToolCallAccumulator.step(
      first.accumulator,
      Fragment.AnthropicPartial({ index: 0, partialJson: "{\"a\":1}" })
    )
    expect(parsable.kind).toBe("appended")
    const more = ToolCallAccumulator.step(
      parsable.accumulator,
      Fragment.AnthropicPartial({ index: 0, partialJson: "{\"b\":2}" })
    )
    expect(more.kind).toBe("appended")
    const stop = ToolCallAccumulator.step(more.accumulator, Fragment.AnthropicStop({ index: 0 }))
    expect(stop.kind).toBe("closed")
    expect(ToolCallAccumulator.finalize(stop.accumulator)[0]?.arguments).toStrictEqual({
      _invalid_arguments: "{\"a\":1}{\"b\":2}"
    })
  })

  it("uses an Anthropic block's start input when no partial JSON follows", () => {
    const result = ToolCallAccumulator.finalize(
      feedAll([
        Fragment.AnthropicStart({ index: 0, id: "tu", name: "ping", input: {} }),
        Fragment.AnthropicStop({ index: 0 })
      ])
    )
    expect(result.map((call) => [call.rawArguments, call.arguments])).toStrictEqual([["{}", {}]])
  })

  it("keeps partial JSON that arrives without its start, and ignores a stop of an unknown block", () => {
    const stop = ToolCallAccumulator.step(ToolCallAccumulator.empty, Fragment.AnthropicStop({ index: 4 }))
    expect(stop.kind).toBe("ignored")
    expect(calls([Fragment.AnthropicPartial({ index: 2, partialJson: "{\"a\":1}" })])).toStrictEqual([
      { id: undefined, name: "", arguments: { a: 1 } }
    ])
  })

  it("is a value: feeding does not change the accumulator fed", () => {
    const one = ToolCallAccumulator.feed(
      ToolCallAccumulator.empty,
      Fragment.OpenAi({ index: 0, id: "c", name: "f", arguments: "{\"a\"" })
    )
    const two = ToolCallAccumulator.feed(one, Fragment.OpenAi({ index: 0, arguments: ":1}" }))
    expect(ToolCallAccumulator.finalize(one)[0]?.rawArguments).toBe("{\"a\"")
    expect(ToolCallAccumulator.finalize(two)[0]?.rawArguments).toBe("{\"a\":1}")
    expect(ToolCallAccumulator.size(ToolCallAccumulator.empty)).toBe(0)
  })

  it("any split of the argument text gives the same calls", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.tuple(
          FastCheck.dictionary(FastCheck.string(), FastCheck.jsonValue(), { maxKeys: 5 }),
          FastCheck.dictionary(FastCheck.string(), FastCheck.jsonValue(), { maxKeys: 5 }),
          FastCheck.array(FastCheck.nat(), { maxLength: 12 }),
          FastCheck.array(FastCheck.nat(), { maxLength: 12 }),
          FastCheck.boolean()
        ),
        ([first, second, cutsA, cutsB, interleave]) => {
          const textA = JSON.stringify(first)
          const textB = JSON.stringify(second)
          const piecesA = cut(textA, cutsA)
          const piecesB = cut(textB, cutsB)
          // OpenAI: index-keyed pieces, either one call after the other or interleaved
          const openAi: Array<ToolCallAccumulator.Fragment> = [
            Fragment.OpenAi({ index: 0, id: "call_a", name: "a", arguments: "" }),
            Fragment.OpenAi({ index: 1, id: "call_b", name: "b", arguments: "" })
          ]
          const longest = Math.max(piecesA.length, piecesB.length)
          if (interleave) {
            for (let i = 0; i < longest; i++) {
              if (i < piecesA.length) openAi.push(Fragment.OpenAi({ index: 0, arguments: piecesA[i]! }))
              if (i < piecesB.length) openAi.push(Fragment.OpenAi({ index: 1, arguments: piecesB[i]! }))
            }
          } else {
            for (const piece of piecesA) openAi.push(Fragment.OpenAi({ index: 0, arguments: piece }))
            for (const piece of piecesB) openAi.push(Fragment.OpenAi({ index: 1, arguments: piece }))
          }
          const expected = [
            { id: "call_a", name: "a", arguments: JSON.parse(textA) },
            { id: "call_b", name: "b", arguments: JSON.parse(textB) }
          ]
          expect(calls(openAi)).toStrictEqual(expected)
          expect(ToolCallAccumulator.finalize(feedAll(openAi)).map((call) => call.rawArguments)).toStrictEqual([
            textA,
            textB
          ])
          // Anthropic: the same pieces as partial JSON of two blocks
          const anthropic: Array<ToolCallAccumulator.Fragment> = [
            Fragment.AnthropicStart({ index: 0, id: "call_a", name: "a", input: {} }),
            ...piecesA.map((partialJson) => Fragment.AnthropicPartial({ index: 0, partialJson })),
            Fragment.AnthropicStop({ index: 0 }),
            Fragment.AnthropicStart({ index: 1, id: "call_b", name: "b", input: {} }),
            ...piecesB.map((partialJson) => Fragment.AnthropicPartial({ index: 1, partialJson })),
            Fragment.AnthropicStop({ index: 1 })
          ]
          expect(calls(anthropic)).toStrictEqual(expected)
        }
      ),
      { numRuns: 100 }
    )
  }, 60_000)
})

/**
 * Shape detection (the first design's `feed`): fragments as the providers send them, no tag.
 * The raw events are copied from this repo's recorded transcripts
 * (test/fixtures/openai-chat/tools-interleaved.sse, anthropic/thinking-tools.sse,
 * gemini/vertex-streamed-args.sse, openai-responses/parallel-tools.sse) and the
 * providers' streaming docs.
 */
describe("ToolCallAccumulator shape detection", () => {
  const rawCalls = (fragments: ReadonlyArray<unknown>) =>
    ToolCallAccumulator.finalize(fragments.reduce<ToolCallAccumulator.ToolCallAccumulator>(
      (acc, fragment) => ToolCallAccumulator.feed(acc, fragment),
      ToolCallAccumulator.empty
    )).map(({ arguments: args, id, metadata, name }) => ({ id, name, arguments: args, metadata }))

  it("detects OpenAI Chat tool_calls entries, lists, deltas and chunks", () => {
    expect(rawCalls([
      { index: 0, id: "call_a", type: "function", function: { name: "search", arguments: "" } },
      [{ index: 0, function: { arguments: "{\"q" } }],
      { role: "assistant", content: null, tool_calls: [{ index: 0, function: { arguments: "uery\":" } }] },
      {
        id: "chatcmpl-1",
        object: "chat.completion.chunk",
        choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: "\"hi\"}" } }] } }]
      },
      { id: "chatcmpl-1", choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }
    ])).toStrictEqual([{ id: "call_a", name: "search", arguments: { query: "hi" }, metadata: undefined }])
  })

  it("detects Anthropic content_block_start / input_json_delta / content_block_stop", () => {
    expect(rawCalls([
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "toolu_01", name: "get_weather", input: {} }
      },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "{\"city\": \"Pa" } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "ris\"}" } },
      { type: "content_block_stop", index: 1 }
    ])).toStrictEqual([{ id: "toolu_01", name: "get_weather", arguments: { city: "Paris" }, metadata: undefined }])
  })

  it("skips the input deltas of Anthropic blocks that are not tool_use (server tools, text)", () => {
    // after recorded/anthropic/web-search.sse: a server_tool_use block streams its input too
    expect(rawCalls([
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Searching." } },
      { type: "content_block_stop", index: 0 },
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "server_tool_use", id: "srvtoolu_01", name: "web_search", input: {} }
      },
      {
        type: "content_block_delta",
        index: 1,
        delta: { type: "input_json_delta", partial_json: "{\"query\": \"x\"}" }
      },
      { type: "content_block_stop", index: 1 },
      {
        type: "content_block_start",
        index: 2,
        content_block: { type: "tool_use", id: "toolu_02", name: "f", input: {} }
      },
      { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "{\"a\": 1}" } },
      { type: "content_block_stop", index: 2 }
    ])).toStrictEqual([{ id: "toolu_02", name: "f", arguments: { a: 1 }, metadata: undefined }])
  })

  it("detects the first design's `_phase` form of Anthropic fragments", () => {
    expect(rawCalls([
      { id: "tu_a", name: "search", _index: 0, _phase: "start" },
      { _index: 0, _phase: "partial", partial_json: "{\"q" },
      { _index: 0, _phase: "partial", partial_json: "uery\":\"hi\"}" },
      { _index: 0, _phase: "stop" }
    ])).toStrictEqual([{ id: "tu_a", name: "search", arguments: { query: "hi" }, metadata: undefined }])
  })

  it("detects Gemini functionCall parts, bare calls and whole chunks", () => {
    expect(rawCalls([
      { functionCall: { name: "search", args: { query: "hi" } }, thoughtSignature: "c2ln" },
      {
        candidates: [{
          content: {
            role: "model",
            parts: [{ text: "two calls" }, { functionCall: { id: "fc_1", name: "fetch", args: { url: "u" } } }]
          }
        }]
      },
      { name: "ping", args: {} },
      { name: "search", arguments: { query: "seed" } }
    ])).toStrictEqual([
      { id: undefined, name: "search", arguments: { query: "hi" }, metadata: { thoughtSignature: "c2ln" } },
      { id: "fc_1", name: "fetch", arguments: { url: "u" }, metadata: undefined },
      { id: undefined, name: "ping", arguments: {}, metadata: undefined },
      { id: undefined, name: "search", arguments: { query: "seed" }, metadata: undefined }
    ])
  })

  it("detects Responses function_call items and argument deltas, folding the done item once", () => {
    const item = (args: string) => ({
      type: "function_call",
      id: "fc_68",
      call_id: "call_x",
      name: "get_weather",
      arguments: args,
      status: args === "" ? "in_progress" : "completed"
    })
    expect(rawCalls([
      { type: "response.output_item.added", output_index: 1, sequence_number: 4, item: item("") },
      {
        type: "response.function_call_arguments.delta",
        item_id: "fc_68",
        output_index: 1,
        sequence_number: 5,
        delta: "{\"location\":"
      },
      {
        type: "response.function_call_arguments.delta",
        item_id: "fc_68",
        output_index: 1,
        sequence_number: 6,
        delta: "\"Paris\"}"
      },
      {
        type: "response.function_call_arguments.done",
        item_id: "fc_68",
        output_index: 1,
        sequence_number: 7,
        arguments: "{\"location\":\"Paris\"}"
      },
      { type: "response.output_item.done", output_index: 1, sequence_number: 8, item: item("{\"location\":\"Paris\"}") }
    ])).toStrictEqual([{ id: "call_x", name: "get_weather", arguments: { location: "Paris" }, metadata: undefined }])
    // a done item no event announced is a call of its own
    expect(rawCalls([
      { type: "response.output_item.done", output_index: 0, item: item("{\"location\":\"Rome\"}") }
    ])).toStrictEqual([{ id: "call_x", name: "get_weather", arguments: { location: "Rome" }, metadata: undefined }])
  })

  it("drops values of no known shape and keeps tagged fragments working beside raw ones", () => {
    const start = ToolCallAccumulator.feed(ToolCallAccumulator.empty, { type: "ping" })
    expect(start).toBe(ToolCallAccumulator.empty)
    expect(ToolCallAccumulator.detect("text")).toStrictEqual([])
    expect(ToolCallAccumulator.detect(null)).toStrictEqual([])
    expect(rawCalls([
      Fragment.OpenAi({ index: 0, id: "call_a", name: "f", arguments: "{\"a\"" }),
      [{ index: 0, function: { arguments: ":1}" } }]
    ])).toStrictEqual([{ id: "call_a", name: "f", arguments: { a: 1 }, metadata: undefined }])
    expect(ToolCallAccumulator.detect(Fragment.AnthropicStop({ index: 2 }))).toStrictEqual([
      Fragment.AnthropicStop({ index: 2 })
    ])
    expect(ToolCallAccumulator.isFragment({ _tag: "Other" })).toBe(false)
  })

  it("keeps malformed raw arguments as `_invalid_arguments`", () => {
    expect(rawCalls([{ index: 0, id: "c", function: { name: "f", arguments: "{\"a\": tru" } }])[0]?.arguments)
      .toStrictEqual({ _invalid_arguments: "{\"a\": tru" })
  })

  it("marks a call with malformed arguments invalid, with the raw text and the parse error, so a runner refuses it", () => {
    const rawCalls = (fragments: ReadonlyArray<unknown>) =>
      ToolCallAccumulator.finalize(fragments.reduce<ToolCallAccumulator.ToolCallAccumulator>(
        (acc, fragment) => ToolCallAccumulator.feed(acc, fragment),
        ToolCallAccumulator.empty
      ))
    const [bad] = rawCalls([{ index: 0, id: "c", function: { name: "f", arguments: "{\"a\": tru" } }])
    expect(bad?.invalid?.raw).toBe("{\"a\": tru")
    expect(bad?.invalid?.error).toMatch(/JSON/)
    const [array] = rawCalls([{ index: 0, id: "c", function: { name: "f", arguments: "[1,2]" } }])
    expect(array?.invalid).toStrictEqual({ raw: "[1,2]", error: "the arguments are JSON but not an object (an array)" })
    const [good] = rawCalls([{ index: 0, id: "c", function: { name: "f", arguments: "{\"a\":1}" } }])
    expect(good).not.toHaveProperty("invalid")
  })
})

/**
 * Every data line of a recorded body fed raw, as a caller that does not know the
 * provider would (the providers' recorded transcripts, `recorded/<provider>/<name>.sse`
 * of `@sluice/testing/providers`; sources in the `.source.json` beside each).
 */
describe("ToolCallAccumulator shape detection on recorded bodies", () => {
  const dataOf = (name: string): Array<unknown> =>
    recorded(name)
      .split("\n")
      .filter((line) => line.startsWith("data:") && line.slice(5).trim() !== "[DONE]")
      .map((line): unknown => JSON.parse(line.slice(5)))

  const fed = (name: string) =>
    ToolCallAccumulator.finalize(
      dataOf(name).reduce<ToolCallAccumulator.ToolCallAccumulator>(
        (acc, raw) => ToolCallAccumulator.feed(acc, raw),
        ToolCallAccumulator.empty
      )
    ).map(({ arguments: args, id, name }) => ({ id, name, arguments: args }))

  it("OpenAI Chat chunks (charmbracelet/fantasy multi_tool_streaming)", () => {
    const calls = fed("openai-chat/tool-parallel.sse")
    expect(calls.map((call) => call.name)).toStrictEqual(["add", "multiply"])
    expect(calls.every((call) => typeof call.id === "string" && !("_invalid_arguments" in call.arguments))).toBe(true)
  })

  it("Anthropic events (charmbracelet/fantasy multi_tool_streaming)", () => {
    expect(fed("anthropic/tool-parallel.sse").map((call) => [call.name, call.arguments])).toStrictEqual([
      ["add", { a: 2, b: 3 }],
      ["multiply", { a: 2, b: 3 }]
    ])
  })

  it("Anthropic server tool use gives no client call", () => {
    expect(fed("anthropic/web-search.sse")).toStrictEqual([])
  })

  it("Gemini chunks", () => {
    expect(fed("gemini/tool-parallel.sse").map((call) => [call.name, call.arguments])).toStrictEqual([
      ["add", { b: 3, a: 2 }],
      ["multiply", { a: 2, b: 3 }]
    ])
  })

  it("Responses events: one call, its arguments once", () => {
    const calls = fed("openai-responses/reasoning-summary-tool.sse")
    expect(calls).toHaveLength(1)
    expect(calls[0]?.name).toBe("weather")
    expect(calls[0]?.arguments).not.toHaveProperty("_invalid_arguments")
  })
})

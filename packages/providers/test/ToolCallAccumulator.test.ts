import { describe, expect, it } from "@effect/vitest"
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

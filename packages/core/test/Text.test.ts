import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "fast-check"
import { Text } from "../src/index.js"

describe("Text.append", () => {
  it("gives the same text as concatenating, whatever the deltas", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.string({ maxLength: 64 }),
        FastCheck.array(FastCheck.string({ unit: "grapheme", maxLength: 40 }), { maxLength: 600 }),
        (start, deltas) => {
          let appended = start
          let concatenated = start
          for (const delta of deltas) {
            appended = Text.append(appended, delta)
            concatenated += delta
          }
          expect(appended).toBe(concatenated)
        }
      ),
      { numRuns: 200 }
    )
  })

  it("keeps a long text whole across many block boundaries", () => {
    // 40,000 deltas of 1 to 7 characters: the block grows from 1 KiB to an eighth of the text
    let text = ""
    const parts: Array<string> = []
    for (let i = 0; i < 40_000; i++) {
      const delta = "abcdefg".slice(0, 1 + (i % 7)) + (i % 10)
      parts.push(delta)
      text = Text.append(text, delta)
    }
    expect(text).toBe(parts.join(""))
    expect(text.length).toBe(parts.reduce((sum, part) => sum + part.length, 0))
  })

  it("an empty delta leaves the text as it is", () => {
    expect(Text.append("abc", "")).toBe("abc")
    expect(Text.append("", "")).toBe("")
  })
})

describe("Text.compact", () => {
  it("gives the same text", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(FastCheck.string(), { maxLength: 50 }), (pieces) => {
        let built = ""
        for (const piece of pieces) built += piece
        expect(Text.compact(built)).toBe(pieces.join(""))
      }),
      { numRuns: 200 }
    )
  })
})

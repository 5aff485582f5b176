import { describe, expect, it } from "vitest"
import { citationsIn } from "../checkCitations.js"

describe("checkCitations", () => {
  it("finds a seed document or an issue cited by number, in any case", () => {
    // built from parts, so that this file does not cite
    const seed = "seed"
    const text = [
      "ok: docs/upserts.md#tc-09",
      `as S${seed.slice(1)} 002 says`,
      `the ${seed}'s keys`,
      `fixed in ${"issue"} 26`
    ]
      .join("\n")
    expect(citationsIn("a.ts", text).map(({ line }) => line)).toEqual([2, 3, 4])
  })

  it("leaves a file that cites docs/ alone", () => {
    expect(citationsIn("b.ts", "see docs/views.md and the first design's keys")).toEqual([])
  })
})

import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "fast-check"
import { ToolCallId } from "../src/index.js"

const prefixes = ["call_", "toolu_", "raw_", "hist_", "call_call_", "call_toolu_", "call_raw_", "toolu_call_", ""]
const providerId = FastCheck.tuple(FastCheck.constantFrom(...prefixes), FastCheck.string({ maxLength: 24 }))
  .map(([prefix, rest]) => prefix + rest)
  .filter((id) => !ToolCallId.isHistoryId(id))

describe("ToolCallId", () => {
  it("maps OpenAI ids as docs/views.md#icontent does, and back", () => {
    expect(ToolCallId.toHistory("call_abc123")).toBe("hist_tool_abc123")
    expect(ToolCallId.fromHistory("hist_tool_abc123")).toBe("call_abc123")
  })

  it("keeps the provider of Anthropic and unprefixed ids in the history id", () => {
    expect(ToolCallId.toHistory("toolu_01A09q90qw90lq917835lq9")).toBe("hist_tool_toolu_01A09q90qw90lq917835lq9")
    expect(ToolCallId.fromHistory("hist_tool_toolu_01A09q90qw90lq917835lq9")).toBe("toolu_01A09q90qw90lq917835lq9")
    expect(ToolCallId.toHistory("get_weather_0")).toBe("hist_tool_raw_get_weather_0")
    expect(ToolCallId.fromHistory("hist_tool_raw_get_weather_0")).toBe("get_weather_0")
  })

  it("escapes OpenAI ids whose rest looks like another form, so no two ids collide", () => {
    expect(ToolCallId.toHistory("call_toolu_x")).toBe("hist_tool_call_toolu_x")
    expect(ToolCallId.toHistory("toolu_x")).toBe("hist_tool_toolu_x")
    expect(ToolCallId.toHistory("call_raw_y")).toBe("hist_tool_call_raw_y")
    expect(ToolCallId.toHistory("y")).toBe("hist_tool_raw_y")
  })

  it("keeps history ids in toHistory and provider ids in fromHistory", () => {
    expect(ToolCallId.toHistory("hist_tool_abc")).toBe("hist_tool_abc")
    expect(ToolCallId.fromHistory("call_abc")).toBe("call_abc")
    expect(ToolCallId.fromHistory("toolu_abc")).toBe("toolu_abc")
  })

  it("fromHistory(toHistory(id)) === id for every id not in history form", () => {
    FastCheck.assert(
      FastCheck.property(providerId, (id) => {
        const history = ToolCallId.toHistory(id)
        expect(ToolCallId.isHistoryId(history)).toBe(true)
        expect(ToolCallId.fromHistory(history)).toBe(id)
      }),
      { numRuns: 100 }
    )
  }, 30_000)

  it("toHistory is injective", () => {
    FastCheck.assert(
      FastCheck.property(providerId, providerId, (a, b) => {
        FastCheck.pre(a !== b)
        expect(ToolCallId.toHistory(a)).not.toBe(ToolCallId.toHistory(b))
      }),
      { numRuns: 100 }
    )
  }, 30_000)
})

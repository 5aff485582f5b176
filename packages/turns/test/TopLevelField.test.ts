import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "fast-check"
import { topLevelString } from "../src/internal/topLevelField.js"

describe("topLevelString", () => {
  it("reads a top-level string field past strings, objects, arrays and numbers before it", () => {
    const text = JSON.stringify({
      type: "item_upsert",
      content: "a \"quoted\" \\ text with \"itemId\":\"fake\" inside",
      toolOutput: { itemId: "nested", list: [1, "]", { a: "}" }] },
      n: 12.5,
      ok: true,
      none: null,
      itemId: "item_7"
    })
    expect(topLevelString(text, "itemId")).toBe("item_7")
    expect(topLevelString(` { "itemId" : "x\\u0041" } `, "itemId")).toBe("xA")
  })

  it("is undefined for a missing field, a field that is not a string, and text that is not an object", () => {
    expect(topLevelString(JSON.stringify({ a: "b" }), "itemId")).toBeUndefined()
    expect(topLevelString(JSON.stringify({ itemId: 3 }), "itemId")).toBeUndefined()
    expect(topLevelString("[\"itemId\", \"x\"]", "itemId")).toBeUndefined()
    expect(topLevelString("{\"content\": \"never closed", "itemId")).toBeUndefined()
    expect(topLevelString("", "itemId")).toBeUndefined()
  })

  it("agrees with JSON.parse on any object", () =>
    FastCheck.assert(
      FastCheck.property(
        FastCheck.dictionary(FastCheck.string(), FastCheck.jsonValue()),
        FastCheck.option(FastCheck.string(), { nil: undefined }),
        (object, itemId) => {
          const record: Record<string, unknown> = { ...object }
          delete record["itemId"]
          if (itemId !== undefined) record["itemId"] = itemId
          const text = JSON.stringify(record)
          expect(topLevelString(text, "itemId")).toBe(itemId)
        }
      ),
      { numRuns: 300 }
    ), 30_000)
})

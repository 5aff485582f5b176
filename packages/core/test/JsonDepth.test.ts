/**
 * The nesting rule for a client's JSON (`Json.nestingDepth`, `depthProblem`,
 * `parseBounded`): counted in one pass over the text, without recursion, so text
 * nested far deeper than any stack allows is refused with its depth and the limit
 * named, and brackets inside strings never count.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as FastCheck from "fast-check"
import { Json } from "../src/index.js"

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth)
const nestedObjects = (depth: number) => "{\"a\":".repeat(depth) + "1" + "}".repeat(depth)

// The depth of a parsed value, by recursion (the values of the property are shallow).
const depthOf = (value: unknown): number => {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf))
  if (typeof value === "object" && value !== null) return 1 + Math.max(0, ...Object.values(value).map(depthOf))
  return 0
}

describe("Json.nestingDepth", () => {
  it("counts arrays and objects, not the brackets of strings or escaped quotes", () => {
    expect(Json.nestingDepth("1")).toBe(0)
    expect(Json.nestingDepth("\"[[[\"")).toBe(0)
    expect(Json.nestingDepth("[]")).toBe(1)
    expect(Json.nestingDepth("{}")).toBe(1)
    expect(Json.nestingDepth("[[1],{\"a\":[2]}]")).toBe(3)
    expect(Json.nestingDepth("[\"]]]\\\"[[[\", [[\"\\\\\"], 2]]")).toBe(3)
    expect(Json.nestingDepth("{\"k\\\"[\": {\"x\": \"}\"}}")).toBe(2)
  }, 10_000)

  it("agrees with the depth of the parsed value for any JSON value", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.jsonValue({ maxDepth: 6 }), (value) => {
        expect(Json.nestingDepth(JSON.stringify(value))).toBe(depthOf(value))
      }),
      { numRuns: 500 }
    )
  }, 30_000)

  it("reads text nested a million levels deep without recursion", () => {
    expect(Json.nestingDepth(nested(1_000_000))).toBe(1_000_000)
    expect(Json.nestingDepth(nestedObjects(100_000))).toBe(100_000)
  }, 30_000)
})

describe("Json.depthProblem and Json.parseBounded", () => {
  it("accepts the default limit, 128 levels, and refuses one more, naming the depth and the limit", () => {
    expect(Json.defaultMaxDepth).toBe(128)
    expect(Json.depthProblem(nested(128))).toBeUndefined()
    const problem = Json.depthProblem(nested(129))
    expect(problem).toMatchObject({ _tag: "JsonTooDeep", depth: 129, limit: 128 })
    expect(problem?.message).toBe("the JSON nests 129 levels deep, more than the 128 accepted")
    expect(Json.depthProblem(nested(5), 4)).toMatchObject({ depth: 5, limit: 4 })
    expect(Json.depthProblem(nested(4), 4)).toBeUndefined()
  }, 10_000)

  it("refuses text nested 30,000 and 10,000 deep as JsonTooDeep before parsing it", () => {
    const arrays = Json.parseBounded(nested(30_000))
    expect(Result.isFailure(arrays) && arrays.failure).toMatchObject({ _tag: "JsonTooDeep", depth: 30_000 })
    const objects = Json.parseBounded(nestedObjects(10_000))
    expect(Result.isFailure(objects) && objects.failure).toMatchObject({ _tag: "JsonTooDeep", depth: 10_000 })
    // what the refusal spares: a walk of such a value overflows the stack
    expect(() => JSON.stringify(JSON.parse(nested(30_000)))).toThrow(RangeError)
  }, 30_000)

  it("parses JSON within the limit, and names what is wrong with text that is not JSON", () => {
    expect(Json.parseBounded("{\"a\":[1,{\"b\":null}]}")).toStrictEqual(Result.succeed({ a: [1, { b: null }] }))
    const invalid = Json.parseBounded("{\"a\":")
    expect(Result.isFailure(invalid) && invalid.failure._tag).toBe("JsonInvalid")
    expect(Result.isFailure(invalid) && invalid.failure.message.length).toBeGreaterThan(0)
  }, 10_000)
})

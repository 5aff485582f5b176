import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { SchemaDecode } from "../src/index.js"

const Shape = Schema.Union([
  Schema.Struct({ type: Schema.Literal("circle"), radius: Schema.Number }),
  Schema.Struct({ type: Schema.Literal("square"), side: Schema.Number })
])

// JSON text can describe it; `String` of it throws (Effect 3's union decoder called `String` on discriminants)
const unprintable: unknown = JSON.parse(`{"type": {"toString": false}}`)

// a value whose field cannot be read: Effect 4's decoder throws on it
const unreadable: unknown = Object.defineProperty({}, "type", {
  enumerable: true,
  get() {
    throw new TypeError("no reading this")
  }
})

describe("SchemaDecode", () => {
  it("Effect's own decoder throws on this input (the reason for this module)", () => {
    expect(() => Schema.decodeUnknownResult(Shape)(unreadable)).toThrow()
    expect(() => Schema.decodeUnknownExit(Shape)(unreadable)).toThrow()
  })

  it("decodeUnknownResult: decodes, fails as Schema does, and turns a throw into a SchemaError naming it", () => {
    const decode = SchemaDecode.decodeUnknownResult(Shape)
    expect(decode({ type: "circle", radius: 2 })).toStrictEqual(Result.succeed({ type: "circle", radius: 2 }))
    const wrong = decode({ type: "circle", radius: "2" })
    expect(Result.isFailure(wrong) && wrong.failure.message).toContain("radius")
    expect(Result.isFailure(decode(unprintable))).toBe(true)
    const thrown = decode(unreadable)
    expect(Result.isFailure(thrown) && thrown.failure._tag).toBe("SchemaError")
    expect(Result.isFailure(thrown) && thrown.failure.message).toContain(
      "the decoder could not read this value (TypeError"
    )
  })

  it("decodeUnknownOption: None where the decoder throws", () => {
    const decode = SchemaDecode.decodeUnknownOption(Shape)
    expect(decode({ type: "square", side: 1 })).toStrictEqual(Option.some({ type: "square", side: 1 }))
    expect(decode(unprintable)).toStrictEqual(Option.none())
    expect(decode(unreadable)).toStrictEqual(Option.none())
  })

  it.effect("decodeUnknown: a typed failure, never a defect", () =>
    Effect.gen(function*() {
      const decode = SchemaDecode.decodeUnknown(Shape, { errors: "all" })
      expect(yield* decode({ type: "square", side: 3 })).toStrictEqual({ type: "square", side: 3 })
      const error = yield* Effect.flip(decode(unreadable))
      expect(error._tag).toBe("SchemaError")
      expect((yield* Effect.flip(decode(unprintable)))._tag).toBe("SchemaError")
    }))
})

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { SchemaDecode } from "../src/index.js"

const Shape = Schema.Union(
  Schema.Struct({ type: Schema.Literal("circle"), radius: Schema.Number }),
  Schema.Struct({ type: Schema.Literal("square"), side: Schema.Number })
)

// JSON text can describe it; `String` of it throws, and Effect's union decoder calls `String` on discriminants
const unprintable: unknown = JSON.parse(`{"type": {"toString": false}}`)

describe("SchemaDecode", () => {
  it("Effect's own decoder throws on this input (the reason for this module)", () => {
    expect(() => Schema.decodeUnknownEither(Shape)(unprintable)).toThrow(TypeError)
  })

  it("decodeUnknownEither: decodes, fails as Schema does, and turns a throw into a ParseError naming it", () => {
    const decode = SchemaDecode.decodeUnknownEither(Shape)
    expect(decode({ type: "circle", radius: 2 })).toStrictEqual(Either.right({ type: "circle", radius: 2 }))
    const wrong = decode({ type: "circle", radius: "2" })
    expect(Either.isLeft(wrong) && ParseResult.TreeFormatter.formatErrorSync(wrong.left)).toContain("radius")
    const thrown = decode(unprintable)
    expect(Either.isLeft(thrown) && thrown.left._tag).toBe("ParseError")
    expect(Either.isLeft(thrown) && ParseResult.TreeFormatter.formatErrorSync(thrown.left)).toContain(
      "the decoder could not read this value (TypeError"
    )
  })

  it("decodeUnknownOption: None where the decoder throws", () => {
    const decode = SchemaDecode.decodeUnknownOption(Shape)
    expect(decode({ type: "square", side: 1 })).toStrictEqual(Option.some({ type: "square", side: 1 }))
    expect(decode(unprintable)).toStrictEqual(Option.none())
  })

  it.effect("decodeUnknown: a typed failure, never a defect", () =>
    Effect.gen(function*() {
      const decode = SchemaDecode.decodeUnknown(Shape, { errors: "all" })
      expect(yield* decode({ type: "square", side: 3 })).toStrictEqual({ type: "square", side: 3 })
      const error = yield* Effect.flip(decode(unprintable))
      expect(error._tag).toBe("ParseError")
    }))
})

import { describe, it } from "@effect/vitest"
import { SchemaGuard } from "@sluice/core"
import * as Arbitrary from "effect/Arbitrary"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Schema from "effect/Schema"
import { Anthropic, Gemini, OpenAiChat } from "../src/index.js"

// the wire schemas every streamed event is checked against on the fast path
const wire: ReadonlyArray<readonly [string, Schema.Schema<any, any, never>]> = [
  ["OpenAiChat.StreamChunk", OpenAiChat.StreamChunk],
  ["OpenAiChat.Response", OpenAiChat.Response],
  ["Anthropic.StreamChunk", Anthropic.StreamChunk],
  ["Gemini.GenerateContentResponse", Gemini.GenerateContentResponse]
]

/** Valid values, valid values with one field replaced, and anything JSON can be. */
const inputs = (schema: Schema.Schema<any, any, never>): FastCheck.Arbitrary<unknown> => {
  const encoded = Arbitrary.make(Schema.encodedSchema(schema))
  const broken = FastCheck.tuple(encoded, FastCheck.jsonValue()).map(([value, replacement]) => {
    if (typeof value !== "object" || value === null) return replacement
    const keys = Object.keys(value)
    if (keys.length === 0) return replacement
    return { ...value, [keys[keys.length - 1]!]: replacement }
  })
  return FastCheck.oneof(encoded, broken, FastCheck.jsonValue())
}

describe("wire schema guards", () => {
  for (const [name, schema] of wire) {
    it(`the compiled guard agrees with Schema.is and the decoder: ${name}`, () => {
      const is = Schema.is(schema)
      const guard = SchemaGuard.is(schema)
      const passes = SchemaGuard.decodesToItself(schema)
      const decode = Schema.decodeUnknownEither(schema)
      FastCheck.assert(
        FastCheck.property(inputs(schema), (u) => guard(u) === is(u) && (!passes(u) || (is(u) && Either.isRight(decode(u))))),
        { numRuns: 300 }
      )
    })
  }
})

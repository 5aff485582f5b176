/**
 * Total decoders: `effect/Schema`'s decoders, except that they never throw.
 *
 * A few inputs make a schema decoder throw instead of failing: JSON text such as
 * `{"type": {"toString": false}}` parses to an object that cannot be turned into a
 * string, and the literal search of a union does exactly that with a discriminant. The
 * decoders here turn such a throw into a `ParseError` naming the schema and what went
 * wrong, so untrusted input always meets a typed failure, never a defect.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { ParseOptions } from "effect/SchemaAST"

const describe = (error: unknown): string => {
  if (error instanceof Error) return `${error.name}: ${error.message}`
  return typeof error === "string" ? error : "a value that is not an Error"
}

const thrown = (schema: Schema.Schema.AnyNoContext, input: unknown, error: unknown): ParseResult.ParseError =>
  new ParseResult.ParseError({
    issue: new ParseResult.Type(schema.ast, input, `the decoder could not read this value (${describe(error)})`)
  })

/**
 * `Schema.decodeUnknownEither`, total: a decoder that throws gives a `ParseError`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeUnknownEither = <A, I>(schema: Schema.Schema<A, I, never>, options?: ParseOptions) => {
  const decode = Schema.decodeUnknownEither(schema, options)
  return (input: unknown, overrideOptions?: ParseOptions): Either.Either<A, ParseResult.ParseError> => {
    try {
      return decode(input, overrideOptions)
    } catch (error) {
      return Either.left(thrown(schema, input, error))
    }
  }
}

/**
 * `Schema.decodeUnknownOption`, total: a decoder that throws gives `None`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeUnknownOption = <A, I>(schema: Schema.Schema<A, I, never>, options?: ParseOptions) => {
  const decode = decodeUnknownEither(schema, options)
  return (input: unknown, overrideOptions?: ParseOptions): Option.Option<A> =>
    Either.getRight(decode(input, overrideOptions))
}

/**
 * `Schema.decodeUnknown`, total: a decoder that throws fails with a `ParseError`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeUnknown = <A, I>(schema: Schema.Schema<A, I, never>, options?: ParseOptions) => {
  const decode = decodeUnknownEither(schema, options)
  return (input: unknown, overrideOptions?: ParseOptions): Effect.Effect<A, ParseResult.ParseError> =>
    Effect.suspend(() => decode(input, overrideOptions))
}

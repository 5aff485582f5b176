/**
 * Total decoders: `effect/Schema`'s decoders, except that they never throw.
 *
 * A few inputs make a schema decoder throw instead of failing: an object whose
 * property cannot be read (a getter that throws), and a declaration
 * or filter whose predicate throws on a value it did not expect. The
 * decoders here turn such a throw into a `SchemaError` naming what went wrong, so
 * untrusted input always meets a typed failure, never a defect.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { ParseOptions } from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"

const describe = (error: unknown): string => {
  if (error instanceof Error) return `${error.name}: ${error.message}`
  return typeof error === "string" ? error : "a value that is not an Error"
}

const thrown = (error: unknown): Schema.SchemaError =>
  new Schema.SchemaError(
    new SchemaIssue.InvalidValue({ message: `the decoder could not read this value (${describe(error)})` })
  )

/**
 * `Schema.decodeUnknownResult`, total: a decoder that throws gives a `SchemaError`.
 * (Named `decodeUnknownEither` before 0.2.0, when it gave an `Either`.)
 *
 * @since 0.2.0
 * @category decoding
 */
export const decodeUnknownResult = <A, I>(schema: Schema.Codec<A, I, never, unknown>, options?: ParseOptions) => {
  const decode = Schema.decodeUnknownResult(schema, options)
  return (input: unknown, overrideOptions?: ParseOptions): Result.Result<A, Schema.SchemaError> => {
    try {
      return decode(input, overrideOptions)
    } catch (error) {
      return Result.fail(thrown(error))
    }
  }
}

/**
 * `Schema.decodeUnknownOption`, total: a decoder that throws gives `None`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeUnknownOption = <A, I>(schema: Schema.Codec<A, I, never, unknown>, options?: ParseOptions) => {
  const decode = decodeUnknownResult(schema, options)
  return (input: unknown, overrideOptions?: ParseOptions): Option.Option<A> =>
    Result.getSuccess(decode(input, overrideOptions))
}

/**
 * `Schema.decodeUnknownEffect`, total: a decoder that throws fails with a
 * `SchemaError`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeUnknown = <A, I>(schema: Schema.Codec<A, I, never, unknown>, options?: ParseOptions) => {
  const decode = decodeUnknownResult(schema, options)
  return (input: unknown, overrideOptions?: ParseOptions): Effect.Effect<A, Schema.SchemaError> =>
    Effect.suspend(() => Effect.fromResult(decode(input, overrideOptions)))
}

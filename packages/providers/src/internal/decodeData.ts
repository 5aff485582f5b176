import { SchemaGuard } from "@sluice/core"
import type { Sse } from "@sluice/core"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { WireDecodeError } from "../WireDecodeError.js"

const excerpt = (data: string): string => (data.length > 120 ? `${data.slice(0, 120)}…` : data)

/**
 * A wire schema's decoder: a value the compiled guard proves decodes to itself is
 * used as it is (validated, not copied); anything else goes through the schema's
 * decoder, which decodes it or says what is wrong. A decoder that throws (a value no
 * JSON text produces can make it) gives an issue too, never an exception.
 *
 * @internal
 */
export const wireDecoder = <A, I>(schema: Schema.Schema<A, I>) => {
  const passes = SchemaGuard.decodesToItself(schema)
  const decode = Schema.decodeUnknownEither(schema, { errors: "first" })
  return (value: unknown): Either.Either<A, string> => {
    if (passes(value)) return Either.right(value)
    try {
      return Either.mapLeft(decode(value), (issue) => ParseResult.TreeFormatter.formatErrorSync(issue))
    } catch (error) {
      return Either.left(`the decoder failed on it (${String(error)})`)
    }
  }
}

/**
 * A decoder of one SSE event's `data` as JSON of the given wire schema. Failures name
 * the provider, the line, and what was wrong.
 *
 * @internal
 */
export const decodeData = <A, I>(provider: string, schema: Schema.Schema<A, I>) => {
  const decode = wireDecoder(schema)
  return (event: Sse.SseEvent): Either.Either<A, WireDecodeError> => {
    let json: unknown
    try {
      json = JSON.parse(event.data)
    } catch (error) {
      return Either.left(
        new WireDecodeError({
          provider,
          line: event.line,
          reason: "InvalidJson",
          message: `${provider} event at line ${event.line} is not JSON (${String(error)}): ${excerpt(event.data)}`
        })
      )
    }
    return Either.mapLeft(
      decode(json),
      (issue) =>
        new WireDecodeError({
          provider,
          line: event.line,
          reason: "UnexpectedShape",
          message: `${provider} event at line ${event.line} has an unexpected shape: ${issue}`
        })
    )
  }
}

/**
 * Decodes a whole non-streaming response body with the given wire schema.
 *
 * @internal
 */
export const decodeBody = <A, I>(provider: string, schema: Schema.Schema<A, I>) => {
  const decode = wireDecoder(schema)
  return (body: unknown): Either.Either<A, WireDecodeError> =>
    Either.mapLeft(
      decode(body),
      (issue) =>
        new WireDecodeError({
          provider,
          line: 0,
          reason: "UnexpectedShape",
          message: `${provider} response has an unexpected shape: ${issue}`
        })
    )
}

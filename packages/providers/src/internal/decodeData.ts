import { SchemaDecode, SchemaGuard } from "@sluice/core"
import type { Sse } from "@sluice/core"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { WireDecodeError } from "../WireDecodeError.js"

const excerpt = (data: string): string => (data.length > 120 ? `${data.slice(0, 120)}…` : data)

/** The schema's decoder, with its issue as text; a decoder that throws gives an issue too. */
const schemaDecoder = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = SchemaDecode.decodeUnknownEither(schema, { errors: "first" })
  return (value: unknown): Either.Either<A, string> =>
    Either.mapLeft(decode(value), (issue) => ParseResult.TreeFormatter.formatErrorSync(issue))
}

/**
 * A wire schema's decoder: a value the compiled guard proves decodes to itself is
 * used as it is (validated, not copied); anything else goes through the schema's
 * decoder, which decodes it or says what is wrong. A decoder that throws (JSON such as
 * `{"type": {"toString": false}}` can make it) gives an issue too, never an exception.
 *
 * @internal
 */
export const wireDecoder = <A, I>(schema: Schema.Schema<A, I>) => {
  const passes = SchemaGuard.decodesToItself(schema)
  const decode = schemaDecoder(schema)
  return (value: unknown): Either.Either<A, string> => (passes(value) ? Either.right(value) : decode(value))
}

/**
 * A decoder of one SSE event's `data` as JSON of the given wire schema, for the hot
 * path: the decoded value, or the failure (no JSON text parses to a `WireDecodeError`,
 * so `instanceof` tells them apart, and a valid event allocates nothing more than its
 * JSON). Failures name the provider, the line, and what was wrong.
 *
 * @internal
 */
export const parseData = <A, I>(provider: string, schema: Schema.Schema<A, I>) => {
  const passes = SchemaGuard.decodesToItself(schema)
  const decode = schemaDecoder(schema)
  return (event: Sse.SseEvent): A | WireDecodeError => {
    let json: unknown
    try {
      json = JSON.parse(event.data)
    } catch (error) {
      return new WireDecodeError({
        provider,
        line: event.line,
        reason: "InvalidJson",
        message: `${provider} event at line ${event.line} is not JSON (${String(error)}): ${excerpt(event.data)}`
      })
    }
    if (passes(json)) return json
    const decoded = decode(json)
    if (Either.isRight(decoded)) return decoded.right
    return new WireDecodeError({
      provider,
      line: event.line,
      reason: "UnexpectedShape",
      message: `${provider} event at line ${event.line} has an unexpected shape: ${decoded.left}`
    })
  }
}

/**
 * `parseData` as an `Either`.
 *
 * @internal
 */
export const decodeData = <A, I>(provider: string, schema: Schema.Schema<A, I>) => {
  const parse = parseData(provider, schema)
  return (event: Sse.SseEvent): Either.Either<A, WireDecodeError> => {
    const result = parse(event)
    return result instanceof WireDecodeError ? Either.left(result) : Either.right(result)
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

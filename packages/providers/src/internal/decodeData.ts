import type { Sse } from "@sluice/core"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { WireDecodeError } from "../WireDecodeError.js"

const excerpt = (data: string): string => (data.length > 120 ? `${data.slice(0, 120)}…` : data)

/**
 * A decoder of one SSE event's `data` as JSON of the given wire schema. Failures name
 * the provider, the line, and what was wrong.
 *
 * @internal
 */
export const decodeData = <A, I>(provider: string, schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "first" })
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
          message: `${provider} event at line ${event.line} has an unexpected shape: ${ParseResult.TreeFormatter.formatErrorSync(issue)}`
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
  const decode = Schema.decodeUnknownEither(schema, { errors: "first" })
  return (body: unknown): Either.Either<A, WireDecodeError> =>
    Either.mapLeft(
      decode(body),
      (issue) =>
        new WireDecodeError({
          provider,
          line: 0,
          reason: "UnexpectedShape",
          message: `${provider} response has an unexpected shape: ${ParseResult.TreeFormatter.formatErrorSync(issue)}`
        })
    )
}

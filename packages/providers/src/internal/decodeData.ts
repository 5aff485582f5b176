import { SchemaGuard } from "@sluice/core"
import type { Sse } from "@sluice/core"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import { WireDecodeError } from "../WireDecodeError.js"

const excerpt = (data: string): string => (data.length > 120 ? `${data.slice(0, 120)}…` : data)

const describe = (error: unknown): string => {
  if (error instanceof Error) return `${error.name}: ${error.message}`
  return typeof error === "string" ? error : "a value that is not an Error"
}

const formatIssue = SchemaIssue.makeFormatterDefault()

/**
 * The schema's decoder, with its issue as text (what was expected, what arrived and
 * where: the issues report their input, as Effect 3's messages did). A decoder, or an
 * issue formatter, that throws gives an issue too.
 */
const makeSchemaDecoder = <A>(schema: Schema.ConstraintDecoder<A>) => {
  const decode = SchemaParser.decodeUnknownResult(schema, { errors: "first", reportInput: true })
  return (value: unknown): Result.Result<A, string> => {
    try {
      return Result.mapError(decode(value), formatIssue)
    } catch (error) {
      return Result.fail(`the decoder could not read this value (${describe(error)})`)
    }
  }
}

// One decoder per schema, made on first use and shared by every turn that decodes it.
const schemaDecoders = new WeakMap<object, (value: unknown) => Result.Result<unknown, string>>()
const schemaDecoder = <A>(schema: Schema.ConstraintDecoder<A>): (value: unknown) => Result.Result<A, string> => {
  let decode = schemaDecoders.get(schema)
  if (decode === undefined) {
    decode = makeSchemaDecoder(schema)
    schemaDecoders.set(schema, decode)
  }
  return decode as (value: unknown) => Result.Result<A, string>
}

/**
 * A wire schema's decoder: a value the compiled guard proves decodes to itself is
 * used as it is (validated, not copied); anything else goes through the schema's
 * decoder, which decodes it or says what is wrong. A decoder that throws (JSON such as
 * `{"type": {"toString": false}}` can make it) gives an issue too, never an exception.
 *
 * @internal
 */
export const wireDecoder = <A>(schema: Schema.ConstraintDecoder<A>) => {
  const passes: (u: unknown) => u is A = SchemaGuard.decodesToItself(schema)
  const decode = schemaDecoder(schema)
  return (value: unknown): Result.Result<A, string> => (passes(value) ? Result.succeed(value) : decode(value))
}

/**
 * A decoder of one SSE event's `data` as JSON of the given wire schema, for the hot
 * path: the decoded value, or the failure (no JSON text parses to a `WireDecodeError`,
 * so `instanceof` tells them apart, and a valid event allocates nothing more than its
 * JSON). Failures name the provider, the line, and what was wrong.
 *
 * @internal
 */
export const parseData = <A>(provider: string, schema: Schema.ConstraintDecoder<A>) => {
  const passes: (u: unknown) => u is A = SchemaGuard.decodesToItself(schema)
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
    if (Result.isSuccess(decoded)) return decoded.success
    return new WireDecodeError({
      provider,
      line: event.line,
      reason: "UnexpectedShape",
      message: `${provider} event at line ${event.line} has an unexpected shape: ${decoded.failure}`
    })
  }
}

/**
 * `parseData` as a `Result`.
 *
 * @internal
 */
export const decodeData = <A>(provider: string, schema: Schema.ConstraintDecoder<A>) => {
  const parse = parseData(provider, schema)
  return (event: Sse.SseEvent): Result.Result<A, WireDecodeError> => {
    const result = parse(event)
    return result instanceof WireDecodeError ? Result.fail(result) : Result.succeed(result)
  }
}

/**
 * Decodes a whole non-streaming response body with the given wire schema.
 *
 * @internal
 */
export const decodeBody = <A>(provider: string, schema: Schema.ConstraintDecoder<A>) => {
  const decode = wireDecoder(schema)
  return (body: unknown): Result.Result<A, WireDecodeError> =>
    Result.mapError(
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

import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import { WireDecodeError } from "../WireDecodeError.js"
import { wireDecoder } from "./decodeData.js"

/**
 * Whether an SSE event's `data` is the `[DONE]` sentinel with which OpenAI's Chat
 * Completions stream (and Responses-compatible servers such as OpenRouter's) end:
 * the end of the body, never an event to decode.
 *
 * @internal
 */
export const isDoneSentinel = (data: string): boolean => data === "[DONE]"

const excerpt = (data: string): string => (data.length > 120 ? `${data.slice(0, 120)}…` : data)

/**
 * Parses one SSE event's `data` as JSON, or names the provider and line when it is
 * not JSON. For wire formats that pick a schema after reading a discriminator.
 *
 * @internal
 */
export const parseJson = (provider: string, data: string, line: number): Result.Result<unknown, WireDecodeError> => {
  try {
    return Result.succeed(JSON.parse(data))
  } catch (error) {
    return Result.fail(
      new WireDecodeError({
        provider,
        line,
        reason: "InvalidJson",
        message: `${provider} event at line ${line} is not JSON (${String(error)}): ${excerpt(data)}`
      })
    )
  }
}

/**
 * A decoder of already parsed JSON with a wire schema; failures name the provider, the
 * line (`0` for a non-streaming body) and what the value was meant to be.
 *
 * @internal
 */
export const decodeValue = <A>(provider: string, schema: Schema.ConstraintDecoder<A>) => {
  const decode = wireDecoder(schema)
  return (value: unknown, line: number, what: string): Result.Result<A, WireDecodeError> =>
    Result.mapError(
      decode(value),
      (issue) =>
        new WireDecodeError({
          provider,
          line,
          reason: "UnexpectedShape",
          message: `${provider} ${what} ${
            line === 0 ? "in the response" : `at line ${line}`
          } has an unexpected shape: ${issue}`
        })
    )
}

/**
 * A wire error for a value of the right shape that breaks the provider's protocol
 * (for example a continuation of something that never started).
 *
 * @internal
 */
export const protocolError = (provider: string, line: number, message: string): WireDecodeError =>
  new WireDecodeError({
    provider,
    line,
    reason: "UnexpectedShape",
    message: `${provider} ${line === 0 ? "response" : `event at line ${line}`}: ${message}`
  })

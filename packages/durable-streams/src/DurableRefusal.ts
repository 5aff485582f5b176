/**
 * The one refusal of the Durable Streams protocol: a request the protocol's rules turn
 * down, with its HTTP status, a code, a message naming what was wrong, headers to send
 * with it, and (on the subscription routes) further fields of the error object. The
 * stream routes answer it as a plain-text body (the message); the subscription routes
 * (`__ds/...`) as `{"error": {"code", "message", ...details}}`.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Schema from "effect/Schema"

/**
 * A refused request.
 *
 * @since 0.3.0
 * @category errors
 */
export class DurableRefusal extends Schema.TaggedError<DurableRefusal>()("DurableRefusal", {
  status: Schema.Int,
  code: Schema.String,
  message: Schema.String,
  headers: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  details: Schema.optionalKey(Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Number])))
}) {}

/**
 * The code of a stream refusal, by its status (the stream routes send no code: their
 * body is the message alone).
 *
 * @since 0.3.0
 * @category constants
 */
export const codeOfStatus = (status: number): string => {
  switch (status) {
    case 400:
      return "INVALID_REQUEST"
    case 403:
      return "FORBIDDEN"
    case 404:
      return "NOT_FOUND"
    case 405:
      return "METHOD_NOT_ALLOWED"
    case 409:
      return "CONFLICT"
    case 410:
      return "GONE"
    case 413:
      return "PAYLOAD_TOO_LARGE"
    case 429:
      return "TOO_MANY_REQUESTS"
    case 501:
      return "NOT_IMPLEMENTED"
    case 503:
      return "UNAVAILABLE"
    default:
      return "INTERNAL"
  }
}

/**
 * A refusal of a stream request: its status, message and headers (the code follows
 * from the status).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (
  status: number,
  message: string,
  headers?: Readonly<Record<string, string>>
): DurableRefusal =>
  new DurableRefusal({
    status,
    code: codeOfStatus(status),
    message,
    ...(headers === undefined ? {} : { headers })
  })

/**
 * Fails with a refusal of a stream request.
 *
 * @since 0.3.0
 * @category constructors
 */
export const refuse = (
  status: number,
  message: string,
  headers?: Readonly<Record<string, string>>
): Effect.Effect<never, DurableRefusal> => Effect.fail(make(status, message, headers))

/**
 * The plain-text answer of a refusal (the stream routes).
 *
 * @since 0.3.0
 * @category rendering
 */
export const toText = (refusal: DurableRefusal): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(refusal.message, { status: refusal.status, headers: refusal.headers ?? {} })

/**
 * The JSON answer of a refusal (the subscription routes): `{"error": {"code",
 * "message", ...details}}`, never cached.
 *
 * @since 0.3.0
 * @category rendering
 */
export const toJson = (refusal: DurableRefusal): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.jsonUnsafe(
    { error: { code: refusal.code, message: refusal.message, ...refusal.details } },
    { status: refusal.status, headers: { "cache-control": "no-store", ...refusal.headers } }
  )

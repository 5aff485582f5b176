/**
 * The errors of the HTTP API. Every error response has a JSON body
 * `{"error": {"code": "...", "message": "..."}}` and the status of its code.
 *
 * @since 0.1.0
 */
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Schema from "effect/Schema"

/**
 * The error codes, each with one status:
 *
 * | code | status |
 * |---|---|
 * | `invalid_turn_id`, `invalid_last_event_id`, `invalid_query`, `invalid_request`, `invalid_thread_id` | 400 |
 * | `unauthorized` | 401 |
 * | `forbidden` | 403 |
 * | `not_found`, `turn_not_found`, `thread_not_found` | 404 |
 * | `turn_finished`, `turn_running`, `turn_not_running`, `thread_exists` | 409 |
 * | `payload_too_large` | 413 |
 * | `too_many_streams`, `rate_limited` | 429 |
 * | `internal`, `invalid_entry` | 500 |
 * | `not_implemented` | 501 |
 * | `redis_unavailable`, `provider_unavailable`, `at_capacity`, `thread_contended` | 503 |
 *
 * The thread codes are since 0.3.0.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ApiErrorCode = Schema.Literals([
  "invalid_turn_id",
  "invalid_last_event_id",
  "invalid_query",
  "invalid_request",
  "unauthorized",
  "forbidden",
  "not_found",
  "turn_not_found",
  "turn_finished",
  "payload_too_large",
  "too_many_streams",
  "internal",
  "invalid_entry",
  "not_implemented",
  "redis_unavailable",
  "provider_unavailable",
  "at_capacity",
  "invalid_thread_id",
  "thread_not_found",
  "turn_running",
  "turn_not_running",
  "rate_limited",
  "thread_contended",
  "thread_exists"
]).annotate({ identifier: "ApiErrorCode" })

/**
 * @since 0.1.0
 * @category models
 */
export type ApiErrorCode = typeof ApiErrorCode.Type

const statuses: Record<ApiErrorCode, number> = {
  invalid_turn_id: 400,
  invalid_last_event_id: 400,
  invalid_query: 400,
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  turn_not_found: 404,
  turn_finished: 409,
  payload_too_large: 413,
  too_many_streams: 429,
  internal: 500,
  invalid_entry: 500,
  not_implemented: 501,
  redis_unavailable: 503,
  provider_unavailable: 503,
  at_capacity: 503,
  invalid_thread_id: 400,
  thread_not_found: 404,
  turn_running: 409,
  turn_not_running: 409,
  rate_limited: 429,
  thread_contended: 503,
  thread_exists: 409
}

/**
 * The HTTP status of an error code.
 *
 * @since 0.1.0
 * @category accessors
 */
export const statusOf = (code: ApiErrorCode): number => statuses[code]

/**
 * The JSON body of every error response: `field` names the request's field that was
 * wrong (`message.parts[0].text`, `model`), `turnId` the turn an error is about (the
 * running turn of a 409 `turn_running`), when they apply (since 0.3.0).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ApiErrorBody = Schema.Struct({
  error: Schema.Struct({
    code: ApiErrorCode,
    message: Schema.String,
    field: Schema.optionalKey(Schema.String),
    turnId: Schema.optionalKey(Schema.String)
  })
}).annotate({ identifier: "ApiErrorBody" })

/**
 * @since 0.1.0
 * @category models
 */
export type ApiErrorBody = typeof ApiErrorBody.Type

/**
 * A request the API answers with an error.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApiError extends Schema.TaggedError<ApiError>()("ApiError", {
  code: ApiErrorCode,
  message: Schema.String,
  /** The request's field that was wrong. Since 0.3.0. */
  field: Schema.optionalKey(Schema.String),
  /** The turn the error is about. Since 0.3.0. */
  turnId: Schema.optionalKey(Schema.String),
  /** Sent as `Retry-After` (seconds). Since 0.3.0. */
  retryAfterSeconds: Schema.optionalKey(Schema.Int)
}) {
  /**
   * The HTTP status of the error's code.
   *
   * @since 0.1.0
   */
  get status(): number {
    return statusOf(this.code)
  }
}

const headersOf = (code: ApiErrorCode, retryAfterSeconds: number | undefined): Record<string, string> => {
  if (retryAfterSeconds !== undefined) return { "cache-control": "no-store", "retry-after": String(retryAfterSeconds) }
  switch (code) {
    case "unauthorized":
      return { "cache-control": "no-store", "www-authenticate": "Bearer realm=\"sluice\"" }
    case "at_capacity":
      return { "cache-control": "no-store", "retry-after": "1" }
    default:
      return { "cache-control": "no-store" }
  }
}

/**
 * The response for an error: its status, the JSON body, `Cache-Control: no-store`,
 * `WWW-Authenticate: Bearer` on a 401, and `Retry-After`: the error's
 * `retryAfterSeconds` (a thread token's turns a minute), else 1 on `at_capacity` (the
 * process runs as many turns as it may: a place may be free in a second, or another
 * process behind the same address may take the turn).
 *
 * @since 0.1.0
 * @category conversions
 */
export const toResponse = (error: ApiError): HttpServerResponse.HttpServerResponse => {
  const body: ApiErrorBody = {
    error: {
      code: error.code,
      message: error.message,
      ...(error.field === undefined ? {} : { field: error.field }),
      ...(error.turnId === undefined ? {} : { turnId: error.turnId })
    }
  }
  return HttpServerResponse.jsonUnsafe(body, {
    status: error.status,
    headers: headersOf(error.code, error.retryAfterSeconds)
  })
}

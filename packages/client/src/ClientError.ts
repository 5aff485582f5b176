/**
 * The one error of the client: what failed, as a code, with the HTTP status when the
 * server answered.
 *
 * @since 0.1.0
 */
import * as RetryAfter from "@sluice/core/RetryAfter"

/**
 * What went wrong:
 *
 * - the API's own error codes (`unauthorized`, `forbidden`, `turn_not_found`,
 *   `turn_finished`, `invalid_turn_id`, `too_many_streams`, `redis_unavailable`,
 *   `at_capacity`, ...),
 *   taken from the body `{error: {code, message}}`;
 * - `http_error`: a non-2xx answer without such a body;
 * - `network`: the request or the stream failed below HTTP (offline, connection cut);
 * - `unexpected_body`: a body or event that is not what the API sends;
 * - `stream_error`: the server ended a stream with a `stream_error` event;
 * - `gave_up`: reconnecting failed `maxAttempts` times in a row.
 *
 * @since 0.1.0
 * @category models
 */
export type ClientErrorCode = string

/**
 * A failed request or stream. `status` is the HTTP status when the server answered;
 * `retryable` says whether following the turn goes on after it (network failures,
 * 5xx, 408, 429 and `stream_error` are retried; the rest end the follow).
 *
 * @since 0.1.0
 * @category errors
 */
export class ClientError extends Error {
  /**
   * @since 0.1.0
   */
  override readonly name = "SluiceClientError"
  /**
   * @since 0.1.0
   */
  readonly code: ClientErrorCode
  /**
   * @since 0.1.0
   */
  readonly status: number | undefined
  /**
   * How long the server asked to wait before trying again (its `Retry-After`, in
   * milliseconds), when it said.
   *
   * @since 0.3.0
   */
  readonly retryAfterMs: number | undefined
  /**
   * The turn the answer names, when it names one: the running turn of a thread that
   * refused another (409 `turn_running`), to follow or cancel.
   *
   * @since 0.3.0
   */
  readonly turnId: string | undefined
  constructor(code: ClientErrorCode, message: string, status?: number, retryAfterMs?: number, turnId?: string) {
    super(message)
    this.code = code
    this.status = status
    this.retryAfterMs = retryAfterMs
    this.turnId = turnId
  }

  /**
   * Whether following a turn goes on after this error.
   *
   * @since 0.1.0
   */
  get retryable(): boolean {
    if (this.code === "network" || this.code === "stream_error") return true
    return this.status !== undefined && (this.status >= 500 || this.status === 408 || this.status === 429)
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/**
 * A `Retry-After` value in milliseconds (`RetryAfter.toMillis` of `@sluice/core`):
 * delay-seconds, or an HTTP date from `now` (never below 0); undefined when absent or
 * neither.
 *
 * @since 0.3.0
 * @category parsing
 */
export const retryAfterMs = (header: string | null | undefined, now: number = Date.now()): number | undefined =>
  header === null || header === undefined ? undefined : RetryAfter.toMillis(header, now)

/**
 * The `ClientError` of a non-2xx answer, its parsed body (undefined when it was not
 * JSON; its `error.turnId`, when it has one, kept) and its `Retry-After` header.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromResponse = (status: number, body: unknown, retryAfter?: string | null): ClientError => {
  const error = isObject(body) ? body["error"] : undefined
  const wait = retryAfterMs(retryAfter)
  if (isObject(error) && typeof error["code"] === "string" && typeof error["message"] === "string") {
    const turnId = typeof error["turnId"] === "string" ? error["turnId"] : undefined
    return new ClientError(error["code"], error["message"], status, wait, turnId)
  }
  return new ClientError("http_error", `the server answered ${status}`, status, wait)
}

/**
 * The `ClientError` of anything thrown by `fetch` or a body read.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromThrown = (thrown: unknown): ClientError =>
  thrown instanceof ClientError
    ? thrown
    : new ClientError(
      "network",
      `the server cannot be reached: ${thrown instanceof Error ? thrown.message : String(thrown)}`
    )

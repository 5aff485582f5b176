/**
 * The one error shape of every provider (docs/errors.md): a classified `type`, whether a
 * retry may help, the provider's code and message, and the HTTP status and
 * `Retry-After` when there were any.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * `api_error | rate_limit | content_blocked | timeout | provider_overloaded`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ProviderErrorType = Schema.Literals([
  "api_error",
  "rate_limit",
  "content_blocked",
  "timeout",
  "provider_overloaded"
]).annotate({ identifier: "ProviderErrorType" })

/**
 * @since 0.1.0
 * @category models
 */
export type ProviderErrorType = typeof ProviderErrorType.Type

/**
 * A classified provider failure. `raw` keeps the provider's own error for logs; it is
 * never part of what Sluice writes for clients (see `StreamEvent.ErrorObject`).
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderError extends Schema.TaggedError<ProviderError>()("ProviderError", {
  type: ProviderErrorType,
  retryable: Schema.Boolean,
  code: Schema.String,
  message: Schema.String,
  status: Schema.optionalKey(Schema.Int),
  retryAfterMs: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  raw: Schema.optionalKey(Schema.Unknown)
}) {}

// ---------------------------------------------------------------------------------
// classification: the one place that turns a provider's status and body into a type
// ---------------------------------------------------------------------------------

/**
 * The `code` of an error that says the request does not fit the model's context window
 * (OpenAI `context_length_exceeded`, Anthropic "prompt is too long", Gemini "input token
 * count ... exceeds the maximum"): an `api_error` that is never retryable. Callers
 * match this code to shorten or compact the conversation before trying again.
 *
 * @since 0.1.0
 * @category codes
 */
export const contextLengthExceeded = "context_length_exceeded"

/**
 * The `code` of an exhausted quota or credit balance (OpenAI `insufficient_quota`): a
 * `rate_limit` that is never retryable, so a retry loop does not rotate keys and hammer
 * a quota that will not come back within the turn.
 *
 * @since 0.1.0
 * @category codes
 */
export const insufficientQuota = "insufficient_quota"

/**
 * What a provider said about a failure, in any of its forms: the HTTP status (or a
 * numeric error code), the provider's string code (OpenAI `code`, Gemini `status`,
 * Anthropic error `type`), OpenAI's error `type`, the message, and the raw error.
 *
 * @since 0.1.0
 * @category classification
 */
export interface ErrorSignals {
  readonly status?: number | undefined
  readonly code?: string | undefined
  readonly type?: string | undefined
  readonly message?: string | undefined
  readonly retryAfterMs?: number | undefined
  /**
   * A retryability the transport already decided (the AI SDK's `isRetryable`). It wins
   * over the rules below except for context-window, quota and content-policy errors,
   * which are never retried whatever the transport says.
   */
  readonly retryable?: boolean | undefined
  readonly raw?: unknown
}

const contextPattern =
  /context[_ ]length|context window|maximum context|prompt is too long|exceed(s|ed)? (the )?context limit|exceeds the maximum number of tokens|input token count .* exceeds|too many (input )?tokens/i
const contentPattern = /content_policy|content_filter|contentfilter|safety|moderation/
const overloadPattern = /overloaded|slow_down|unavailable|capacity/
const ratePattern = /rate_limit|ratelimit|resource_exhausted|too_many_requests/
const timeoutPattern = /timeout|timed_out|deadline_exceeded/
const serverPattern = /^(api_error|server_error|internal|internal_error|internal_server_error|aborted)$/

/**
 * Classifies a provider failure from its status and its body together, for every
 * provider and every place an error arrives (an HTTP error before the stream, an error
 * inside a 200 stream, an AI SDK error part). The first rule that matches wins:
 *
 * | rule | type | retryable | code |
 * |---|---|---|---|
 * | context window exceeded (code or message) | `api_error` | no | `context_length_exceeded` |
 * | `insufficient_quota` | `rate_limit` | no | `insufficient_quota` |
 * | content policy (`content_policy_violation`, `content_filter`, safety) | `content_blocked` | no | provider's |
 * | overloaded (`overloaded_error`, `server_is_overloaded`, `slow_down`, `UNAVAILABLE`, 503, 529) | `provider_overloaded` | yes | provider's |
 * | rate limited (`rate_limit*`, `RESOURCE_EXHAUSTED`, 429) | `rate_limit` | yes | provider's |
 * | timeout (`timeout*`, `DEADLINE_EXCEEDED`, 408, 504) | `timeout` | yes | provider's |
 * | server error (`api_error`, `server_error`, `INTERNAL`, `ABORTED`, other 5xx) | `api_error` | yes | provider's |
 * | anything else | `api_error` | no | provider's |
 *
 * The code is the provider's string code, else its error type, else the status, else
 * `error`. A `retryable` in the signals overrides the table's, except in its first three
 * rows.
 *
 * @since 0.1.0
 * @category classification
 */
export const classify = (signals: ErrorSignals): ProviderError => {
  const status = signals.status !== undefined && Number.isInteger(signals.status) ? signals.status : undefined
  const words = `${signals.code ?? ""} ${signals.type ?? ""}`.toLowerCase()
  const message = signals.message ?? signals.code ?? signals.type ??
    (status === undefined ? "provider error" : `HTTP ${status}`)
  const providerCode = signals.code ?? signals.type ?? (status === undefined ? "error" : String(status))
  // `settled`: the body decided, whatever the transport says about retrying
  const make = (type: ProviderErrorType, retryable: boolean, code: string = providerCode, settled = false) =>
    new ProviderError({
      type,
      retryable: settled ? retryable : (signals.retryable ?? retryable),
      code,
      message,
      ...(status === undefined ? {} : { status }),
      ...(signals.retryAfterMs === undefined ? {} : { retryAfterMs: signals.retryAfterMs }),
      ...(signals.raw === undefined ? {} : { raw: signals.raw })
    })
  const serverSide = status !== undefined && status >= 500
  const mayBeContext = !serverSide && status !== 429
  if (words.includes(contextLengthExceeded) || (mayBeContext && contextPattern.test(signals.message ?? ""))) {
    return make("api_error", false, contextLengthExceeded, true)
  }
  if (words.includes(insufficientQuota)) return make("rate_limit", false, insufficientQuota, true)
  if (contentPattern.test(words)) return make("content_blocked", false, providerCode, true)
  if (overloadPattern.test(words) || status === 503 || status === 529) return make("provider_overloaded", true)
  if (ratePattern.test(words) || status === 429) return make("rate_limit", true)
  if (timeoutPattern.test(words) || status === 408 || status === 504) return make("timeout", true)
  if (words.split(" ").some((word) => serverPattern.test(word)) || serverSide) return make("api_error", true)
  return make("api_error", false)
}

const optional = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(schema)

const ErrorDetails = Schema.Struct({
  message: optional(Schema.NullOr(Schema.String)),
  type: optional(Schema.NullOr(Schema.String)),
  code: optional(Schema.NullOr(Schema.Union([Schema.String, Schema.Number]))),
  status: optional(Schema.String)
})

/**
 * The error bodies the providers answer with: OpenAI `{"error": {message, type, code}}`,
 * Anthropic `{"type": "error", "error": {type, message}}`, Gemini `{"error": {code,
 * message, status}}` or an array of one, and the bare inner error object (what older AI
 * SDK providers put in an error part).
 */
const ErrorBody = Schema.Union([
  Schema.Struct({ error: ErrorDetails }),
  Schema.TupleWithRest(Schema.Tuple([Schema.Struct({ error: ErrorDetails })]), [Schema.Unknown]),
  ErrorDetails
])

const decodeErrorBody = Schema.decodeUnknownOption(ErrorBody)

/**
 * The signals in a provider's error body (already parsed JSON): the string `code` (or
 * Gemini's `status`) as code, OpenAI's or Anthropic's `type` as type (Anthropic's type is
 * its code), a numeric `code` as status, and the message. `undefined` for a value that
 * is not an error body or says nothing.
 *
 * @since 0.1.0
 * @category classification
 */
export const signalsOfBody = (body: unknown): ErrorSignals | undefined => {
  const decoded = decodeErrorBody(body)
  if (decoded._tag === "None") return undefined
  const value = decoded.value
  const error = Array.isArray(value) ? value[0].error : "error" in value ? value.error : value
  const code = typeof error.code === "string" ? error.code : error.status
  const status = typeof error.code === "number" && Number.isInteger(error.code) ? error.code : undefined
  const type = error.type ?? undefined
  const message = error.message ?? undefined
  if (code === undefined && type === undefined && message === undefined) return undefined
  return {
    ...(code === undefined ? {} : { code }),
    ...(type === undefined ? {} : { type }),
    ...(message === undefined ? {} : { message }),
    ...(status === undefined ? {} : { status })
  }
}

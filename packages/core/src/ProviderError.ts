/**
 * The one error shape of every provider (seed 000): a classified `type`, whether a
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
export const ProviderErrorType = Schema.Literal(
  "api_error",
  "rate_limit",
  "content_blocked",
  "timeout",
  "provider_overloaded"
).annotations({ identifier: "ProviderErrorType" })

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
  status: Schema.optionalWith(Schema.Int, { exact: true }),
  retryAfterMs: Schema.optionalWith(Schema.Int.pipe(Schema.nonNegative()), { exact: true }),
  raw: Schema.optionalWith(Schema.Unknown, { exact: true })
}) {}

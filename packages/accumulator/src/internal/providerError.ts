import type { StreamEvent } from "@sluice/core"
import { ProviderError } from "@sluice/core"

/**
 * The `ProviderError` an error event carries. Events never carry the raw cause, so the
 * result has none.
 *
 * @internal
 */
export const fromErrorObject = (error: StreamEvent.ErrorObject): ProviderError.ProviderError =>
  new ProviderError.ProviderError({
    type: error.type ?? "api_error",
    retryable: error.retryable ?? false,
    code: error.code,
    message: error.message,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retry_after_ms === undefined ? {} : { retryAfterMs: error.retry_after_ms })
  })

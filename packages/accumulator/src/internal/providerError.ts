import type { StreamEvent } from "@sluice/core"
import { ProviderError } from "@sluice/core"

/**
 * The `ProviderError` an error event carries, with the provider's own error as `raw`
 * when the event has one (an error that arrived inside the stream).
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
    ...(error.retry_after_ms === undefined ? {} : { retryAfterMs: error.retry_after_ms }),
    ...(error.raw === undefined ? {} : { raw: error.raw })
  })

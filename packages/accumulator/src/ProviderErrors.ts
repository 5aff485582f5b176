/**
 * The `ProviderError` of an error event: one rule, shared by the views that hand a
 * turn's errors on (`IContent` here, `ProcessedChunk` in `@sluice/views`; docs/views.md).
 *
 * @since 0.3.0
 */
import type { StreamEvent } from "@sluice/core"
import { ProviderError } from "@sluice/core"

/**
 * The `ProviderError` an error event carries, with the provider's own error as `raw`
 * when the event has one (an error that arrived inside the stream). A missing `type` is
 * `api_error`, a missing `retryable` is `false`.
 *
 * @since 0.3.0
 * @category constructors
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

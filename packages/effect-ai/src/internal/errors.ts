/**
 * Sluice's errors as `effect/ai` `AiError`s, each with the reason that matches what
 * Sluice classified (docs/errors.md): the reason decides `isRetryable` in `effect/ai`,
 * so a reason is picked whose retryability is Sluice's.
 *
 * @internal
 */
import type { StreamEvent } from "@sluice/core"
import type { ProviderClient } from "@sluice/providers"
import * as AiError from "effect/ai/AiError"
import * as Duration from "effect/Duration"

const module = "SluiceLanguageModel"

/**
 * The `AiError` reason for an error a Sluice turn reported.
 *
 * @internal
 */
export const reasonOf = (error: StreamEvent.ErrorObject, url: string): AiError.AiErrorReason => {
  const description = `${error.code}: ${error.message}`
  const http = error.status === undefined ? undefined : { response: { status: error.status, headers: {} } }
  const withHttp = http === undefined ? {} : { http }
  if (error.code === "insufficient_quota") return new AiError.QuotaExhaustedError({ ...withHttp })
  switch (error.type) {
    case "rate_limit":
      return error.retryable === false
        ? new AiError.QuotaExhaustedError({ ...withHttp })
        : new AiError.RateLimitError({
          ...(error.retry_after_ms === undefined ? {} : { retryAfter: Duration.millis(error.retry_after_ms) }),
          ...withHttp
        })
    case "content_blocked":
      return new AiError.ContentPolicyError({ description, ...withHttp })
    case "provider_overloaded":
      return new AiError.InternalProviderError({ description, ...withHttp })
    case "timeout":
      return new AiError.NetworkError({ reason: "TransportError", method: "POST", url, description })
    default:
      break
  }
  if (error.status === 401) return new AiError.AuthenticationError({ kind: "InvalidKey", description, ...withHttp })
  if (error.status === 403) {
    return new AiError.AuthenticationError({ kind: "InsufficientPermissions", description, ...withHttp })
  }
  if (error.retryable === true) {
    return error.status !== undefined && error.status >= 500
      ? new AiError.InternalProviderError({ description, ...withHttp })
      : new AiError.NetworkError({ reason: "TransportError", method: "POST", url, description })
  }
  if (error.code === "context_length_exceeded" || (error.status !== undefined && error.status < 500)) {
    return new AiError.InvalidRequestError({ description, ...withHttp })
  }
  return new AiError.UnknownError({ description, ...withHttp })
}

/**
 * An `AiError` for an error a Sluice turn reported.
 *
 * @internal
 */
export const aiErrorOf = (error: StreamEvent.ErrorObject, url: string, method = "streamText"): AiError.AiError =>
  AiError.make({ module, method, reason: reasonOf(error, url) })

/**
 * An `AiError` for what the provider client's stream fails with: a request that broke
 * a rule of `LlmRequest` (the field named), or bytes that are not the wire format.
 *
 * @internal
 */
export const aiErrorOfStream = (error: ProviderClient.StreamError, method: string): AiError.AiError =>
  AiError.make({
    module,
    method,
    reason: error._tag === "LlmRequestError"
      ? new AiError.InvalidRequestError({ parameter: error.field, description: error.message })
      : new AiError.InvalidResponseError({ description: error.message })
  })

/**
 * An `AiError` for a prompt Sluice's request cannot carry.
 *
 * @internal
 */
export const invalidPrompt = (description: string, method: string): AiError.AiError =>
  AiError.make({ module, method, reason: new AiError.InvalidUserInputError({ description }) })

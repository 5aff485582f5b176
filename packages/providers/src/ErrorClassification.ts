/**
 * Classification of provider failures into `ProviderError` (seed 000): HTTP statuses,
 * `Retry-After` headers, and the shapes every provider shares. Each provider module
 * maps its own in-stream error codes with these helpers.
 *
 * @since 0.1.0
 */
import { ProviderError } from "@sluice/core"

type ProviderErrorType = ProviderError.ProviderErrorType

/**
 * Reads `retry-after-ms` (milliseconds) or `retry-after` (seconds, or an HTTP date
 * relative to `now`) from response headers. Header names are matched without regard
 * to case. Returns `undefined` when there is none or it cannot be read.
 *
 * @since 0.1.0
 * @category headers
 */
export const retryAfterMs = (
  headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>,
  now: number = Date.now()
): number | undefined => {
  const lookup = (name: string): string | undefined => {
    for (const key of Object.keys(headers)) {
      if (key.toLowerCase() === name) {
        const value = headers[key]
        return typeof value === "string" ? value : value?.[0]
      }
    }
    return undefined
  }
  const ms = lookup("retry-after-ms")
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.ceil(Number(ms))
  const value = lookup("retry-after")
  if (value === undefined) return undefined
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.ceil(Number(value) * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/**
 * The type and retryability of an HTTP status: 429 is `rate_limit`; 408 and 504 are
 * `timeout`; 503 and 529 are `provider_overloaded`; other 5xx are retryable
 * `api_error`s; everything else is a non-retryable `api_error`.
 *
 * @since 0.1.0
 * @category classification
 */
export const classifyStatus = (status: number): { readonly type: ProviderErrorType; readonly retryable: boolean } => {
  if (status === 429) return { type: "rate_limit", retryable: true }
  if (status === 408 || status === 504) return { type: "timeout", retryable: true }
  if (status === 503 || status === 529) return { type: "provider_overloaded", retryable: true }
  if (status >= 500) return { type: "api_error", retryable: true }
  return { type: "api_error", retryable: false }
}

/**
 * A `ProviderError` from an HTTP response that failed before streaming.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromHttpStatus = (
  status: number,
  details: {
    readonly code?: string | undefined
    readonly message?: string | undefined
    readonly headers?: Readonly<Record<string, string | ReadonlyArray<string> | undefined>> | undefined
    readonly raw?: unknown
    readonly now?: number | undefined
  } = {}
): ProviderError.ProviderError => {
  const { retryable, type } = classifyStatus(status)
  const retryAfter = details.headers === undefined ? undefined : retryAfterMs(details.headers, details.now)
  return new ProviderError.ProviderError({
    type,
    retryable,
    code: details.code ?? String(status),
    message: details.message ?? `HTTP ${status}`,
    status,
    ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
    ...(details.raw === undefined ? {} : { raw: details.raw })
  })
}

/**
 * A content block: the provider refused or filtered the content. Never retryable.
 *
 * @since 0.1.0
 * @category constructors
 */
export const contentBlocked = (code: string, message: string, raw?: unknown): ProviderError.ProviderError =>
  new ProviderError.ProviderError({
    type: "content_blocked",
    retryable: false,
    code,
    message,
    ...(raw === undefined ? {} : { raw })
  })

/**
 * A provider error of a given type; retryable unless it is `content_blocked` or a
 * non-retryable `api_error` (pass `retryable` to decide).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  type: ProviderErrorType,
  code: string,
  message: string,
  options: { readonly retryable?: boolean | undefined; readonly status?: number | undefined; readonly raw?: unknown } = {}
): ProviderError.ProviderError =>
  new ProviderError.ProviderError({
    type,
    retryable: options.retryable ?? (type !== "content_blocked" && type !== "api_error"),
    code,
    message,
    ...(options.status === undefined ? {} : { status: options.status }),
    ...(options.raw === undefined ? {} : { raw: options.raw })
  })

/**
 * The stream stopped without the provider's terminal event (a dropped connection or a
 * cut-off body). Retryable: a new request may complete.
 *
 * @since 0.1.0
 * @category constructors
 */
export const truncated = (provider: string): ProviderError.ProviderError =>
  make("api_error", "stream_truncated", `${provider} stream ended without its terminal event`, { retryable: true })

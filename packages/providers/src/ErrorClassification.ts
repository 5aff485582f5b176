/**
 * Provider failures as `ProviderError`s (docs/errors.md): `Retry-After` headers, HTTP error
 * responses and the constructors every provider shares. What a status and a body mean is
 * decided in one place, `ProviderError.classify` in `@sluice/core`, which each provider's
 * in-stream errors go through as well.
 *
 * @since 0.1.0
 */
import { Json, ProviderError, RetryAfter } from "@sluice/core"

type ProviderErrorType = ProviderError.ProviderErrorType

/**
 * Reads `retry-after-ms` (milliseconds) or `retry-after` (`RetryAfter.toMillis`: seconds,
 * or an HTTP date relative to `now`) from response headers. Header names are matched without regard
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
  return value === undefined ? undefined : RetryAfter.toMillis(value, now)
}

/**
 * A `ProviderError` from an HTTP response that failed before streaming, classified from
 * its status and its body together (`ProviderError.classify`): a 429 whose body says
 * `insufficient_quota` is not retryable, a 400 `content_policy_violation` is
 * `content_blocked`, a context-window error has code `context_length_exceeded`. A body
 * that is not one of the providers' error shapes gives its text (cut to 500 characters)
 * as the message.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromHttpStatus = (
  status: number,
  details: {
    readonly body?: string | undefined
    readonly headers?: Readonly<Record<string, string | ReadonlyArray<string> | undefined>> | undefined
    readonly raw?: unknown
    readonly now?: number | undefined
  } = {}
): ProviderError.ProviderError => {
  const text = details.body?.trim() ?? ""
  const json = text === "" ? undefined : Json.parseOrUndefined(text)
  const signals = json === undefined ? undefined : ProviderError.signalsOfBody(json)
  const retryAfter = details.headers === undefined ? undefined : retryAfterMs(details.headers, details.now)
  return ProviderError.classify({
    ...signals,
    ...(signals === undefined && text !== "" ? { message: text.length > 500 ? `${text.slice(0, 500)}...` : text } : {}),
    status,
    retryAfterMs: retryAfter,
    raw: details.raw
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
  options: { readonly retryable?: boolean | undefined; readonly status?: number | undefined; readonly raw?: unknown } =
    {}
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

/**
 * A provider's streaming HTTP request as the request modules encode it: the URL, the
 * headers (with the API key) and the JSON body. The live client sends it; tests read
 * it.
 *
 * @since 0.1.0
 */
import type { Json } from "@sluice/core"

/**
 * One encoded request. Always a `POST` of `body` as JSON.
 *
 * @since 0.1.0
 * @category models
 */
export interface WireRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: Json.JsonObject
}

/**
 * What encoding needs besides the request: the API key, and the base URL (the prefix
 * the provider's official SDK accepts as its base URL).
 *
 * @since 0.1.0
 * @category models
 */
export interface EncodeOptions {
  readonly apiKey: string
  readonly baseUrl: string
}

/**
 * `base` and `path` joined with exactly one slash.
 *
 * @since 0.1.0
 * @category constructors
 */
export const join = (base: string, path: string): string => `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`

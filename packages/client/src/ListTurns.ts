/**
 * Listing recent turns.
 *
 * @since 0.3.0
 */
import { apiUrl, readJson, type RequestOptions, send } from "./internal/http.js"
import { isTurnList, type TurnList } from "./Wire.js"

/**
 * How to list turns: the request options and `limit`, the most turns to list (the
 * server's default when not given).
 *
 * @since 0.3.0
 * @category models
 */
export interface ListTurnsOptions extends RequestOptions {
  readonly limit?: number | undefined
}

/**
 * `GET /v1/turns`: the recent turns, newest first. Rejects with a `ClientError`:
 * `unauthorized` (401), `unexpected_body` for a body that is not a list of turns,
 * `network`.
 *
 * @since 0.3.0
 * @category requests
 */
export const listTurns = async (baseUrl: string, options: ListTurnsOptions = {}): Promise<TurnList> => {
  const query: Record<string, string> = options.limit === undefined ? {} : { limit: String(options.limit) }
  const response = await send(apiUrl(baseUrl, "/v1/turns", query), options)
  return readJson(response, isTurnList, "a list of turns")
}

/**
 * Cancelling a running turn.
 *
 * @since 0.1.0
 */
import { type RequestOptions, send, turnUrl } from "./internal/http.js"

/**
 * `POST /v1/turns/:turnId/cancel`: resolves once the server has accepted the request
 * (202); the turn then ends `cancelled` through its feed like any ending. Rejects with a
 * `ClientError`: `turn_finished` (409) for a turn that has ended, `turn_not_found`
 * (404), `forbidden` (403) for a read-only page token, `unauthorized` (401), `network`.
 *
 * @since 0.1.0
 * @category requests
 */
export const cancel = async (baseUrl: string, turnId: string, options: RequestOptions = {}): Promise<void> => {
  const response = await send(turnUrl(baseUrl, turnId, "/cancel"), options, { method: "POST" })
  await response.body?.cancel()
}

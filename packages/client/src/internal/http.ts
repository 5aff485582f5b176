/**
 * Requests to the turn API: the address of a path, the headers that carry the token
 * and the resume point, JSON reads, and a streaming SSE read of a response body.
 *
 * @internal
 */
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { ClientError, fromResponse, fromThrown } from "../ClientError.js"

/**
 * What every request takes: the token (sent as `Authorization: Bearer`) or a signed
 * page token (`accessToken`, sent as `?access_token=`: the server takes page tokens
 * only in the query, and a bearer header, when there is one, wins), the `fetch` to
 * use, and the signal that stops it.
 *
 * @internal
 */
export interface RequestOptions {
  readonly token?: string | undefined
  readonly accessToken?: string | undefined
  readonly fetch?: typeof globalThis.fetch | undefined
  readonly signal?: AbortSignal | undefined
}

/**
 * The address of a turn's path: `<baseUrl>/v1/turns/<turnId><suffix>`.
 *
 * @internal
 */
export const turnUrl = (baseUrl: string, turnId: string, suffix = ""): string =>
  apiUrl(baseUrl, `/v1/turns/${encodeURIComponent(turnId)}${suffix}`)

/**
 * The address of an API path: `<baseUrl><path>`, with `query` when it has any entry.
 *
 * @internal
 */
export const apiUrl = (baseUrl: string, path: string, query: Record<string, string> = {}): string => {
  const search = new URLSearchParams(query).toString()
  return `${baseUrl.replace(/\/+$/, "")}${path}${search === "" ? "" : `?${search}`}`
}

// The address with the page token in its query, when the options carry one.
const withAccessToken = (url: string, accessToken: string | undefined): string =>
  accessToken === undefined
    ? url
    : `${url}${url.includes("?") ? "&" : "?"}${new URLSearchParams({ access_token: accessToken }).toString()}`

/**
 * Sends a request; the response when it is 2xx, else the `ClientError` the server's
 * body names.
 *
 * @internal
 */
export const send = async (
  url: string,
  options: RequestOptions,
  init: { readonly method?: string; readonly headers?: Record<string, string> } = {}
): Promise<Response> => {
  const headers: Record<string, string> = { ...init.headers }
  if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
  const doFetch = options.fetch ?? globalThis.fetch
  let response: Response
  try {
    response = await doFetch(withAccessToken(url, options.accessToken), {
      method: init.method ?? "GET",
      headers,
      credentials: "omit",
      ...(options.signal === undefined ? {} : { signal: options.signal })
    })
  } catch (thrown) {
    throw fromThrown(thrown)
  }
  if (!response.ok) {
    throw fromResponse(
      response.status,
      await response.json().catch(() => undefined),
      response.headers.get("retry-after")
    )
  }
  return response
}

/**
 * The JSON body of a 2xx response held to `check`, else `unexpected_body` naming
 * `what` it should have been.
 *
 * @internal
 */
export const readJson = async <A>(
  response: Response,
  check: (body: unknown) => body is A,
  what: string
): Promise<A> => {
  let body: unknown
  try {
    body = await response.json()
  } catch (thrown) {
    throw thrown instanceof Error && thrown.name === "AbortError"
      ? fromThrown(thrown)
      : new ClientError("unexpected_body", `the server's answer is not JSON (expected ${what})`, response.status)
  }
  if (!check(body)) {
    throw new ClientError("unexpected_body", `the server sent something that is not ${what}`, response.status)
  }
  return body
}

/**
 * Reads an SSE response body to its end, passing each event on as it arrives (comments
 * are skipped). Fails with `network` when the body breaks off.
 *
 * @internal
 */
export const readEvents = async (response: Response, onEvent: (event: EventSourceMessage) => void): Promise<void> => {
  const body = response.body
  if (body === null) throw new ClientError("unexpected_body", "the stream has no body", response.status)
  const parser = createParser({ onEvent })
  const reader = body.getReader()
  const decoder = new TextDecoder()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      parser.feed(decoder.decode(value, { stream: true }))
    }
    parser.feed(decoder.decode())
  } catch (thrown) {
    await reader.cancel().catch(() => undefined)
    throw fromThrown(thrown)
  }
}

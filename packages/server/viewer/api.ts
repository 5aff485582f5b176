/**
 * The page's access to the turn API: the page token (read once from the address's
 * fragment, then kept in `sessionStorage`), request URLs that carry it, and JSON reads.
 */
import { isSnapshot, isTurnList, type Snapshot, type TurnList } from "./wire.js"

const storageKey = "sluice.access_token"

/**
 * The page token: `#access_token=` in the address the server printed, moved to
 * `sessionStorage` and out of the address bar (and so out of the history and of
 * anything the address is copied into). Undefined on a server without tokens.
 */
export const takeAccessToken = (): string | undefined => {
  const fragment = new URLSearchParams(location.hash.slice(1))
  const given = fragment.get("access_token")
  if (given !== null) {
    sessionStorage.setItem(storageKey, given)
    fragment.delete("access_token")
    const rest = fragment.toString()
    history.replaceState(null, "", `${location.pathname}${location.search}${rest === "" ? "" : `#${rest}`}`)
    return given
  }
  return sessionStorage.getItem(storageKey) ?? undefined
}

/**
 * Whether the page may stop turns: its token is a page token of the `control` scope
 * (`v1.<expiresAt>.control.<mac>`; the scope is signed, not secret), or the server
 * needs no token (`insecure-local`). The server decides in the end: a refused request
 * is 403.
 */
export const mayCancel = (token: string | undefined): boolean =>
  token === undefined || token.split(".")[2] === "control"

/** A failed request: its status and the API's error code, when it sent one. */
export class ApiFailure extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message)
  }
}

/** The address of an API path with its query and the page token. */
export const apiUrl = (path: string, query: Record<string, string>, token: string | undefined): string => {
  const search = new URLSearchParams(query)
  if (token !== undefined) search.set("access_token", token)
  const text = search.toString()
  return text === "" ? path : `${path}?${text}`
}

const errorOf = (status: number, body: unknown): ApiFailure => {
  if (typeof body === "object" && body !== null && "error" in body) {
    const error: unknown = body.error
    if (typeof error === "object" && error !== null && "code" in error && "message" in error) {
      return new ApiFailure(status, String(error.code), String(error.message))
    }
  }
  return new ApiFailure(status, "http_error", `the server answered ${status}`)
}

const getJson = async <A>(url: string, check: (body: unknown) => body is A, what: string): Promise<A> => {
  const response = await fetch(url, { cache: "no-store", credentials: "omit" })
  const body: unknown = await response.json().catch(() => undefined)
  if (!response.ok) throw errorOf(response.status, body)
  if (!check(body)) {
    throw new ApiFailure(response.status, "unexpected_body", `the server sent something that is not ${what}`)
  }
  return body
}

/** `POST /v1/turns/:turnId/cancel`: resolves once the server has accepted the request (202). */
export const cancelTurn = async (token: string | undefined, turnId: string): Promise<void> => {
  const response = await fetch(apiUrl(`/v1/turns/${encodeURIComponent(turnId)}/cancel`, {}, token), {
    method: "POST",
    cache: "no-store",
    credentials: "omit"
  })
  if (!response.ok) throw errorOf(response.status, await response.json().catch(() => undefined))
}

/** `GET /v1/turns`. */
export const listTurns = (token: string | undefined, limit: number): Promise<TurnList> =>
  getJson(apiUrl("/v1/turns", { limit: String(limit) }, token), isTurnList, "a list of turns")

/** `GET /v1/turns/:turnId`. */
export const loadSnapshot = (token: string | undefined, turnId: string): Promise<Snapshot> =>
  getJson(apiUrl(`/v1/turns/${encodeURIComponent(turnId)}`, {}, token), isSnapshot, "a turn snapshot")

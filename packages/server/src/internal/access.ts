/**
 * Access control: bearer tokens compared in constant time, signed page tokens in
 * `?access_token=`, and a count of the open streams of each caller (each bearer token,
 * each page token).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { createHash, timingSafeEqual } from "node:crypto"
import { ApiError } from "../ApiError.js"
import * as ThreadToken from "../ThreadToken.js"
import * as ViewerToken from "../ViewerToken.js"

/**
 * Who made a request: the index of the bearer token it presented, `page:<mac>` for a
 * signed page token (each token, each link, its own caller: its signature tells it from
 * the others), or `anonymous` on a server without tokens.
 *
 * @internal
 */
export type Caller = number | `page:${string}` | `thread:${string}` | "anonymous"

/**
 * A checked request's credentials: who made it (the key of its stream slots), whether
 * it may cancel turns (bearer tokens, a server without tokens, and page tokens of the
 * `control` scope may; `read` page tokens and read-only bearer tokens may not), whether
 * it may write durable streams (the write scope: bearer tokens that are not read-only,
 * and a server without tokens), and the name its Durable Streams subscriptions are
 * counted under (`subscriber`: stored with each, so never the token: a digest of it).
 *
 * @internal
 */
export interface Credentials {
  readonly caller: Caller
  readonly mayCancel: boolean
  readonly mayWrite: boolean
  readonly subscriber: string
  /** A thread token's thread and scope: the request reaches that thread only. */
  readonly thread?: { readonly threadId: string; readonly scope: ThreadToken.ThreadTokenScope } | undefined
}

// The credentials of a thread token (its caller, each token its own: its signature).
const threadCredentials = (key: ViewerToken.SigningKey, token: string): Effect.Effect<Credentials, ApiError> =>
  ThreadToken.verify(key, token).pipe(
    Effect.map((claims): Credentials => ({
      caller: `thread:${token.slice(token.lastIndexOf(".") + 1)}`,
      mayCancel: claims.scope === "write",
      mayWrite: false,
      subscriber: "thread",
      thread: { threadId: claims.threadId, scope: claims.scope }
    })),
    Effect.mapError((error) => unauthorized(error.message))
  )

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest()

const bearerPattern = /^Bearer[ \t]+(\S+)[ \t]*$/i

const unauthorized = (message: string) => new ApiError({ code: "unauthorized", message })

/**
 * Checks a request's credentials: the `Authorization` header against the bearer
 * tokens, or, without that header, a signed page token in `?access_token=` (given
 * once) against the key derived from them. A thread token (`ThreadToken`) is taken in
 * either place, checked against the same key. Every bearer token is compared, in constant
 * time over SHA-256 digests (so neither a token's content nor its length shows in the
 * timing), whatever matched before. `readTokens` are bearer tokens of the read scope
 * only: they read, but neither write nor cancel. Page tokens are signed with the key
 * derived from `tokens`.
 *
 * @internal
 */
export const authenticator = (tokens: ReadonlyArray<string>, readTokens: ReadonlyArray<string> = []) => {
  const digests = [...tokens, ...readTokens].map(digest)
  // a stable name of each token: the first 16 bytes of its digest, in hex
  const subscribers = digests.map((bytes) => `token:${bytes.subarray(0, 16).toString("hex")}`)
  const key = ViewerToken.deriveKey(tokens)
  const firstReadOnly = tokens.length
  return (
    authorization: string | undefined,
    accessTokens: ReadonlyArray<string>
  ): Effect.Effect<Credentials, ApiError> => {
    if (digests.length === 0) {
      return Effect.succeed({ caller: "anonymous", mayCancel: true, mayWrite: true, subscriber: "anonymous" })
    }
    if (authorization === undefined) {
      if (accessTokens.length === 0) {
        return Effect.fail(unauthorized("missing bearer token (Authorization: Bearer <token>) or ?access_token="))
      }
      if (accessTokens.length > 1) {
        return Effect.fail(unauthorized(`?access_token= is given ${accessTokens.length} times`))
      }
      const token = accessTokens[0]!
      if (ThreadToken.isThreadToken(token)) return threadCredentials(key, token)
      return ViewerToken.verify(key, token).pipe(
        Effect.map((claims): Credentials => ({
          // the signature, which no two links share
          caller: `page:${token.slice(token.lastIndexOf(".") + 1)}`,
          mayCancel: ViewerToken.mayCancel(claims.scope),
          mayWrite: false,
          subscriber: "page"
        })),
        Effect.mapError((error) => unauthorized(error.message))
      )
    }
    const match = bearerPattern.exec(authorization)
    if (match === null) {
      return Effect.fail(unauthorized("the Authorization header is not a bearer token"))
    }
    if (ThreadToken.isThreadToken(match[1]!)) return threadCredentials(key, match[1]!)
    const presented = digest(match[1]!)
    let found = -1
    for (let i = 0; i < digests.length; i++) {
      if (timingSafeEqual(presented, digests[i]!) && found < 0) found = i
    }
    return found < 0
      ? Effect.fail(unauthorized("invalid bearer token"))
      : Effect.succeed({
        caller: found,
        mayCancel: found < firstReadOnly,
        mayWrite: found < firstReadOnly,
        subscriber: subscribers[found]!
      })
  }
}

/**
 * Counts the open streams of each caller. `acquire` takes a slot for the length of
 * the scope, failing with `too_many_streams` when the caller has `max` open; `open`
 * tells how many a caller holds. A caller with none is forgotten.
 *
 * @internal
 */
export const streamLimiter = (max: number) =>
  Effect.sync(() => {
    const open = new Map<Caller, number>()
    const take = (caller: Caller): Effect.Effect<void, ApiError> =>
      Effect.suspend(() => {
        const count = open.get(caller) ?? 0
        if (count >= max) {
          return Effect.fail(
            new ApiError({ code: "too_many_streams", message: `at most ${max} concurrent streams per token` })
          )
        }
        open.set(caller, count + 1)
        return Effect.void
      })
    const give = (caller: Caller) =>
      Effect.sync(() => {
        const count = (open.get(caller) ?? 0) - 1
        if (count <= 0) open.delete(caller)
        else open.set(caller, count)
      })
    return {
      acquire: (caller: Caller): Effect.Effect<void, ApiError, Scope.Scope> =>
        Effect.acquireRelease(take(caller), () => give(caller)),
      open: (caller: Caller): Effect.Effect<number> => Effect.sync(() => open.get(caller) ?? 0)
    }
  })

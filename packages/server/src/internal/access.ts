/**
 * Access control: bearer tokens compared in constant time, signed page tokens in
 * `?access_token=`, and a count of the open streams of each caller.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import { createHash, timingSafeEqual } from "node:crypto"
import { ApiError } from "../ApiError.js"
import * as ViewerToken from "../ViewerToken.js"

/**
 * Who made a request: the index of the bearer token it presented, `page` for a signed
 * page token, or `anonymous` on a server without tokens.
 *
 * @internal
 */
export type Caller = number | "page" | "anonymous"

/**
 * A checked request's credentials: who made it (the key of its stream slots), whether
 * it may cancel turns (bearer tokens, a server without tokens, and page tokens of the
 * `control` scope may; `read` page tokens and read-only bearer tokens may not), and
 * whether it may write durable streams (the write scope: bearer tokens that are not
 * read-only, and a server without tokens).
 *
 * @internal
 */
export interface Credentials {
  readonly caller: Caller
  readonly mayCancel: boolean
  readonly mayWrite: boolean
}

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest()

const bearerPattern = /^Bearer[ \t]+(\S+)[ \t]*$/i

const unauthorized = (message: string) => new ApiError({ code: "unauthorized", message })

/**
 * Checks a request's credentials: the `Authorization` header against the bearer
 * tokens, or, without that header, a signed page token in `?access_token=` (given
 * once) against the key derived from them. Every bearer token is compared, in constant
 * time over SHA-256 digests (so neither a token's content nor its length shows in the
 * timing), whatever matched before. `readTokens` are bearer tokens of the read scope
 * only: they read, but neither write nor cancel. Page tokens are signed with the key
 * derived from `tokens`.
 *
 * @internal
 */
export const authenticator = (tokens: ReadonlyArray<string>, readTokens: ReadonlyArray<string> = []) => {
  const digests = [...tokens, ...readTokens].map(digest)
  const key = ViewerToken.deriveKey(tokens)
  const firstReadOnly = tokens.length
  return (
    authorization: string | undefined,
    accessTokens: ReadonlyArray<string>
  ): Effect.Effect<Credentials, ApiError> => {
    if (digests.length === 0) return Effect.succeed({ caller: "anonymous", mayCancel: true, mayWrite: true })
    if (authorization === undefined) {
      if (accessTokens.length === 0) {
        return Effect.fail(unauthorized("missing bearer token (Authorization: Bearer <token>) or ?access_token="))
      }
      if (accessTokens.length > 1) {
        return Effect.fail(unauthorized(`?access_token= is given ${accessTokens.length} times`))
      }
      return ViewerToken.verify(key, accessTokens[0]!).pipe(
        Effect.map((claims): Credentials => ({
          caller: "page",
          mayCancel: ViewerToken.mayCancel(claims.scope),
          mayWrite: false
        })),
        Effect.mapError((error) => unauthorized(error.message))
      )
    }
    const match = bearerPattern.exec(authorization)
    if (match === null) {
      return Effect.fail(unauthorized("the Authorization header is not a bearer token"))
    }
    const presented = digest(match[1]!)
    let found = -1
    for (let i = 0; i < digests.length; i++) {
      if (timingSafeEqual(presented, digests[i]!) && found < 0) found = i
    }
    return found < 0
      ? Effect.fail(unauthorized("invalid bearer token"))
      : Effect.succeed({ caller: found, mayCancel: found < firstReadOnly, mayWrite: found < firstReadOnly })
  }
}

/**
 * Counts the open streams of each caller. `acquire` takes a slot for the length of
 * the scope, failing with `too_many_streams` when the caller has `max` open.
 *
 * @internal
 */
export const streamLimiter = (max: number) =>
  Effect.map(Ref.make(new Map<Caller, number>()), (open) => {
    const update = (caller: Caller, delta: number) => (counts: Map<Caller, number>) => {
      const next = new Map(counts)
      const count = (counts.get(caller) ?? 0) + delta
      if (count === 0) next.delete(caller)
      else next.set(caller, count)
      return next
    }
    const take = (caller: Caller): Effect.Effect<void, ApiError> =>
      Effect.flatMap(
        Ref.modify(
          open,
          (counts) =>
            (counts.get(caller) ?? 0) >= max ? [false, counts] as const : [true, update(caller, 1)(counts)] as const
        ),
        (taken) =>
          taken
            ? Effect.void
            : Effect.fail(
              new ApiError({ code: "too_many_streams", message: `at most ${max} concurrent streams per token` })
            )
      )
    return {
      acquire: (caller: Caller): Effect.Effect<void, ApiError, Scope.Scope> =>
        Effect.acquireRelease(take(caller), () => Ref.update(open, update(caller, -1))),
      open: (caller: Caller): Effect.Effect<number> => Effect.map(Ref.get(open), (counts) => counts.get(caller) ?? 0)
    }
  })

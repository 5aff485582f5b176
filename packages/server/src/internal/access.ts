/**
 * Access control: bearer tokens compared in constant time, and a count of the open
 * streams of each token.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import { createHash, timingSafeEqual } from "node:crypto"
import { ApiError } from "../ApiError.js"

/**
 * Who made a request: the index of the token it presented, or `anonymous` on a
 * server without tokens.
 *
 * @internal
 */
export type Caller = number | "anonymous"

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest()

const bearerPattern = /^Bearer[ \t]+(\S+)[ \t]*$/i

/**
 * Checks the `Authorization` header against the tokens. Every token is compared, in
 * constant time over SHA-256 digests (so neither a token's content nor its length
 * shows in the timing), whatever matched before.
 *
 * @internal
 */
export const authenticator = (tokens: ReadonlyArray<string>) => {
  const digests = tokens.map(digest)
  return (authorization: string | undefined): Effect.Effect<Caller, ApiError> => {
    if (digests.length === 0) return Effect.succeed("anonymous")
    if (authorization === undefined) {
      return Effect.fail(new ApiError({ code: "unauthorized", message: "missing bearer token (Authorization: Bearer <token>)" }))
    }
    const match = bearerPattern.exec(authorization)
    if (match === null) {
      return Effect.fail(new ApiError({ code: "unauthorized", message: "the Authorization header is not a bearer token" }))
    }
    const presented = digest(match[1]!)
    let found = -1
    for (let i = 0; i < digests.length; i++) {
      if (timingSafeEqual(presented, digests[i]!) && found < 0) found = i
    }
    return found < 0
      ? Effect.fail(new ApiError({ code: "unauthorized", message: "invalid bearer token" }))
      : Effect.succeed(found)
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
        Ref.modify(open, (counts) =>
          (counts.get(caller) ?? 0) >= max ? [false, counts] as const : [true, update(caller, 1)(counts)] as const),
        (taken) =>
          taken
            ? Effect.void
            : Effect.fail(new ApiError({ code: "too_many_streams", message: `at most ${max} concurrent streams per token` }))
      )
    return {
      acquire: (caller: Caller): Effect.Effect<void, ApiError, Scope.Scope> =>
        Effect.acquireRelease(take(caller), () => Ref.update(open, update(caller, -1))),
      open: (caller: Caller): Effect.Effect<number> => Effect.map(Ref.get(open), (counts) => counts.get(caller) ?? 0)
    }
  })

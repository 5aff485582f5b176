/**
 * Signed access tokens for the turn viewer page. A browser's `EventSource` cannot send
 * an `Authorization` header, so the page carries a short-lived token in the query
 * string (`?access_token=`) instead of a bearer token:
 *
 * ```
 * v1.<expiresAt>.<scope>.<mac>
 * ```
 *
 * `expiresAt` is in ms since the epoch, `scope` is `read` (the read-only turn API) or
 * `control` (that and stopping turns, `POST /v1/turns/:turnId/cancel`), and
 * `mac` is the unpadded base64url HMAC-SHA256 of `v1.<expiresAt>.<scope>` under a key
 * derived from the configured bearer tokens, so every server that shares the tokens
 * accepts the token, and replacing the tokens revokes every page token.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { createHmac } from "node:crypto"
import { signature as macOf, verifies } from "./internal/signing.js"

/**
 * What a token lets its holder do: `read`, the read-only turn API (`GET /v1/turns...`);
 * `control`, that and cancelling turns (`POST /v1/turns/:turnId/cancel`), for links
 * given to operators.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TokenScope = Schema.Literals(["read", "control"]).annotate({ identifier: "TokenScope" })

/**
 * Whether a scope allows cancelling turns.
 *
 * @since 0.1.0
 * @category predicates
 */
export const mayCancel = (scope: TokenScope): boolean => scope === "control"

/**
 * @since 0.1.0
 * @category models
 */
export type TokenScope = typeof TokenScope.Type

/**
 * What a token says: when it expires and what it allows.
 *
 * @since 0.1.0
 * @category models
 */
export interface Claims {
  readonly expiresAt: number
  readonly scope: TokenScope
}

/**
 * Why a token was refused: `Malformed` (not `v1.<expiresAt>.<scope>.<mac>`),
 * `UnknownScope`, `BadSignature` (not signed with this server's key, or altered) or
 * `Expired`.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidViewerToken extends Schema.TaggedError<InvalidViewerToken>()("InvalidViewerToken", {
  reason: Schema.Literals(["Malformed", "UnknownScope", "BadSignature", "Expired"])
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    switch (this.reason) {
      case "Malformed":
        return "the access token is not a page token (v1.<expiresAt>.<scope>.<mac>)"
      case "UnknownScope":
        return "the access token's scope is not known"
      case "BadSignature":
        return "the access token's signature does not match"
      case "Expired":
        return "the access token has expired: get a new link from sluice serve"
    }
  }
}

/**
 * A key that signs and checks page tokens.
 *
 * @since 0.1.0
 * @category models
 */
export interface SigningKey {
  readonly _tag: "SigningKey"
  readonly bytes: Buffer
}

/**
 * The signing key of a server with these bearer tokens: HMAC-SHA256 keyed by the
 * tokens (sorted, one per line) over a fixed label. The same tokens give the same key,
 * in any order; any change to them gives another key.
 *
 * @since 0.1.0
 * @category constructors
 */
export const deriveKey = (tokens: ReadonlyArray<string>): SigningKey => ({
  _tag: "SigningKey",
  bytes: createHmac("sha256", [...tokens].sort().join("\n")).update("sluice/viewer-token/v1").digest()
})

/**
 * Signs claims into a token.
 *
 * @since 0.1.0
 * @category signing
 */
export const sign = (key: SigningKey, claims: Claims): string => {
  const signed = `v1.${Math.floor(claims.expiresAt)}.${claims.scope}`
  return `${signed}.${macOf(key.bytes, signed)}`
}

/**
 * A token of the scope (`read` by default) valid for `ttlMs` from now (Effect's
 * `Clock`).
 *
 * @since 0.1.0
 * @category signing
 */
export const issue = (key: SigningKey, ttlMs: number, scope: TokenScope = "read"): Effect.Effect<string> =>
  Effect.map(Clock.currentTimeMillis, (now) => sign(key, { expiresAt: now + ttlMs, scope }))

const tokenPattern = /^v1\.(\d{1,16})\.([a-z]{1,16})\.([A-Za-z0-9_-]{43})$/
const isScope = Schema.is(TokenScope)

/**
 * Checks a token: its form, its scope, its signature (compared in constant time), and
 * that it has not expired by Effect's `Clock`.
 *
 * @since 0.1.0
 * @category verifying
 */
export const verify = (key: SigningKey, token: string): Effect.Effect<Claims, InvalidViewerToken> =>
  Effect.gen(function*() {
    const match = tokenPattern.exec(token)
    if (match === null) return yield* new InvalidViewerToken({ reason: "Malformed" })
    const [, expiry, scope, signature] = match
    // the text is compared, not its decoding (internal/signing.ts)
    if (!verifies(key.bytes, `v1.${expiry}.${scope}`, signature!)) {
      return yield* new InvalidViewerToken({ reason: "BadSignature" })
    }
    if (!isScope(scope)) return yield* new InvalidViewerToken({ reason: "UnknownScope" })
    const expiresAt = Number(expiry)
    if (expiresAt <= (yield* Clock.currentTimeMillis)) return yield* new InvalidViewerToken({ reason: "Expired" })
    return { expiresAt, scope }
  })

/**
 * The page tokens of a running server: `issue(ttlMs, scope)` signs a token of the
 * scope (`read` by default) with the server's key, or is `None` on a server without
 * tokens (`insecureLocal`), whose page needs none.
 *
 * @since 0.1.0
 * @category services
 */
export class Signer extends Context.Service<
  Signer,
  { readonly issue: (ttlMs: number, scope?: TokenScope) => Effect.Effect<Option.Option<string>> }
>()("@sluice/server/ViewerToken/Signer") {}

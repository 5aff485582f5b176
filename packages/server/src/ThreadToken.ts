/**
 * Thread tokens: what an application's backend gives a browser so that it can hold one
 * conversation (docs/threads.md#http), never a bearer token. A thread token names one
 * thread and a scope, and expires:
 *
 * ```
 * th1.<expiresAt>.<scope>.<threadId>.<mac>
 * ```
 *
 * `expiresAt` is in ms since the epoch; `scope` is `read` (the thread, its events, its
 * turns' streams) or `write` (that, starting turns in the thread and cancelling them);
 * `threadId` is the thread's id as unpadded base64url; `mac` is the unpadded base64url
 * HMAC-SHA256 of the rest under the key page tokens are signed with
 * (`ViewerToken.deriveKey` of the bearer tokens): every server sharing the tokens
 * accepts it, and replacing the tokens revokes every thread token. It is sent as
 * `Authorization: Bearer <token>`, or as `?access_token=<token>` where a header cannot
 * be set (an `EventSource`).
 *
 * A thread token reaches nothing but its thread: another thread, `GET`/`POST
 * /v1/turns`, a turn of another thread, Durable Streams and `/metrics` are 403.
 *
 * @since 0.3.0
 */
import { ThreadInput } from "@sluice/core"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { signature, verifies } from "./internal/signing.js"
import * as ViewerToken from "./ViewerToken.js"

/**
 * What a thread token allows: `read`, the thread and its turns' streams; `write`, that,
 * starting turns in the thread and cancelling them.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ThreadTokenScope = Schema.Literals(["read", "write"]).annotate({ identifier: "ThreadTokenScope" })

/**
 * @since 0.3.0
 * @category models
 */
export type ThreadTokenScope = typeof ThreadTokenScope.Type

/**
 * What a thread token says.
 *
 * @since 0.3.0
 * @category models
 */
export interface ThreadClaims {
  readonly threadId: string
  readonly scope: ThreadTokenScope
  readonly expiresAt: number
}

/**
 * Why a thread token was refused: `Malformed` (not `th1.<expiresAt>.<scope>.<threadId>.<mac>`),
 * `UnknownScope`, `BadSignature` (not signed with this server's key, or altered) or
 * `Expired`.
 *
 * @since 0.3.0
 * @category errors
 */
export class InvalidThreadToken extends Schema.TaggedError<InvalidThreadToken>()("InvalidThreadToken", {
  reason: Schema.Literals(["Malformed", "UnknownScope", "BadSignature", "Expired"])
}) {
  /**
   * @since 0.3.0
   */
  override get message(): string {
    switch (this.reason) {
      case "Malformed":
        return "the thread token is malformed (th1.<expiresAt>.<scope>.<threadId>.<mac>)"
      case "UnknownScope":
        return "the thread token's scope is not known"
      case "BadSignature":
        return "the thread token's signature does not match"
      case "Expired":
        return "the thread token has expired: ask the application for a new one"
    }
  }
}

/**
 * A token that cannot be minted: `field` names the option (`threadId`, `scope`,
 * `expiresIn`, `key`), `reason` says why.
 *
 * @since 0.3.0
 * @category errors
 */
export class InvalidThreadTokenOptions
  extends Schema.TaggedError<InvalidThreadTokenOptions>()("InvalidThreadTokenOptions", {
    field: Schema.String,
    reason: Schema.String
  })
{
  /**
   * @since 0.3.0
   */
  override get message(): string {
    return `cannot mint a thread token: ${this.field}: ${this.reason}`
  }
}

/**
 * The options of `mint`: the signing key (a `ViewerToken.SigningKey`, or the server's
 * bearer tokens, `SLUICE_API_TOKENS`, from which it is derived), the thread, the scope
 * (`write` by default) and how long the token lives (`expiresIn`, e.g. `"1 hour"` or
 * milliseconds).
 *
 * @since 0.3.0
 * @category models
 */
export interface MintOptions {
  readonly key: ViewerToken.SigningKey | ReadonlyArray<string>
  readonly threadId: string
  readonly scope?: ThreadTokenScope | undefined
  readonly expiresIn: Duration.Input
}

/**
 * The prefix of every thread token, which tells it from a bearer token or a page token.
 *
 * @since 0.3.0
 * @category constants
 */
export const tokenPrefix = "th1."

const tokenPattern = /^th1\.(\d{1,16})\.([a-z]{1,16})\.([A-Za-z0-9_-]{1,172})\.([A-Za-z0-9_-]{43})$/
const isScope = Schema.is(ThreadTokenScope)

const encodeId = (threadId: string): string => Buffer.from(threadId, "utf8").toString("base64url")

const keyOf = (key: MintOptions["key"]): ViewerToken.SigningKey => "bytes" in key ? key : ViewerToken.deriveKey(key)

/**
 * Whether a credential is a thread token (by its prefix; `verify` checks the rest).
 *
 * @since 0.3.0
 * @category predicates
 */
export const isThreadToken = (text: string): boolean => text.startsWith(tokenPrefix)

/**
 * Signs claims into a token.
 *
 * @since 0.3.0
 * @category signing
 */
export const sign = (key: ViewerToken.SigningKey, claims: ThreadClaims): string => {
  const signed = `${tokenPrefix}${Math.floor(claims.expiresAt)}.${claims.scope}.${encodeId(claims.threadId)}`
  return `${signed}.${signature(key.bytes, signed)}`
}

/**
 * A token for one thread, valid for `expiresIn` from now (Effect's `Clock`). Fails
 * with `InvalidThreadTokenOptions` for a thread id that is not one (1 to 128 letters,
 * digits, `.`, `_`, `:` or `-`), a scope that is not `read` or `write`, a lifetime that
 * is not a positive duration, or no bearer token to derive the key from.
 *
 * @since 0.3.0
 * @category signing
 */
export const mint = (options: MintOptions): Effect.Effect<string, InvalidThreadTokenOptions> =>
  Effect.gen(function*() {
    const { threadId } = options
    if (!ThreadInput.isThreadId(threadId)) {
      return yield* new InvalidThreadTokenOptions({ field: "threadId", reason: ThreadInput.threadIdRule })
    }
    const scope = options.scope ?? "write"
    if (!isScope(scope)) {
      return yield* new InvalidThreadTokenOptions({ field: "scope", reason: "expected \"read\" or \"write\"" })
    }
    const lifetime = Duration.fromInput(options.expiresIn)
    const ttlMs = Option.match(lifetime, { onNone: () => NaN, onSome: Duration.toMillis })
    if (!(ttlMs > 0) || !Number.isFinite(ttlMs)) {
      return yield* new InvalidThreadTokenOptions({
        field: "expiresIn",
        reason: "expected a positive, finite duration"
      })
    }
    if (!("bytes" in options.key) && options.key.length === 0) {
      return yield* new InvalidThreadTokenOptions({
        field: "key",
        reason: "no bearer token to derive the signing key from (SLUICE_API_TOKENS)"
      })
    }
    const now = yield* Clock.currentTimeMillis
    return sign(keyOf(options.key), { threadId, scope, expiresAt: now + ttlMs })
  })

/**
 * Checks a token: its form, its signature (compared in constant time), its scope, and
 * that it has not expired by Effect's `Clock`.
 *
 * @since 0.3.0
 * @category verifying
 */
export const verify = (
  key: ViewerToken.SigningKey,
  token: string
): Effect.Effect<ThreadClaims, InvalidThreadToken> =>
  Effect.gen(function*() {
    const match = tokenPattern.exec(token)
    if (match === null) return yield* new InvalidThreadToken({ reason: "Malformed" })
    const [, expiry, scope, encodedId, mac] = match
    if (!verifies(key.bytes, `${tokenPrefix}${expiry}.${scope}.${encodedId}`, mac!)) {
      return yield* new InvalidThreadToken({ reason: "BadSignature" })
    }
    if (!isScope(scope)) return yield* new InvalidThreadToken({ reason: "UnknownScope" })
    const expiresAt = Number(expiry)
    if (expiresAt <= (yield* Clock.currentTimeMillis)) return yield* new InvalidThreadToken({ reason: "Expired" })
    return { threadId: Buffer.from(encodedId!, "base64url").toString("utf8"), scope, expiresAt }
  })

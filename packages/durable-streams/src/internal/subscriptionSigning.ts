/**
 * The keys of the subscription APIs: webhook notifications signed with Ed25519
 * (`Webhook-Signature: t=<unix seconds>,kid=<key id>,ed25519=<base64url signature>`
 * over `<t>.<raw body>`), the public key as a JWK Set, and the bearer tokens of a
 * wake's callbacks (HMAC-SHA256 over the subscription, generation and wake, keyed
 * from the signing key), so one stored key serves every server.
 *
 * @internal
 */
import { SchemaDecode } from "@sluice/core"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import {
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  timingSafeEqual
} from "node:crypto"

/**
 * A fresh Ed25519 private key, PKCS#8 PEM.
 *
 * @internal
 */
export const generateKey = (): string =>
  generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString()

/**
 * What a wake's token names: the subscription, the generation and the wake.
 *
 * @internal
 */
export const TokenClaims = Schema.Struct({ sub: Schema.String, gen: Schema.Number, wake: Schema.String })

/** @internal */
export type TokenClaims = typeof TokenClaims.Type

const decodeClaims = SchemaDecode.decodeUnknownResult(Schema.fromJsonString(TokenClaims))

const PublicJwk = Schema.Struct({ kty: Schema.Literal("OKP"), crv: Schema.Literal("Ed25519"), x: Schema.String })
const decodeJwk = SchemaDecode.decodeUnknownResult(PublicJwk)

/**
 * The signer of one key.
 *
 * @internal
 */
export interface Signer {
  /** The key's id, `ds_` and its JWK thumbprint (RFC 7638). */
  readonly kid: string
  /** The JWK Set of the public key. */
  readonly jwks: { readonly keys: ReadonlyArray<Record<string, string>> }
  /** The `Webhook-Signature` header of a body sent at `nowMs`. */
  readonly signature: (body: string, nowMs: number) => string
  /** A wake's callback token. */
  readonly issue: (claims: TokenClaims) => string
  /** The claims of a token this key issued, if it is one. */
  readonly verify: (token: string) => Option.Option<TokenClaims>
}

/**
 * The signer of a PKCS#8 PEM Ed25519 private key.
 *
 * @internal
 */
export const makeSigner = (pem: string): Signer => {
  const privateKey = createPrivateKey(pem)
  const jwk = Result.getOrThrowWith(
    decodeJwk(createPublicKey(privateKey).export({ format: "jwk" })),
    () => new Error("the stored signing key is not an Ed25519 key")
  )
  const thumbprint = createHash("sha256")
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x }))
    .digest("base64url")
  const kid = `ds_${thumbprint}`
  const hmacKey = createHash("sha256").update("sluice subscription callback tokens\u0000").update(pem).digest()
  const mac = (payload: string) => createHmac("sha256", hmacKey).update(payload).digest()
  return {
    kid,
    jwks: { keys: [{ kty: jwk.kty, crv: jwk.crv, x: jwk.x, kid, use: "sig", alg: "EdDSA" }] },
    signature: (body, nowMs) => {
      const t = Math.floor(nowMs / 1000)
      return `t=${t},kid=${kid},ed25519=${sign(null, Buffer.from(`${t}.${body}`), privateKey).toString("base64url")}`
    },
    issue: (claims) => {
      const payload = Buffer.from(JSON.stringify(claims)).toString("base64url")
      return `${payload}.${mac(payload).toString("base64url")}`
    },
    verify: (token) => {
      const dot = token.indexOf(".")
      if (dot < 0) return Option.none()
      const payload = token.slice(0, dot)
      const given = Buffer.from(token.slice(dot + 1), "base64url")
      const expected = mac(payload)
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return Option.none()
      return Result.getSuccess(decodeClaims(Buffer.from(payload, "base64url").toString("utf8")))
    }
  }
}

/**
 * The signing of the server's own tokens (page tokens, thread tokens): HMAC-SHA256
 * under a key derived from the bearer tokens, as unpadded base64url text, checked in
 * constant time over the text (not its decoding: base64url leaves two bits of the
 * last character unused, and a token with them changed must not pass).
 *
 * @internal
 */
import { createHmac, timingSafeEqual } from "node:crypto"

/**
 * The unpadded base64url HMAC-SHA256 of `text` under `key`.
 *
 * @internal
 */
export const signature = (key: Buffer, text: string): string =>
  createHmac("sha256", key).update(text).digest("base64url")

/**
 * Whether `presented` is the signature of `text` under `key`, compared in constant time.
 *
 * @internal
 */
export const verifies = (key: Buffer, text: string, presented: string): boolean => {
  const expected = Buffer.from(signature(key, text))
  const given = Buffer.from(presented)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

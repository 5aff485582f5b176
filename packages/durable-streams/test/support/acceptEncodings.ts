/**
 * The table of `Accept-Encoding` headers that the negotiation is held to: the server's
 * Compression test asserts every answer, and `pnpm bench handwritten` puts
 * `negotiator`'s beside them.
 */
import type { HttpCompression } from "../../src/index.js"

/**
 * Accept-Encoding headers and the coding to send when gzip and identity are available:
 * as RFC 9110 (12.5.3, 8.4.1.3) decides it, unless the note says otherwise: `invalid`,
 * a q-value outside the RFC's grammar (what to do is not specified: Sluice ignores the
 * element, as if it were not there); `open`, a case either answer satisfies.
 */
export const acceptEncodings: ReadonlyArray<readonly [string | undefined, HttpCompression.Encoding, string?]> = [
  [undefined, "identity"],
  ["", "identity"],
  ["gzip", "gzip"],
  ["GZip", "gzip"],
  ["x-gzip", "gzip", "RFC: x-gzip SHOULD be taken as gzip (8.4.1.3)"],
  ["gzip, deflate, br", "gzip"],
  ["deflate, br", "identity"],
  ["br;q=1.0, gzip;q=0.8, *;q=0.1", "gzip"],
  ["*", "gzip"],
  ["*;q=0", "identity"],
  ["identity", "identity"],
  ["identity;q=0", "identity", "nothing acceptable: identity, as a 415 is not wanted"],
  ["gzip;q=0", "identity"],
  ["gzip;q=0, *", "identity"],
  ["*, gzip;q=0", "identity"],
  ["gzip;q=0.000", "identity"],
  ["gzip;q=0.001", "gzip"],
  ["gzip;q=0.5, identity", "identity"],
  ["gzip;q=0.5, *;q=0.9", "identity"],
  ["gzip, identity;q=0.5", "gzip"],
  ["identity;q=0, gzip;q=0.1", "gzip"],
  ["identity;q=0, *;q=0", "identity"],
  ["gzip;q=0.5, identity;q=0.5", "gzip", "open: a tie"],
  ["identity;q=0.5, gzip;q=0.5", "gzip", "open: a tie"],
  ["gzip ; q=0.8 , br", "gzip"],
  ["\tgzip\t;\tq=0.8", "gzip"],
  ["gzip;Q=1", "gzip"],
  ["gzip;level=1", "gzip"],
  ["gzip;q=abc", "identity", "invalid q-value"],
  ["gzip;q=1.5", "identity", "invalid q-value"],
  ["gzip;q=0.1234", "identity", "invalid q-value"],
  ["gzip;q=", "identity", "invalid q-value"],
  ["gzip;q=-1", "identity", "invalid q-value"],
  [",, ,gzip", "gzip"],
  ["gzip;q=0.5, gzip;q=0", "identity", "open: gzip named twice"]
]

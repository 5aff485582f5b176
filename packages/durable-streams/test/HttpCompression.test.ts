/**
 * Why `Accept-Encoding` is negotiated by Sluice's own `negotiate` rather than by
 * `negotiator` (measured in `pnpm bench handwritten`): on the headers below the two
 * differ, and Sluice's answer is RFC 9110's (`x-gzip` is gzip, 8.4.1.3) or keeps to
 * its q-value grammar (an element with a q-value outside it is ignored, as if absent:
 * gzip is not sent to a client that did not say it takes it). The header table of
 * the whole negotiation is `support/acceptEncodings.ts` (asserted by the server
 * package's Compression test).
 */
import { describe, expect, it } from "@effect/vitest"
import Negotiator from "negotiator"
import * as HttpCompression from "../src/HttpCompression.js"

const negotiator = (header: string): string =>
  new Negotiator({ headers: { "accept-encoding": header } }).encodings(["gzip", "identity"])[0] ?? "identity"

describe("negotiate, where negotiator answers otherwise", () => {
  it("x-gzip is gzip (RFC 9110, 8.4.1.3); negotiator sends identity", () => {
    expect(HttpCompression.negotiate("x-gzip")).toBe("gzip")
    expect(HttpCompression.negotiate("x-gzip;q=0.5, identity;q=0.1")).toBe("gzip")
    expect(negotiator("x-gzip")).toBe("identity")
  })

  it("a q-value outside the grammar leaves its element out; negotiator takes it as gzip", () => {
    for (const header of ["gzip;q=1.5", "gzip;q=0.1234", "gzip;q="]) {
      expect([header, HttpCompression.negotiate(header)]).toStrictEqual([header, "identity"])
      expect([header, negotiator(header)]).toStrictEqual([header, "gzip"])
    }
  })
})

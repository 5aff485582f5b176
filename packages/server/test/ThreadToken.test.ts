/**
 * Thread tokens: minting (the options checked, each naming its field), checking (form,
 * signature, scope, expiry on the `Clock`), the thread id carried whole whatever its
 * characters, and one signing key with page tokens (a page token is no thread token).
 */
import { describe, expect, it } from "@effect/vitest"
import { tokens } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import { createHmac } from "node:crypto"
import * as ThreadToken from "../src/ThreadToken.js"
import * as ViewerToken from "../src/ViewerToken.js"

const key = ViewerToken.deriveKey(tokens)

const refusal = (token: string) => Effect.flip(ThreadToken.verify(key, token)).pipe(Effect.map((error) => error.reason))

describe("ThreadToken", () => {
  it.effect(
    "a minted token verifies, names its thread and scope, until it expires by the Clock",
    () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(1_700_000_000_000)
        const token = yield* ThreadToken.mint({
          key: tokens,
          threadId: "chat:42.a_b-c",
          scope: "read",
          expiresIn: "1 minute"
        })
        expect(token).toMatch(/^th1\.1700000060000\.read\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
        expect(yield* ThreadToken.verify(key, token)).toStrictEqual({
          threadId: "chat:42.a_b-c",
          scope: "read",
          expiresAt: 1_700_000_060_000
        })
        yield* TestClock.adjust(59_999)
        expect((yield* ThreadToken.verify(key, token)).threadId).toBe("chat:42.a_b-c")
        yield* TestClock.adjust(1)
        expect(yield* refusal(token)).toBe("Expired")
      }),
    10_000
  )

  it.effect("write is the default scope; the key may be given derived", () =>
    Effect.gen(function*() {
      const token = yield* ThreadToken.mint({ key, threadId: "t1", expiresIn: 60_000 })
      expect((yield* ThreadToken.verify(key, token)).scope).toBe("write")
    }), 10_000)

  it.effect(
    "an altered thread, scope or expiry, another key, a page token: refused, saying why",
    () =>
      Effect.gen(function*() {
        const token = ThreadToken.sign(key, { threadId: "thread-a", scope: "read", expiresAt: 9_000_000_000_000 })
        const [, expiry, scope, id, mac] = token.split(".")
        const otherId = Buffer.from("thread-b").toString("base64url")
        expect(yield* refusal(`th1.${expiry}.${scope}.${otherId}.${mac}`)).toBe("BadSignature")
        expect(yield* refusal(`th1.${expiry}.write.${id}.${mac}`)).toBe("BadSignature")
        expect(yield* refusal(`th1.9${expiry}.${scope}.${id}.${mac}`)).toBe("BadSignature")
        const foreign = ThreadToken.sign(ViewerToken.deriveKey(["another-token-0123"]), {
          threadId: "thread-a",
          scope: "read",
          expiresAt: 9_000_000_000_000
        })
        expect(yield* refusal(foreign)).toBe("BadSignature")
        expect(yield* refusal(ViewerToken.sign(key, { expiresAt: 9_000_000_000_000, scope: "control" }))).toBe(
          "Malformed"
        )
        expect(yield* refusal("th1.x")).toBe("Malformed")
        // a scope it does not know, signed with the right key
        const unknown = `th1.9000000000000.admin.${id}`
        const signed = `${unknown}.${createHmac("sha256", key.bytes).update(unknown).digest("base64url")}`
        expect(yield* refusal(signed)).toBe("UnknownScope")
      }),
    10_000
  )

  it.effect(
    "minting refuses a bad thread id, scope, lifetime or no key, naming the field",
    () =>
      Effect.gen(function*() {
        const field = (options: ThreadToken.MintOptions) =>
          Effect.map(Effect.flip(ThreadToken.mint(options)), (error) => error.field)
        expect(yield* field({ key: tokens, threadId: "has space", expiresIn: 1000 })).toBe("threadId")
        expect(yield* field({ key: tokens, threadId: "x".repeat(129), expiresIn: 1000 })).toBe("threadId")
        expect(yield* field({ key: tokens, threadId: "", expiresIn: 1000 })).toBe("threadId")
        expect(yield* field({ key: tokens, threadId: "t", expiresIn: 0 })).toBe("expiresIn")
        expect(yield* field({ key: tokens, threadId: "t", expiresIn: -5 })).toBe("expiresIn")
        expect(yield* field({ key: [], threadId: "t", expiresIn: 1000 })).toBe("key")
      }),
    10_000
  )
})

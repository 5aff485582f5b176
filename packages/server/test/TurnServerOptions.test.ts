/**
 * The server's options: defaults, tokens from configuration, and every refusal.
 */
import { describe, expect, it } from "@effect/vitest"
import { RedisStreamsMemory } from "@sluice/redis"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TurnServer from "../src/TurnServer.js"
import * as TurnServerOptions from "../src/TurnServerOptions.js"

const env = (entries: Record<string, string>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(entries))
const noEnv = env({})

const refusal = (options: TurnServerOptions.Options, environment: Record<string, string> = {}) =>
  Effect.flip(TurnServerOptions.resolve(options).pipe(env(environment))).pipe(
    Effect.flatMap((error) =>
      error instanceof TurnServerOptions.InvalidServerOptions
        ? Effect.succeed(error)
        : Effect.die(new Error("expected InvalidServerOptions"))
    )
  )

describe("TurnServerOptions.resolve", () => {
  it.effect("applies the defaults", () =>
    Effect.gen(function*() {
      const resolved = yield* TurnServerOptions.resolve({ tokens: ["t0k3n"] }).pipe(noEnv)
      expect(resolved).toStrictEqual({
        port: 8787,
        host: undefined,
        prefix: "codex",
        tokens: ["t0k3n"],
        insecureLocal: false,
        maxStreamsPerToken: 16,
        heartbeatMs: 15_000,
        idleTimeoutMs: 600_000,
        tailBlockMs: 5_000,
        resumeAttempts: 5,
        resumeBaseMs: 200,
        resumeMaxMs: 5_000,
        listLimit: 20,
        maxListLimit: 100,
        leaseCheckMs: 3_000,
        sweepEveryMs: 5_000,
        sweepBatch: 1_000,
        readyTimeoutMs: 1_000,
        readTokens: [],
        durableLongPollMs: 20_000,
        maxJsonDepth: 128,
        webhookAllowHosts: [],
        compression: true,
        maxBodyBytes: 8 * 1024 * 1024,
        maxSubscriptionBodyBytes: 1024 * 1024,
        keepAliveTimeoutMs: 65_000,
        headersTimeoutMs: 66_000,
        requestTimeoutMs: 120_000,
        writeTimeoutMs: 60_000,
        maxSubscriptionsPerToken: 100,
        shutdownTimeoutMs: 8_000,
        publicUrl: undefined,
        awaitTurnMs: 0,
        threadTurnsPerMinute: 20,
        maxStreamsPerThreadToken: 4
      })
    }))

  it.effect("reads SLUICE_API_TOKENS, comma-separated, trimmed, empty entries ignored", () =>
    Effect.gen(function*() {
      const resolved = yield* TurnServerOptions.resolve({}).pipe(env({ SLUICE_API_TOKENS: " first ,second,, third ," }))
      expect(resolved.tokens).toStrictEqual(["first", "second", "third"])
    }))

  it.effect("tokens in the options take precedence over SLUICE_API_TOKENS", () =>
    Effect.gen(function*() {
      const resolved = yield* TurnServerOptions.resolve({ tokens: ["mine"] }).pipe(env({ SLUICE_API_TOKENS: "theirs" }))
      expect(resolved.tokens).toStrictEqual(["mine"])
    }))

  it.effect("no token and no insecureLocal: MissingTokens", () =>
    Effect.gen(function*() {
      for (
        const [options, environment] of [[{}, {}], [{}, { SLUICE_API_TOKENS: " , ," }], [{ tokens: [] }, {}]] as const
      ) {
        const error = yield* refusal(options, environment)
        expect(error.reason).toBe("MissingTokens")
        expect(error.message).toMatch(/SLUICE_API_TOKENS/)
      }
    }))

  it.effect("insecureLocal binds to 127.0.0.1 by default and refuses a host that is not loopback", () =>
    Effect.gen(function*() {
      expect((yield* TurnServerOptions.resolve({ insecureLocal: true }).pipe(noEnv)).host).toBe("127.0.0.1")
      for (const host of ["::1", "localhost", "127.0.0.2"]) {
        expect((yield* TurnServerOptions.resolve({ insecureLocal: true, host }).pipe(noEnv)).host).toBe(host)
      }
      for (const host of ["0.0.0.0", "::", "192.168.1.10", "example.com", "127.0.0.1.example.com"]) {
        const error = yield* refusal({ insecureLocal: true, host })
        expect(error.reason).toBe("NotLoopback")
        expect(error.detail).toContain(host)
      }
    }))

  it.effect("malformed fields are named, all at once", () =>
    Effect.gen(function*() {
      const error = yield* refusal({
        tokens: ["t"],
        port: 70_000,
        heartbeatMs: 0,
        prefix: "a b",
        maxStreamsPerToken: 1.5
      })
      expect(error.reason).toBe("InvalidOptions")
      for (const field of ["port", "heartbeatMs", "prefix", "maxStreamsPerToken"]) expect(error.detail).toContain(field)
      const unknown = yield* refusal({ tokens: ["t"], colour: "blue" } as TurnServerOptions.Options)
      expect(unknown.detail).toContain("colour")
    }))

  it.effect("a token with a space or a control character is refused, from the options or the environment", () =>
    Effect.gen(function*() {
      expect((yield* refusal({ tokens: ["two words"] })).reason).toBe("InvalidOptions")
      expect((yield* refusal({ tokens: ["tab\there"] })).reason).toBe("InvalidOptions")
      const fromEnv = yield* refusal({}, { SLUICE_API_TOKENS: "good,bad token" })
      expect(fromEnv.detail).toContain("SLUICE_API_TOKENS")
    }))

  it.effect("webhookAllowHosts takes hosts and host:port; anything else is refused, named", () =>
    Effect.gen(function*() {
      const resolved = yield* TurnServerOptions.resolve({
        tokens: ["t"],
        webhookAllowHosts: ["hooks.example.com", "10.0.0.7:8443", "[::1]:9000"]
      }).pipe(noEnv)
      expect(resolved.webhookAllowHosts).toStrictEqual(["hooks.example.com", "10.0.0.7:8443", "[::1]:9000"])
      for (const entry of ["https://hooks.example.com", "host/path", "user@host", " host"]) {
        const error = yield* refusal({ tokens: ["t"], webhookAllowHosts: [entry] })
        expect([entry, error.reason]).toStrictEqual([entry, "InvalidOptions"])
        expect(error.detail).toContain("an allowed host is a host or host:port")
      }
    }))

  it.effect("limits that contradict each other are refused", () =>
    Effect.gen(function*() {
      expect((yield* refusal({ tokens: ["t"], listLimit: 200 })).detail).toMatch(/listLimit/)
      expect((yield* refusal({ tokens: ["t"], resumeBaseMs: 10_000, resumeMaxMs: 100 })).detail).toMatch(/resumeBaseMs/)
      expect((yield* refusal({ tokens: ["t"], keepAliveTimeoutMs: 70_000 })).detail).toBe(
        "headersTimeoutMs (66000) must be above keepAliveTimeoutMs (70000)"
      )
      expect((yield* refusal({ tokens: ["t"], keepAliveTimeoutMs: 5_000, headersTimeoutMs: 5_000 })).detail).toMatch(
        /headersTimeoutMs/
      )
      expect((yield* refusal({ tokens: ["t"], keepAliveTimeoutMs: 1_000, headersTimeoutMs: 120_001 })).detail).toBe(
        "headersTimeoutMs (120001) is above requestTimeoutMs (120000)"
      )
      for (
        const field of [
          "maxBodyBytes",
          "maxSubscriptionBodyBytes",
          "keepAliveTimeoutMs",
          "headersTimeoutMs",
          "requestTimeoutMs",
          "writeTimeoutMs",
          "maxSubscriptionsPerToken"
        ]
      ) {
        expect((yield* refusal({ tokens: ["t"], [field]: 0 })).detail).toMatch(field)
      }
    }))

  it.effect("publicUrl: an http(s) URL, kept without its trailing slashes; anything else is refused", () =>
    Effect.gen(function*() {
      const resolved = (publicUrl: string) =>
        Effect.map(TurnServerOptions.resolve({ tokens: ["t"], publicUrl }).pipe(noEnv), (options) => options.publicUrl)
      expect(yield* resolved("https://sluice.example.com")).toBe("https://sluice.example.com")
      expect(yield* resolved("https://sluice.example.com/")).toBe("https://sluice.example.com")
      expect(yield* resolved("http://10.0.0.5:8787/api/sluice//")).toBe("http://10.0.0.5:8787/api/sluice")
      expect(yield* resolved("https://[::1]:8443")).toBe("https://[::1]:8443")
      for (
        const bad of [
          "sluice.example.com",
          "ftp://sluice.example.com",
          "https://user:pw@sluice.example.com",
          "https://sluice.example.com/?x=1",
          "https://sluice.example.com/#top",
          "https://"
        ]
      ) {
        const refused = yield* refusal({ tokens: ["t"], publicUrl: bad })
        expect([bad, refused.reason, refused.detail]).toEqual([
          bad,
          "InvalidOptions",
          expect.stringMatching(/^publicUrl/)
        ])
      }
    }))
})

describe("TurnServer.layer", () => {
  it.effect("refuses to start without a token", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(TurnServer.layer({ port: 0 })).pipe(Effect.scoped))
      expect(error._tag).toBe("InvalidServerOptions")
    }).pipe(noEnv, Effect.provide(RedisStreamsMemory.layer)))

  it.effect("a port that is taken fails with a ServeError", () =>
    Effect.gen(function*() {
      const first = yield* Layer.build(TurnServer.layer({ port: 0, host: "127.0.0.1", tokens: ["t"] }))
      const address = yield* Effect.provide(TurnServer.address, first)
      const port = address._tag !== "UnixPathAddress" ? address.port : 0
      const error = yield* Effect.flip(Layer.build(TurnServer.layer({ port, host: "127.0.0.1", tokens: ["t"] })))
      expect(error._tag).toBe("ServeError")
    }).pipe(Effect.scoped, Effect.provide(RedisStreamsMemory.layer)))
})

describe("TurnServerOptions.isLoopback", () => {
  it("knows loopback addresses", () => {
    expect(
      ["127.0.0.1", "127.1.2.3", "::1", "localhost", "LOCALHOST", "::ffff:127.0.0.1"].every(
        TurnServerOptions.isLoopback
      )
    ).toBe(true)
    expect(["0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "localhost.evil", ""].some(TurnServerOptions.isLoopback)).toBe(
      false
    )
  })
})

/**
 * The options of the turn server, their defaults, and how they are resolved: bearer
 * tokens come from the options or from `SLUICE_API_TOKENS` (comma-separated, through
 * Effect `Config`), a server without tokens needs `insecureLocal`, and an insecure
 * server binds to loopback only.
 *
 * @since 0.1.0
 */
import { Json } from "@sluice/core"
import { RequestBody } from "@sluice/durable-streams"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))
const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const PortNumber = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65535 }))
const NonEmptyTrimmedString = Schema.Trimmed.check(Schema.isNonEmpty())

// An optional key that decodes to `value` when absent (v3's `optionalWith(schema,
// { exact: true, default })`).
const withDefault = <S extends Schema.Top>(schema: S, value: S["Type"]) =>
  schema.pipe(Schema.withDecodingDefaultTypeKey(Effect.succeed(value)))

/**
 * A bearer token: visible ASCII, no spaces or commas.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Token = Schema.String.check(
  Schema.isPattern(/^[\x21-\x2B\x2D-\x7E]+$/, { message: "a token is visible ASCII without spaces or commas" })
).annotate({ identifier: "Token" })

/**
 * An entry of `webhookAllowHosts`: a host name or IPv4 address, or a bracketed IPv6
 * one, with an optional port (what a webhook URL's host name, or its host with port,
 * is compared with).
 *
 * @since 0.1.0
 * @category schemas
 */
export const AllowHost = Schema.String.check(
  Schema.isPattern(/^(?:\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::\d{1,5})?$/i, {
    message: "an allowed host is a host or host:port"
  })
).annotate({ identifier: "AllowHost" })

/**
 * The defaults of the options that bound a request and keep a connection: the streams
 * one token may hold open (16), the Durable Streams subscriptions one token may hold
 * (100), the body limits (8 MiB for a Durable Streams write, 1 MiB for a subscription
 * route), the keep-alive (65 s), headers (66 s) and request (120 s) timeouts, and how
 * long a reader's write may wait for its client (60 s); `sluice serve` takes them too.
 *
 * @since 0.3.0
 * @category constants
 */
export const connectionDefaults = {
  maxStreamsPerToken: 16,
  maxSubscriptionsPerToken: 100,
  maxBodyBytes: RequestBody.defaultLimits.durable,
  maxSubscriptionBodyBytes: RequestBody.defaultLimits.subscription,
  keepAliveTimeoutMs: 65_000,
  headersTimeoutMs: 66_000,
  requestTimeoutMs: 120_000,
  writeTimeoutMs: 60_000
} as const

/**
 * The defaults of the limits of each thread token (docs/threads.md#thread-tokens): 20
 * turns started a minute, 4 streams open at once.
 *
 * @since 0.3.0
 * @category constants
 */
export const threadDefaults = {
  threadTurnsPerMinute: 20,
  maxStreamsPerThreadToken: 4
} as const

/**
 * The default shutdown budget (`shutdownTimeoutMs`): 8 s, inside the 10 s a container
 * runtime gives a process between SIGTERM and SIGKILL (Docker's default stop timeout).
 *
 * @since 0.3.0
 * @category constants
 */
export const shutdownTimeoutDefault = 8_000

/**
 * How long `sluice serve` lets a reader wait for a turn not written yet
 * (`awaitTurnMs`, its `--await-turn-ms`): 10 s. The library's own default is 0 (a
 * reader of an unknown turn is told at once), as before 0.4.0.
 *
 * @since 0.3.0
 * @category constants
 */
export const awaitTurnDefault = 10_000

/**
 * The options, with their defaults:
 *
 * - `port` (8787): the TCP port; 0 picks a free one.
 * - `host`: the address to bind; every interface by default, `127.0.0.1` with
 *   `insecureLocal`.
 * - `prefix` (`codex`): the Redis key prefix the publisher wrote with.
 * - `tokens`: the accepted bearer tokens; `SLUICE_API_TOKENS` when absent.
 * - `insecureLocal` (false): serve without tokens, on loopback only.
 * - `maxStreamsPerToken` (16): the streams one token holds open at once: SSE streams of
 *   turns, UI message streams, and live Durable Streams reads (`live=long-poll`,
 *   `live=sse`); more get 429. Each page token (each link) counts its own
 *   (docs/http.md#access).
 * - `maxSubscriptionsPerToken` (100): the Durable Streams subscriptions one token may
 *   hold (counted in Redis under a digest of the token, across servers); one more is
 *   429 `TOO_MANY_SUBSCRIPTIONS` (docs/http.md#subscription-limits).
 * - `heartbeatMs` (15000): the interval of `: ping` comments on an SSE stream.
 * - `idleTimeoutMs` (600000): an SSE stream with no entry for this long is closed (the
 *   client resumes with `Last-Event-ID`).
 * - `tailBlockMs` (5000): the longest single blocking read of a live tail.
 * - `resumeAttempts` (5), `resumeBaseMs` (200), `resumeMaxMs` (5000): how a live
 *   tail that failed is resumed from the last entry sent: waits of
 *   `resumeBaseMs * 2^n` capped at `resumeMaxMs`, at most `resumeAttempts` in a row.
 * - `listLimit` (20), `maxListLimit` (100): the default and largest `?limit=` of
 *   `GET /v1/turns`.
 * - `awaitTurnMs` (0): how long an SSE route (`/events`, `/upserts`,
 *   `/ui-message-stream`) waits for a turn's stream to be written before answering
 *   404 `turn_not_found`, for readers that follow a turn as it is started; looked for
 *   every 200 ms, before the response's head (`awaitTurnDefault`, 10 s, is what
 *   `sluice serve` waits). 0 answers at once. The snapshot route never waits.
 * - `leaseCheckMs` (3000): how often a stream following a running turn checks its
 *   producer's lease; a lapsed lease ends the turn with `producer_lost`.
 * - `sweepEveryMs` (5000), `sweepBatch` (1000): how often the server looks at the
 *   newest `sweepBatch` turns of the prefix, read or not, and ends those whose
 *   producer's lease lapsed with `producer_lost` (every server sweeps; a turn is ended
 *   once).
 * - `metricsPort`: also serve `/metrics`, `/healthz` and `/readyz` on this port, on
 *   the same host, without a token (for a scraper on a private network); `/metrics`
 *   on the API port always needs a token. Absent by default; must differ from `port`.
 * - `readyTimeoutMs` (1000): how long `/readyz` waits for Redis to answer.
 * - `readTokens` (none): bearer tokens of the read scope only: they read turns and
 *   durable streams, but neither write durable streams nor cancel turns. The other
 *   tokens have every scope (read, write, control).
 * - `durableLongPollMs` (20000): how long a Durable Streams long-poll waits for data
 *   before it answers 204, and how often a quiet SSE read sends a `control` event.
 * - `maxJsonDepth` (128, `Json.defaultMaxDepth`): how deeply nested the JSON a client
 *   sends to the Durable Streams routes may be; deeper is 400 (docs/http.md#json-nesting).
 *   Since 0.3.0.
 * - `webhookAllowHosts` (none): hosts (`host` or `host:port`) that subscription
 *   webhooks may target whatever they are (a private address, plain `http`). Others
 *   must be `https` to a public host; plain `http` to loopback only with
 *   `insecureLocal`.
 * - `compression` (true): gzip the bodies read whole (a Durable Streams catch-up read,
 *   a turn's snapshot) of 1 KiB or more for a client whose `Accept-Encoding` accepts
 *   it; live bodies (SSE, long-polls) are never compressed.
 * - `maxBodyBytes` (8 MiB): the largest body of a Durable Streams write (`PUT`,
 *   `POST` of a client's stream); a larger one is answered 413 without being read.
 * - `maxSubscriptionBodyBytes` (1 MiB): the largest body of a subscription route
 *   (`__ds/subscriptions/...`: create, link, claim, callback, ack, release); 413 beyond.
 * - `keepAliveTimeoutMs` (65000): how long an idle kept-alive connection stays open
 *   between requests; longer than the idle timeout of the proxies in front (60 s for
 *   most), so that the proxy, not the server, closes an idle connection.
 * - `headersTimeoutMs` (66000): how long a request's headers may take to arrive;
 *   above `keepAliveTimeoutMs`, at most `requestTimeoutMs`.
 * - `requestTimeoutMs` (120000): how long a whole request, headers and body, may take
 *   to arrive (Node's `requestTimeout`); a slower one is answered 408 and closed. At
 *   least `headersTimeoutMs`. A response is never cut by it.
 * - `writeTimeoutMs` (60000): how long a write of a stream (an SSE stream of a turn, a
 *   UI message stream) may wait for its client to take it; a reader that takes no byte
 *   for that long is closed, and resumes with `Last-Event-ID` (docs/http.md#slow-readers).
 * - `shutdownTimeoutMs` (8000, `shutdownTimeoutDefault`): how long the server's close
 *   may take. When it closes, it stops listening, ends its SSE streams (readers resume
 *   elsewhere), asks its `TurnStarter` to end the turns it runs (`shutdown`, at once,
 *   beside the rest) and waits for the answers in flight (a started turn's answer ends
 *   with its turn) at most this long; then it cuts what is left. An application keeps
 *   its starter's turns inside it (`sluice serve` gives half of it to their grace and a
 *   quarter to their `aborted` endings).
 * - `publicUrl`: the server's address as its clients reach it (`https://host[:port]
 *   [/path]`, e.g. a proxy's), the start of every URL the server writes into an answer
 *   (a created stream's `Location`, a webhook's `jwks_url` and `callback_url`). Absent,
 *   the address it listens on (`localhost` for every interface). Never the request's
 *   `Host`.
 * - `threadTurnsPerMinute` (20): the turns one thread token may start in any minute
 *   (`POST /v1/threads/:threadId/turns`); one more is 429 `rate_limited` with
 *   `Retry-After` (docs/threads.md#thread-tokens). Since 0.3.0.
 * - `maxStreamsPerThreadToken` (4): the streams one thread token may hold open at once
 *   (the thread's events, its turns' SSE and UI message streams); more get 429
 *   `too_many_streams`. Since 0.3.0.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TurnServerOptions = Schema.Struct({
  port: withDefault(PortNumber, 8787),
  host: Schema.optionalKey(NonEmptyTrimmedString),
  prefix: withDefault(NonEmptyTrimmedString.check(Schema.isPattern(/^[^\s{}]+$/)), "codex"),
  tokens: Schema.optionalKey(Schema.Array(Token)),
  insecureLocal: withDefault(Schema.Boolean, false),
  maxStreamsPerToken: withDefault(PositiveInt, connectionDefaults.maxStreamsPerToken),
  maxSubscriptionsPerToken: withDefault(PositiveInt, connectionDefaults.maxSubscriptionsPerToken),
  heartbeatMs: withDefault(PositiveInt, 15_000),
  idleTimeoutMs: withDefault(PositiveInt, 600_000),
  tailBlockMs: withDefault(PositiveInt, 5_000),
  resumeAttempts: withDefault(NonNegativeInt, 5),
  resumeBaseMs: withDefault(NonNegativeInt, 200),
  resumeMaxMs: withDefault(NonNegativeInt, 5_000),
  listLimit: withDefault(PositiveInt, 20),
  maxListLimit: withDefault(PositiveInt, 100),
  awaitTurnMs: withDefault(NonNegativeInt, 0),
  leaseCheckMs: withDefault(PositiveInt, 3_000),
  sweepEveryMs: withDefault(PositiveInt, 5_000),
  sweepBatch: withDefault(PositiveInt, 1_000),
  metricsPort: Schema.optionalKey(PortNumber),
  readyTimeoutMs: withDefault(PositiveInt, 1_000),
  readTokens: withDefault(Schema.Array(Token), []),
  durableLongPollMs: withDefault(PositiveInt, 20_000),
  maxJsonDepth: withDefault(PositiveInt, Json.defaultMaxDepth),
  webhookAllowHosts: withDefault(Schema.Array(AllowHost), []),
  compression: withDefault(Schema.Boolean, true),
  maxBodyBytes: withDefault(PositiveInt, connectionDefaults.maxBodyBytes),
  maxSubscriptionBodyBytes: withDefault(PositiveInt, connectionDefaults.maxSubscriptionBodyBytes),
  keepAliveTimeoutMs: withDefault(PositiveInt, connectionDefaults.keepAliveTimeoutMs),
  headersTimeoutMs: withDefault(PositiveInt, connectionDefaults.headersTimeoutMs),
  requestTimeoutMs: withDefault(PositiveInt, connectionDefaults.requestTimeoutMs),
  writeTimeoutMs: withDefault(PositiveInt, connectionDefaults.writeTimeoutMs),
  shutdownTimeoutMs: withDefault(PositiveInt, shutdownTimeoutDefault),
  publicUrl: Schema.optionalKey(NonEmptyTrimmedString),
  threadTurnsPerMinute: withDefault(PositiveInt, threadDefaults.threadTurnsPerMinute),
  maxStreamsPerThreadToken: withDefault(PositiveInt, threadDefaults.maxStreamsPerThreadToken)
}).annotate({ identifier: "TurnServerOptions" })

/**
 * Options as a caller writes them: every field optional.
 *
 * @since 0.1.0
 * @category models
 */
export type Options = typeof TurnServerOptions.Encoded

/**
 * Options with their defaults, the tokens resolved, the host decided and the public
 * URL without a trailing slash.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolvedOptions extends Omit<typeof TurnServerOptions.Type, "tokens" | "host" | "publicUrl"> {
  readonly tokens: ReadonlyArray<string>
  readonly host: string | undefined
  readonly publicUrl: string | undefined
}

// `publicUrl` without its trailing slashes; none when it is not an http(s) URL
// without credentials, query or fragment.
const publicBase = (given: string): string | undefined => {
  if (!URL.canParse(given)) return undefined
  const url = new URL(given)
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") return undefined
  if (given.includes("?") || given.includes("#")) return undefined
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`
}

/**
 * Why the options were refused:
 *
 * - `InvalidOptions`: a field is malformed (the detail names each one).
 * - `MissingTokens`: no token in the options or in `SLUICE_API_TOKENS`, and
 *   `insecureLocal` is not set.
 * - `NotLoopback`: `insecureLocal` with a host that is not a loopback address.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidServerOptions extends Schema.TaggedError<InvalidServerOptions>()("InvalidServerOptions", {
  reason: Schema.Literals(["InvalidOptions", "MissingTokens", "NotLoopback"]),
  detail: Schema.String
}) {
  /**
   * @since 0.1.0
   */
  override get message(): string {
    return `invalid server options: ${this.reason}: ${this.detail}`
  }
}

/**
 * The tokens of `SLUICE_API_TOKENS`: comma-separated, trimmed, empty entries ignored.
 * Absent when the variable is not set.
 *
 * @since 0.1.0
 * @category config
 */
export const tokensConfig: Config.Config<Option.Option<ReadonlyArray<string>>> = Config.option(
  Config.map(
    Config.String("SLUICE_API_TOKENS"),
    (text) => text.split(",").map((token) => token.trim()).filter((token) => token.length > 0)
  )
)

const loopbackPattern = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|localhost|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i

/**
 * Whether a host names the loopback interface.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isLoopback = (host: string): boolean => loopbackPattern.test(host)

const decodeOptions = Schema.decodeUnknownEffect(TurnServerOptions, { errors: "all", onExcessProperty: "error" })
const decodeTokens = Schema.decodeUnknownEffect(Schema.Array(Token), { errors: "all" })

const invalid = (reason: InvalidServerOptions["reason"], detail: string) => new InvalidServerOptions({ reason, detail })

/**
 * Validates the options, applies their defaults and resolves the tokens (the options'
 * own, else `SLUICE_API_TOKENS`). Fails with `InvalidServerOptions` for a malformed
 * field, for a server without tokens that is not `insecureLocal`, and for an
 * `insecureLocal` server on a host that is not loopback.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolve = (
  options: Options = {}
): Effect.Effect<ResolvedOptions, InvalidServerOptions | Config.ConfigError> =>
  Effect.gen(function*() {
    const decoded = yield* Effect.mapError(
      decodeOptions(options),
      (error) => invalid("InvalidOptions", error.message)
    )
    if (decoded.listLimit > decoded.maxListLimit) {
      return yield* invalid(
        "InvalidOptions",
        `listLimit (${decoded.listLimit}) is above maxListLimit (${decoded.maxListLimit})`
      )
    }
    if (decoded.metricsPort !== undefined && decoded.metricsPort !== 0 && decoded.metricsPort === decoded.port) {
      return yield* invalid("InvalidOptions", `metricsPort (${decoded.metricsPort}) is the API port`)
    }
    if (decoded.resumeBaseMs > decoded.resumeMaxMs) {
      return yield* invalid(
        "InvalidOptions",
        `resumeBaseMs (${decoded.resumeBaseMs}) is above resumeMaxMs (${decoded.resumeMaxMs})`
      )
    }
    if (decoded.headersTimeoutMs <= decoded.keepAliveTimeoutMs) {
      return yield* invalid(
        "InvalidOptions",
        `headersTimeoutMs (${decoded.headersTimeoutMs}) must be above keepAliveTimeoutMs (${decoded.keepAliveTimeoutMs})`
      )
    }
    if (decoded.headersTimeoutMs > decoded.requestTimeoutMs) {
      return yield* invalid(
        "InvalidOptions",
        `headersTimeoutMs (${decoded.headersTimeoutMs}) is above requestTimeoutMs (${decoded.requestTimeoutMs})`
      )
    }
    const publicUrl = decoded.publicUrl === undefined ? undefined : publicBase(decoded.publicUrl)
    if (decoded.publicUrl !== undefined && publicUrl === undefined) {
      return yield* invalid(
        "InvalidOptions",
        `publicUrl ${
          JSON.stringify(decoded.publicUrl.slice(0, 128))
        } is not an http(s) URL without credentials, query or fragment`
      )
    }
    const configured = decoded.tokens === undefined ? yield* tokensConfig : Option.some(decoded.tokens)
    const tokens = yield* Effect.mapError(
      decodeTokens(Option.getOrElse(configured, () => [])),
      (error) => invalid("InvalidOptions", `SLUICE_API_TOKENS: ${error.message}`)
    )
    if (tokens.length === 0 && decoded.readTokens.length === 0 && !decoded.insecureLocal) {
      return yield* invalid(
        "MissingTokens",
        "no API token: set SLUICE_API_TOKENS (comma-separated) or serve with insecureLocal on loopback"
      )
    }
    if (decoded.insecureLocal && decoded.host !== undefined && !isLoopback(decoded.host)) {
      return yield* invalid("NotLoopback", `insecureLocal serves on loopback only, not on ${decoded.host}`)
    }
    const host = decoded.insecureLocal ? decoded.host ?? "127.0.0.1" : decoded.host
    return { ...decoded, tokens, host, publicUrl }
  })

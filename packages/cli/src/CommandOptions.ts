/**
 * The options several commands share, defined once. This module stays light: it
 * loads neither the server, nor the Redis client, nor the pipeline, so that
 * `--version`, `--help` and the commands that need none of them start fast.
 *
 * @since 0.1.0
 */
import * as ProviderName from "@sluice/providers/ProviderName"
import * as TurnKeys from "@sluice/turns/TurnKeys"
import * as Argument from "effect/cli/Argument"
import * as Flag from "effect/cli/Flag"
import * as Config from "effect/Config"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as EnvOptions from "./EnvOptions.js"

/**
 * `--provider`, described as the command uses it.
 *
 * @since 0.1.0
 * @category options
 */
export const providerOption = (description: string) =>
  EnvOptions.choice("provider", ProviderName.ProviderName.literals, "SLUICE_PROVIDER", description)

/**
 * The provider option of the commands that read a recorded transcript.
 *
 * @since 0.1.0
 * @category options
 */
export const provider = providerOption("the wire API the input was recorded from")

/**
 * The recorded-input argument shared by the commands that read a transcript.
 *
 * @since 0.1.0
 * @category options
 */
export const file = Argument.String("FILE").pipe(
  Argument.withDescription("a recorded HTTP response body, or - for standard input")
)

const uuidOption = (name: string, description: string) =>
  EnvOptions.optionalText(name, `SLUICE_${name.toUpperCase()}`, description)

/**
 * `--turn UUID`: the turn id (fresh by default).
 *
 * @since 0.1.0
 * @category options
 */
export const turn = uuidOption("turn", "the turn id (a UUID; fresh by default)")

/**
 * `--thread UUID`: the thread id (fresh by default).
 *
 * @since 0.1.0
 * @category options
 */
export const thread = uuidOption("thread", "the thread id (a UUID; fresh by default)")

/**
 * `--prefix`: the Redis key prefix.
 *
 * @since 0.1.0
 * @category options
 */
export const prefix = EnvOptions.text("prefix", "SLUICE_PREFIX", TurnKeys.defaultPrefix, "the Redis key prefix")

/**
 * `--traceparent`: a caller's W3C `traceparent`, carried by every event of the turn
 * (whose spans become its children).
 *
 * @since 0.1.0
 * @category options
 */
export const traceparent = EnvOptions.optionalText(
  "traceparent",
  "SLUICE_TRACEPARENT",
  "a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>) the turn joins: every event carries it, the turn's spans are its children"
)

/**
 * `--tracestate`: the W3C `tracestate` that goes with `--traceparent`.
 *
 * @since 0.1.0
 * @category options
 */
export const tracestate = EnvOptions.optionalText(
  "tracestate",
  "SLUICE_TRACESTATE",
  "the W3C tracestate that goes with --traceparent"
)

/**
 * `--link-ttl-minutes`: how long the printed page link stays valid.
 *
 * @since 0.1.0
 * @category options
 */
export const linkTtlMinutes = EnvOptions.integer(
  "link-ttl-minutes",
  "SLUICE_LINK_TTL_MINUTES",
  60,
  "how long the printed page link is valid, in minutes"
)

/**
 * `--metrics-port N`: also serve `/metrics`, `/healthz` and `/readyz` on this port,
 * without a token.
 *
 * @since 0.1.0
 * @category options
 */
export const metricsPort = EnvOptions.optionalInteger(
  "metrics-port",
  "SLUICE_METRICS_PORT",
  "also serve /metrics, /healthz and /readyz on this port (same host, no token; default: none)"
)

/**
 * `--ready-timeout-ms N`: how long `/readyz` waits for Redis.
 *
 * @since 0.1.0
 * @category options
 */
export const readyTimeoutMs = EnvOptions.integer(
  "ready-timeout-ms",
  "SLUICE_READY_TIMEOUT_MS",
  1000,
  "how long /readyz waits for Redis, in milliseconds"
)

/**
 * `--read-tokens T1,T2`: bearer tokens that only read (turns and durable streams),
 * read as a redacted value (the help shows `--read-tokens token,...`).
 *
 * @since 0.1.0
 * @category options
 */
export const readTokens: Flag.Flag<Option.Option<Redacted.Redacted<string>>> = Flag.Redacted("read-tokens")
  .pipe(
    Flag.withMetavar("token,..."),
    Flag.withFallbackConfig(Config.Redacted("SLUICE_READ_TOKENS")),
    Flag.withDescription(
      "bearer tokens of the read scope only, comma-separated: they read turns and durable streams, never write or cancel (default: none; env SLUICE_READ_TOKENS)"
    ),
    Flag.optional
  )

/**
 * `--no-compression`: never gzip an answer (by default a Durable Streams catch-up read
 * or a snapshot of 1 KiB or more is gzipped for a client that accepts it).
 *
 * @since 0.1.0
 * @category options
 */
export const noCompression = Flag.Boolean("no-compression").pipe(
  Flag.withDefault(false),
  Flag.withDescription(
    "never gzip answers (by default Durable Streams catch-up reads and snapshots of 1 KiB or more are gzipped for clients that accept it)"
  )
)

/**
 * `--webhook-allow-hosts H1,H2`: hosts that Durable Streams subscription webhooks may
 * reach although they are private or loopback, or over plain http.
 *
 * @since 0.1.0
 * @category options
 */
export const webhookAllowHosts = EnvOptions.optionalText(
  "webhook-allow-hosts",
  "SLUICE_WEBHOOK_ALLOW_HOSTS",
  "hosts (host or host:port, comma-separated) that subscription webhooks may reach although private, loopback or plain http (default: none, public https only)"
)

/**
 * The options of the commands that serve the API (`serve`, `demo`).
 *
 * @since 0.1.0
 * @category options
 */
export const server = {
  linkTtlMinutes,
  metricsPort,
  noCompression,
  readyTimeoutMs,
  readTokens,
  webhookAllowHosts,
  redisUrl: EnvOptions.redisUrl
} as const

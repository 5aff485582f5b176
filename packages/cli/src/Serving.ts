/**
 * Starting the turn server for a command: the shared server options (`--metrics-port`,
 * `--ready-timeout-ms`, `--read-tokens`) into the server's, the server's failures as
 * command failures (a taken port said plainly), and the page's address with its signed
 * link. The server also serves Durable Streams from the `DurableStore` in context, and
 * their subscriptions when the context has a `DurableSubscriptions`.
 *
 * @since 0.1.0
 */
import type { DurableStore } from "@sluice/durable-streams"
import type { RedisStreams } from "@sluice/redis"
import { AccessLog, TurnServer, TurnServerOptions } from "@sluice/server"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { badUsage, type CliFailure } from "./CliFailure.js"

/**
 * A running server: the page's address, with a `read` page token valid for the given
 * time in its fragment (none on an insecure-local server).
 *
 * @since 0.1.0
 * @category models
 */
export interface Running {
  readonly pageUrl: (ttl: Duration.Duration) => Effect.Effect<string>
}

/**
 * The shared server options as the command parsed them.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerArgs {
  readonly metricsPort: Option.Option<number>
  readonly readyTimeoutMs: number
  readonly readTokens: Option.Option<Redacted.Redacted<string>>
  readonly noCompression: boolean
  readonly webhookAllowHosts: Option.Option<string>
}

const isAddressInUse = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && "code" in cause && cause.code === "EADDRINUSE"

const portsOf = (options: TurnServerOptions.Options): string =>
  options.metricsPort === undefined
    ? `port ${options.port ?? 8787} is`
    : `port ${options.port ?? 8787} or metrics port ${options.metricsPort} is`

const isToken = Schema.is(TurnServerOptions.Token)
const isAllowHost = Schema.is(TurnServerOptions.AllowHost)

/**
 * The server's options for the shared flags: `--read-tokens` split at commas (each
 * checked, never echoed), `--ready-timeout-ms` positive, `--metrics-port` a port,
 * `--webhook-allow-hosts` split at commas (each a host or host:port),
 * `--no-compression`.
 *
 * @since 0.1.0
 * @category options
 */
export const serverOptions = (args: ServerArgs): Effect.Effect<TurnServerOptions.Options, CliFailure> =>
  Effect.gen(function*() {
    const readTokens = Option.match(args.readTokens, {
      onNone: () => [],
      onSome: (tokens) => Redacted.value(tokens).split(",").map((token) => token.trim()).filter((token) => token !== "")
    })
    const bad = readTokens.findIndex((token) => !isToken(token))
    if (bad >= 0) {
      return yield* Effect.fail(
        badUsage(`--read-tokens: token ${bad + 1} is not visible ASCII without spaces or commas`)
      )
    }
    if (args.readyTimeoutMs < 1) {
      return yield* Effect.fail(badUsage(`--ready-timeout-ms must be a positive integer, got ${args.readyTimeoutMs}`))
    }
    const metricsPort = Option.getOrUndefined(args.metricsPort)
    if (metricsPort !== undefined && (metricsPort < 0 || metricsPort > 65535)) {
      return yield* Effect.fail(badUsage(`--metrics-port must be from 0 to 65535, got ${metricsPort}`))
    }
    const webhookAllowHosts = Option.match(args.webhookAllowHosts, {
      onNone: () => [],
      onSome: (hosts) => hosts.split(",").map((host) => host.trim()).filter((host) => host !== "")
    })
    const badHost = webhookAllowHosts.findIndex((host) => !isAllowHost(host))
    if (badHost >= 0) {
      return yield* Effect.fail(
        badUsage(
          `--webhook-allow-hosts: ${JSON.stringify(webhookAllowHosts[badHost])} is not a host or host:port`
        )
      )
    }
    return {
      readTokens,
      readyTimeoutMs: args.readyTimeoutMs,
      webhookAllowHosts,
      compression: !args.noCompression,
      ...(metricsPort === undefined ? {} : { metricsPort })
    }
  })

/**
 * Starts the server on the `RedisStreams` (and the `DurableStore`) in context for the
 * length of the scope. Bad options are bad usage (exit code 2), and so is a port that
 * is taken, said as such.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (
  options: TurnServerOptions.Options
): Effect.Effect<Running, CliFailure, RedisStreams.RedisStreams | DurableStore.DurableStore | Scope.Scope> =>
  Effect.gen(function*() {
    const context = yield* Layer.build(TurnServer.layer(options).pipe(Layer.provide(AccessLog.layer))).pipe(
      Effect.mapError((error) =>
        error._tag === "ServeError" && isAddressInUse(error.cause)
          ? badUsage(`${portsOf(options)} taken: stop what listens there or pass --port N (another port)`)
          : badUsage(error.message)
      )
    )
    return {
      pageUrl: (ttl) => Effect.provide(TurnServer.pageUrl(Duration.toMillis(ttl)), context)
    }
  })

/**
 * Checks `--link-ttl-minutes`: a positive number of minutes, at most a week.
 *
 * @since 0.1.0
 * @category options
 */
export const linkTtl = (minutes: number): Effect.Effect<Duration.Duration, CliFailure> =>
  minutes >= 1 && minutes <= 7 * 24 * 60
    ? Effect.succeed(Duration.minutes(minutes))
    : Effect.fail(badUsage(`--link-ttl-minutes must be from 1 to ${7 * 24 * 60}, got ${minutes}`))

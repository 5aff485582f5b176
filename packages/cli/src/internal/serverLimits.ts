/**
 * The flags of `sluice serve` and `sluice demo` that bound what one request may cost
 * and set how connections are kept: the SSE streams one token may hold, the body limits of the Durable Streams writes and
 * of the subscription routes, the keep-alive and headers timeouts, and the public URL
 * that answers' URLs start with. Each from its flag, else its variable, else the
 * server's default.
 *
 * @internal
 */
// the options module alone: the command's definition loads no server at start-up
import * as TurnServerOptions from "@sluice/server/TurnServerOptions"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { badUsage, type CliFailure } from "../CliFailure.js"
import * as EnvOptions from "../EnvOptions.js"

/**
 * The flags, spread into the command's options.
 *
 * @internal
 */
export const options = {
  maxStreamsPerToken: EnvOptions.integer(
    "max-streams-per-token",
    "SLUICE_MAX_STREAMS_PER_TOKEN",
    TurnServerOptions.connectionDefaults.maxStreamsPerToken,
    "the most SSE streams one token may hold open at once; more get 429"
  ),
  maxBodyBytes: EnvOptions.integer(
    "max-body-bytes",
    "SLUICE_MAX_BODY_BYTES",
    TurnServerOptions.connectionDefaults.maxBodyBytes,
    "the largest body of a Durable Streams write (PUT, POST), in bytes; larger ones get 413"
  ),
  maxSubscriptionBodyBytes: EnvOptions.integer(
    "max-subscription-body-bytes",
    "SLUICE_MAX_SUBSCRIPTION_BODY_BYTES",
    TurnServerOptions.connectionDefaults.maxSubscriptionBodyBytes,
    "the largest body of a subscription route (/v1/stream/__ds/...), in bytes; larger ones get 413"
  ),
  keepAliveTimeoutMs: EnvOptions.integer(
    "keep-alive-timeout-ms",
    "SLUICE_KEEP_ALIVE_TIMEOUT_MS",
    TurnServerOptions.connectionDefaults.keepAliveTimeoutMs,
    "how long an idle kept-alive connection stays open, in milliseconds (above your proxy's idle timeout)"
  ),
  headersTimeoutMs: EnvOptions.integer(
    "headers-timeout-ms",
    "SLUICE_HEADERS_TIMEOUT_MS",
    TurnServerOptions.connectionDefaults.headersTimeoutMs,
    "how long a request's headers may take to arrive, in milliseconds (above --keep-alive-timeout-ms)"
  ),
  awaitTurnMs: EnvOptions.integer(
    "await-turn-ms",
    "SLUICE_AWAIT_TURN_MS",
    TurnServerOptions.awaitTurnDefault,
    "how long an SSE route waits for a turn not written yet before 404 turn_not_found, in milliseconds (0: at once)"
  ),
  publicUrl: EnvOptions.optionalText(
    "public-url",
    "SLUICE_PUBLIC_URL",
    "the server's address as clients reach it (https://host[/path], e.g. a proxy's): URLs in answers start with it"
  )
} as const

/**
 * The flags as parsed.
 *
 * @internal
 */
export interface Args {
  readonly maxStreamsPerToken: number
  readonly maxBodyBytes: number
  readonly maxSubscriptionBodyBytes: number
  readonly keepAliveTimeoutMs: number
  readonly headersTimeoutMs: number
  readonly awaitTurnMs: number
  readonly publicUrl: Option.Option<string>
}

/**
 * A flag's count, positive (bad usage otherwise, named by its flag).
 *
 * @internal
 */
export const positive = (flag: string, value: number): Effect.Effect<number, CliFailure> =>
  value >= 1 ? Effect.succeed(value) : Effect.fail(badUsage(`--${flag} must be a positive integer, got ${value}`))

/**
 * The server's options of the flags: each count positive (bad usage otherwise, named
 * by its flag); how the timeouts relate and the public URL's form are the server's to
 * check.
 *
 * @internal
 */
export const serverOptions = (args: Args) =>
  Effect.gen(function*() {
    const maxStreamsPerToken = yield* positive("max-streams-per-token", args.maxStreamsPerToken)
    const maxBodyBytes = yield* positive("max-body-bytes", args.maxBodyBytes)
    const maxSubscriptionBodyBytes = yield* positive("max-subscription-body-bytes", args.maxSubscriptionBodyBytes)
    const keepAliveTimeoutMs = yield* positive("keep-alive-timeout-ms", args.keepAliveTimeoutMs)
    const headersTimeoutMs = yield* positive("headers-timeout-ms", args.headersTimeoutMs)
    if (!(Number.isInteger(args.awaitTurnMs) && args.awaitTurnMs >= 0)) {
      return yield* Effect.fail(badUsage(`--await-turn-ms must be a non-negative integer, got ${args.awaitTurnMs}`))
    }
    if (headersTimeoutMs <= keepAliveTimeoutMs) {
      return yield* Effect.fail(
        badUsage(
          `--headers-timeout-ms (${headersTimeoutMs}) must be above --keep-alive-timeout-ms (${keepAliveTimeoutMs})`
        )
      )
    }
    return {
      maxStreamsPerToken,
      maxBodyBytes,
      maxSubscriptionBodyBytes,
      keepAliveTimeoutMs,
      headersTimeoutMs,
      awaitTurnMs: args.awaitTurnMs,
      ...Option.match(args.publicUrl, { onNone: () => ({}), onSome: (publicUrl) => ({ publicUrl }) })
    }
  })

/**
 * The flags of `sluice serve` and `sluice demo` that bound what one request may cost
 * and set how connections are kept: the streams and the subscriptions one token may
 * hold, the body limits of the Durable Streams writes and of the subscription routes,
 * the keep-alive, headers and request timeouts, how long a reader's write may wait for
 * its client, the public URL that answers' URLs start with, and the Durable Streams
 * store's limits (its subscriptions in all, its blocking connections for waits, the
 * depth of forks on forks, and how deeply nested a client's JSON may be). Each from
 * its flag, else its variable, else the server's (or the store's) default.
 *
 * @internal
 */
// the options module alone: the command's definition loads no server at start-up
import * as TurnServerOptions from "@sluice/server/TurnServerOptions"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { badUsage, type CliFailure } from "../CliFailure.js"
import * as EnvOptions from "../EnvOptions.js"
import type * as Publishing from "../Publishing.js"

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
    "the most streams one token (or one page link) may hold open at once: SSE streams of turns, UI message " +
      "streams, live Durable Streams reads; more get 429"
  ),
  maxSubscriptionsPerToken: EnvOptions.integer(
    "max-subscriptions-per-token",
    "SLUICE_MAX_SUBSCRIPTIONS_PER_TOKEN",
    TurnServerOptions.connectionDefaults.maxSubscriptionsPerToken,
    "the most Durable Streams subscriptions one token may hold; one more gets 429 TOO_MANY_SUBSCRIPTIONS"
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
  requestTimeoutMs: EnvOptions.integer(
    "request-timeout-ms",
    "SLUICE_REQUEST_TIMEOUT_MS",
    TurnServerOptions.connectionDefaults.requestTimeoutMs,
    "how long a whole request, headers and body, may take to arrive, in milliseconds (at least " +
      "--headers-timeout-ms); a slower one gets 408 and is closed"
  ),
  writeTimeoutMs: EnvOptions.integer(
    "write-timeout-ms",
    "SLUICE_WRITE_TIMEOUT_MS",
    TurnServerOptions.connectionDefaults.writeTimeoutMs,
    "how long a stream's write may wait for its client, in milliseconds; a reader that takes no byte for " +
      "that long is closed (it resumes with Last-Event-ID)"
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
  ),
  maxSubscriptions: EnvOptions.optionalInteger(
    "max-subscriptions",
    "SLUICE_MAX_SUBSCRIPTIONS",
    "the most Durable Streams subscriptions the store holds in all (10000 by default); one more gets 429 " +
      "TOO_MANY_SUBSCRIPTIONS"
  ),
  waitConnections: EnvOptions.optionalInteger(
    "wait-connections",
    "SLUICE_WAIT_CONNECTIONS",
    "the most blocking Redis connections the Durable Streams waits (long-polls, SSE reads) share (8 by default)"
  ),
  maxForkDepth: EnvOptions.optionalInteger(
    "max-fork-depth",
    "SLUICE_MAX_FORK_DEPTH",
    "how many levels of forks on forks a Durable Stream may have (100 by default); a deeper fork gets 400"
  ),
  maxJsonDepth: EnvOptions.optionalInteger(
    "max-json-depth",
    "SLUICE_MAX_JSON_DEPTH",
    "how many levels deep the JSON a client sends to the Durable Streams routes may nest (128 by default); " +
      "deeper gets 400"
  )
} as const

/**
 * The flags as parsed.
 *
 * @internal
 */
export interface Args {
  readonly maxStreamsPerToken: number
  readonly maxSubscriptionsPerToken: number
  readonly maxBodyBytes: number
  readonly maxSubscriptionBodyBytes: number
  readonly keepAliveTimeoutMs: number
  readonly headersTimeoutMs: number
  readonly requestTimeoutMs: number
  readonly writeTimeoutMs: number
  readonly awaitTurnMs: number
  readonly publicUrl: Option.Option<string>
  readonly maxSubscriptions: Option.Option<number>
  readonly waitConnections: Option.Option<number>
  readonly maxForkDepth: Option.Option<number>
  readonly maxJsonDepth: Option.Option<number>
}

/**
 * A flag's count, positive (bad usage otherwise, named by its flag).
 *
 * @internal
 */
export const positive = (flag: string, value: number): Effect.Effect<number, CliFailure> =>
  value >= 1 ? Effect.succeed(value) : Effect.fail(badUsage(`--${flag} must be a positive integer, got ${value}`))

// A flag given, positive (bad usage otherwise, named by its flag); undefined when not
// given.
const givenPositive = (flag: string, value: Option.Option<number>): Effect.Effect<number | undefined, CliFailure> =>
  Option.match(value, { onNone: () => Effect.undefined, onSome: (n) => positive(flag, n) })

/**
 * The limits of the Durable Streams store (`Publishing.durableStoreLayer`) of the
 * flags, each positive (bad usage otherwise, named by its flag); a flag not given
 * leaves the store's default.
 *
 * @internal
 */
export const durableLimits = (args: Args): Effect.Effect<Publishing.DurableLimits, CliFailure> =>
  Effect.gen(function*() {
    return {
      maxSubscriptions: yield* givenPositive("max-subscriptions", args.maxSubscriptions),
      waitConnections: yield* givenPositive("wait-connections", args.waitConnections),
      maxForkDepth: yield* givenPositive("max-fork-depth", args.maxForkDepth)
    }
  })

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
    const maxSubscriptionsPerToken = yield* positive("max-subscriptions-per-token", args.maxSubscriptionsPerToken)
    const maxBodyBytes = yield* positive("max-body-bytes", args.maxBodyBytes)
    const maxSubscriptionBodyBytes = yield* positive("max-subscription-body-bytes", args.maxSubscriptionBodyBytes)
    const keepAliveTimeoutMs = yield* positive("keep-alive-timeout-ms", args.keepAliveTimeoutMs)
    const headersTimeoutMs = yield* positive("headers-timeout-ms", args.headersTimeoutMs)
    const requestTimeoutMs = yield* positive("request-timeout-ms", args.requestTimeoutMs)
    const writeTimeoutMs = yield* positive("write-timeout-ms", args.writeTimeoutMs)
    const maxJsonDepth = yield* givenPositive("max-json-depth", args.maxJsonDepth)
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
    if (requestTimeoutMs < headersTimeoutMs) {
      return yield* Effect.fail(
        badUsage(
          `--request-timeout-ms (${requestTimeoutMs}) must be at least --headers-timeout-ms (${headersTimeoutMs})`
        )
      )
    }
    return {
      maxStreamsPerToken,
      maxSubscriptionsPerToken,
      maxBodyBytes,
      maxSubscriptionBodyBytes,
      keepAliveTimeoutMs,
      headersTimeoutMs,
      requestTimeoutMs,
      writeTimeoutMs,
      awaitTurnMs: args.awaitTurnMs,
      ...(maxJsonDepth === undefined ? {} : { maxJsonDepth }),
      ...Option.match(args.publicUrl, { onNone: () => ({}), onSome: (publicUrl) => ({ publicUrl }) })
    }
  })

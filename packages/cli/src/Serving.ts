/**
 * Starting the turn server for a command: the server's failures as command failures
 * (a taken port said plainly), and the page's address with its signed link.
 *
 * @since 0.1.0
 */
import type { RedisStreams } from "@sluice/redis"
import { TurnServer, type TurnServerOptions } from "@sluice/server"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { badUsage, type CliFailure } from "./CliFailure.js"
import * as EnvOptions from "./EnvOptions.js"

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

const isAddressInUse = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && "code" in cause && cause.code === "EADDRINUSE"

/**
 * Starts the server on the `RedisStreams` in context for the length of the scope. Bad
 * options are bad usage (exit code 2), and so is a port that is taken, said as such.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (
  options: TurnServerOptions.Options
): Effect.Effect<Running, CliFailure, RedisStreams.RedisStreams | Scope.Scope> =>
  Effect.gen(function* () {
    const context = yield* Layer.build(TurnServer.layer(options)).pipe(
      Effect.mapError((error) =>
        error._tag === "ServeError" && isAddressInUse(error.cause)
          ? badUsage(`port ${options.port ?? 8787} is taken: stop what listens there or pass --port N (another port)`)
          : badUsage(error.message)
      )
    )
    return {
      pageUrl: (ttl) => Effect.provide(TurnServer.pageUrl(Duration.toMillis(ttl)), context)
    }
  })

/**
 * `--link-ttl-minutes`: how long the printed page link stays valid.
 *
 * @since 0.1.0
 * @category options
 */
export const linkTtlOption = EnvOptions.integer(
  "link-ttl-minutes",
  "SLUICE_LINK_TTL_MINUTES",
  60,
  "how long the printed page link is valid, in minutes"
)

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

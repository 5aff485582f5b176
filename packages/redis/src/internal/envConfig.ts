/**
 * The environment variables of the Redis layers, read through Effect `Config`: lists
 * of `host:port`, the credentials of a cluster or Sentinel setup, and TLS.
 *
 * @internal
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import { readFileSync } from "node:fs"
import type { TlsOptions } from "../RedisTls.js"

/** @internal */
export interface HostPort {
  readonly host: string
  readonly port: number
}

/**
 * `host:port` (an IPv6 host in brackets) into its parts, or why not.
 *
 * @internal
 */
export const parseHostPort = (text: string): Either.Either<HostPort, string> => {
  const match = /^(?:\[([^\]]+)\]|([^:\s]+)):(\d{1,5})$/.exec(text.trim())
  const port = match === null ? NaN : Number(match[3])
  if (match === null || !(port > 0 && port < 65536)) return Either.left(`"${text}" is not host:port`)
  return Either.right({ host: match[1] ?? match[2]!, port })
}

/**
 * A comma-separated list of `host:port`, at least one.
 *
 * @internal
 */
export const hostPorts = (name: string): Config.Config<ReadonlyArray<HostPort>> =>
  Config.mapOrFail(Config.string(name), (text) => {
    const parts = text.split(",").map((part) => part.trim()).filter((part) => part !== "")
    if (parts.length === 0) return Either.left(ConfigError.InvalidData([name], "expected host:port,host:port,..."))
    const parsed = Either.all(parts.map(parseHostPort))
    return Either.mapLeft(parsed, (why) => ConfigError.InvalidData([name], `${why} (expected host:port,host:port,...)`))
  })

/**
 * `REDIS_USERNAME` and `REDIS_PASSWORD`, for the setups whose addresses are not URLs.
 *
 * @internal
 */
export const credentials: Config.Config<{
  readonly username: string | undefined
  readonly password: Redacted.Redacted<string> | undefined
}> = Config.all({
  username: Config.option(Config.string("REDIS_USERNAME")),
  password: Config.option(Config.redacted("REDIS_PASSWORD"))
}).pipe(Config.map(({ password, username }) => ({
  username: Option.getOrUndefined(username),
  password: Option.getOrUndefined(password)
})))

const readCa = (path: string): Either.Either<string, ConfigError.ConfigError> => {
  try {
    return Either.right(readFileSync(path, "utf8"))
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    return Either.left(ConfigError.InvalidData(["REDIS_TLS_CA"], `cannot read the CA file: ${why}`))
  }
}

/**
 * The TLS settings: `REDIS_TLS_CA` (a PEM file, read now), `REDIS_TLS_SERVERNAME`,
 * `REDIS_TLS_REJECT_UNAUTHORIZED` (default `true`).
 *
 * @internal
 */
export const tls: Config.Config<TlsOptions> = Config.all({
  ca: Config.option(Config.mapOrFail(Config.string("REDIS_TLS_CA"), readCa)),
  servername: Config.option(Config.string("REDIS_TLS_SERVERNAME")),
  rejectUnauthorized: Config.boolean("REDIS_TLS_REJECT_UNAUTHORIZED").pipe(Config.withDefault(true))
}).pipe(Config.map(({ ca, rejectUnauthorized, servername }) => ({
  ca: Option.getOrUndefined(ca),
  servername: Option.getOrUndefined(servername),
  rejectUnauthorized
})))

/**
 * `REDIS_TLS` (default `false`): TLS for the setups whose addresses are not URLs.
 *
 * @internal
 */
export const tlsEnabled: Config.Config<boolean> = Config.boolean("REDIS_TLS").pipe(Config.withDefault(false))

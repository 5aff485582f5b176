/**
 * The environment variables of the Redis layers, read through Effect `Config`: lists
 * of `host:port`, the credentials of a cluster or Sentinel setup, and TLS.
 *
 * @internal
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { readFileSync } from "node:fs"
import type { TlsOptions } from "../RedisTls.js"

/**
 * A `ConfigError` for a value that was read but is not valid: `message` says why, at
 * the variable named by `path` (none for a rule that spans variables).
 *
 * @internal
 */
export const invalidData = (path: ReadonlyArray<string>, message: string): Config.ConfigError => {
  const issue = new SchemaIssue.InvalidValue({ message })
  return new Config.ConfigError(new Schema.SchemaError(path.length > 0 ? new SchemaIssue.Pointer(path, issue) : issue))
}

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
export const parseHostPort = (text: string): Result.Result<HostPort, string> => {
  const match = /^(?:\[([^\]]+)\]|([^:\s]+)):(\d{1,5})$/.exec(text.trim())
  const port = match === null ? NaN : Number(match[3])
  if (match === null || !(port > 0 && port < 65536)) return Result.fail(`"${text}" is not host:port`)
  return Result.succeed({ host: match[1] ?? match[2]!, port })
}

/**
 * A comma-separated list of `host:port`, at least one.
 *
 * @internal
 */
export const hostPorts = (name: string): Config.Config<ReadonlyArray<HostPort>> =>
  Config.mapEffect(Config.String(name), (text) => {
    const parts = text.split(",").map((part) => part.trim()).filter((part) => part !== "")
    if (parts.length === 0) return Effect.fail(invalidData([name], "expected host:port,host:port,..."))
    const parsed = Result.all(parts.map(parseHostPort))
    return Effect.fromResult(
      Result.mapError(parsed, (why) => invalidData([name], `${why} (expected host:port,host:port,...)`))
    )
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
  username: Config.option(Config.String("REDIS_USERNAME")),
  password: Config.option(Config.Redacted("REDIS_PASSWORD"))
}).pipe(Config.map(({ password, username }) => ({
  username: Option.getOrUndefined(username),
  password: Option.getOrUndefined(password)
})))

const readCa = (path: string): Effect.Effect<string, Config.ConfigError> =>
  Effect.try({
    try: () => readFileSync(path, "utf8"),
    catch: (error) => {
      const why = error instanceof Error ? error.message : String(error)
      return invalidData(["REDIS_TLS_CA"], `cannot read the CA file: ${why}`)
    }
  })

/**
 * The TLS settings: `REDIS_TLS_CA` (a PEM file, read now), `REDIS_TLS_SERVERNAME`,
 * `REDIS_TLS_REJECT_UNAUTHORIZED` (default `true`).
 *
 * @internal
 */
export const tls: Config.Config<TlsOptions> = Config.all({
  ca: Config.option(Config.mapEffect(Config.String("REDIS_TLS_CA"), readCa)),
  servername: Config.option(Config.String("REDIS_TLS_SERVERNAME")),
  rejectUnauthorized: Config.Boolean("REDIS_TLS_REJECT_UNAUTHORIZED").pipe(Config.withDefault(true))
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
export const tlsEnabled: Config.Config<boolean> = Config.Boolean("REDIS_TLS").pipe(Config.withDefault(false))

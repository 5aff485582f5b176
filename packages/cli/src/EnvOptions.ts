/**
 * Options that can also come from the environment: the flag when given, else the
 * variable, else the default. Each describes itself once, with its variable and its
 * default, as the help shows it.
 *
 * @since 0.1.0
 */
import * as Flag from "effect/cli/Flag"
import * as Config from "effect/Config"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import { register } from "./internal/envVariables.js"

const describe = (description: string, env: string, fallback?: string): string =>
  `${description} (${fallback === undefined ? "" : `default ${fallback}; `}env ${env})`

const fromEnv = <A>(
  flag: Flag.Flag<A>,
  description: string,
  config: Config.Config<A>,
  env: string,
  fallback?: string
): Flag.Flag<A> =>
  flag.pipe(Flag.withFallbackConfig(config), Flag.withDescription(describe(description, env, fallback)))

/**
 * `--name N`, else the integer in `env`, else `fallback`.
 *
 * @since 0.1.0
 * @category options
 */
export const integer = (name: string, env: string, fallback: number, description: string): Flag.Flag<number> =>
  register(
    fromEnv(Flag.Int(name), description, Config.Int(env), env, String(fallback)).pipe(Flag.withDefault(fallback)),
    env
  )

/**
 * `--name N`, else the integer in `env`, else none.
 *
 * @since 0.1.0
 * @category options
 */
export const optionalInteger = (
  name: string,
  env: string,
  description: string
): Flag.Flag<Option.Option<number>> =>
  register(fromEnv(Flag.Int(name), description, Config.Int(env), env).pipe(Flag.optional), env)

/**
 * `--name TEXT`, else `env`, else `fallback`.
 *
 * @since 0.1.0
 * @category options
 */
export const text = (name: string, env: string, fallback: string, description: string): Flag.Flag<string> =>
  register(
    fromEnv(Flag.String(name), description, Config.String(env), env, fallback).pipe(Flag.withDefault(fallback)),
    env
  )

/**
 * `--name TEXT`, else `env`, else none.
 *
 * @since 0.1.0
 * @category options
 */
export const optionalText = (name: string, env: string, description: string): Flag.Flag<Option.Option<string>> =>
  register(fromEnv(Flag.String(name), description, Config.String(env), env).pipe(Flag.optional), env)

/**
 * `--name TEXT`, else `env`: required.
 *
 * @since 0.1.0
 * @category options
 */
export const requiredText = (name: string, env: string, description: string): Flag.Flag<string> =>
  register(fromEnv(Flag.String(name), description, Config.String(env), env), env)

/**
 * `--name C` for one of `choices`, else `env`; required unless `fallback` is given.
 *
 * @since 0.1.0
 * @category options
 */
export const choice = <const C extends ReadonlyArray<string>>(
  name: string,
  choices: C,
  env: string,
  description: string
): Flag.Flag<C[number]> =>
  register(fromEnv(Flag.Literals(name, choices), description, Config.Literals(choices, env), env), env)

/**
 * `--name C` for one of `choices`, else `env`, else `fallback`.
 *
 * @since 0.1.0
 * @category options
 */
export const choiceOr = <const C extends ReadonlyArray<string>>(
  name: string,
  choices: C,
  env: string,
  fallback: C[number],
  description: string
): Flag.Flag<C[number]> =>
  register(
    fromEnv(Flag.Literals(name, choices), description, Config.Literals(choices, env), env, fallback).pipe(
      Flag.withDefault(fallback)
    ),
    env
  )

/**
 * `--redis-url URL`, else `SLUICE_REDIS_URL`, else `REDIS_URL`, else none (the
 * embedded store); read as a redacted value, since a URL may carry a password (the
 * help shows `--redis-url url`).
 *
 * @since 0.1.0
 * @category options
 */
export const redisUrl: Flag.Flag<Option.Option<Redacted.Redacted<string>>> = Flag.Redacted("redis-url").pipe(
  Flag.withMetavar("url"),
  Flag.withFallbackConfig(
    Config.Redacted("SLUICE_REDIS_URL").pipe(Config.orElse(() => Config.Redacted("REDIS_URL")))
  ),
  Flag.withDescription(
    "Redis to publish to or read from (default: the embedded in-memory store; env SLUICE_REDIS_URL, else REDIS_URL)"
  ),
  Flag.optional
)

/**
 * Options that can also come from the environment: the flag when given, else the
 * variable, else the default. Each describes itself once, with its variable and its
 * default, as the help shows it.
 *
 * @since 0.2.0
 */
import { Options } from "@effect/cli"
import * as Config from "effect/Config"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"

const describe = (description: string, env: string, fallback?: string): string =>
  `${description} (${fallback === undefined ? "" : `default ${fallback}; `}env ${env})`

const fromEnv = <A>(
  options: Options.Options<A>,
  description: string,
  config: Config.Config<A>,
  env: string,
  fallback?: string
) => options.pipe(Options.withFallbackConfig(config), Options.withDescription(describe(description, env, fallback)))

/**
 * `--name N`, else the integer in `env`, else `fallback`.
 *
 * @since 0.2.0
 * @category options
 */
export const integer = (name: string, env: string, fallback: number, description: string): Options.Options<number> =>
  fromEnv(Options.integer(name), description, Config.integer(env), env, String(fallback)).pipe(
    Options.withDefault(fallback)
  )

/**
 * `--name N`, else the integer in `env`, else none.
 *
 * @since 0.2.0
 * @category options
 */
export const optionalInteger = (
  name: string,
  env: string,
  description: string
): Options.Options<Option.Option<number>> =>
  fromEnv(Options.integer(name), description, Config.integer(env), env).pipe(Options.optional)

/**
 * `--name TEXT`, else `env`, else `fallback`.
 *
 * @since 0.2.0
 * @category options
 */
export const text = (name: string, env: string, fallback: string, description: string): Options.Options<string> =>
  fromEnv(Options.text(name), description, Config.string(env), env, fallback).pipe(Options.withDefault(fallback))

/**
 * `--name TEXT`, else `env`, else none.
 *
 * @since 0.2.0
 * @category options
 */
export const optionalText = (name: string, env: string, description: string): Options.Options<Option.Option<string>> =>
  fromEnv(Options.text(name), description, Config.string(env), env).pipe(Options.optional)

/**
 * `--name TEXT`, else `env`: required.
 *
 * @since 0.2.0
 * @category options
 */
export const requiredText = (name: string, env: string, description: string): Options.Options<string> =>
  fromEnv(Options.text(name), description, Config.string(env), env)

/**
 * `--name C` for one of `choices`, else `env`; required unless `fallback` is given.
 *
 * @since 0.2.0
 * @category options
 */
export const choice = <const C extends ReadonlyArray<string>>(
  name: string,
  choices: C,
  env: string,
  description: string
): Options.Options<C[number]> =>
  fromEnv(Options.choice(name, choices), description, Config.literal(...choices)(env), env)

/**
 * `--name C` for one of `choices`, else `env`, else `fallback`.
 *
 * @since 0.2.0
 * @category options
 */
export const choiceOr = <const C extends ReadonlyArray<string>>(
  name: string,
  choices: C,
  env: string,
  fallback: C[number],
  description: string
): Options.Options<C[number]> =>
  fromEnv(Options.choice(name, choices), description, Config.literal(...choices)(env), env, fallback).pipe(
    Options.withDefault(fallback)
  )

/**
 * `--redis-url URL`, else `SLUICE_REDIS_URL`, else `REDIS_URL`, else none (the
 * embedded store); read as a redacted value, since a URL may carry a password.
 *
 * @since 0.2.0
 * @category options
 */
export const redisUrl: Options.Options<Option.Option<Redacted.Redacted<string>>> = Options.redacted("redis-url").pipe(
  Options.withFallbackConfig(
    Config.redacted("SLUICE_REDIS_URL").pipe(Config.orElse(() => Config.redacted("REDIS_URL")))
  ),
  Options.withDescription(
    "Redis to publish to or read from (default: the embedded in-memory store; env SLUICE_REDIS_URL, else REDIS_URL)"
  ),
  Options.optional
)

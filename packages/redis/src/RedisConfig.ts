/**
 * Which Redis the environment names, and the `RedisStreams` layer for it: a cluster
 * (`REDIS_CLUSTER_NODES`), a master found through Sentinel (`REDIS_SENTINELS` and
 * `REDIS_SENTINEL_NAME`), or one server (`REDIS_URL`). With none of them set there
 * is no Redis to use, and the caller picks its own store (the command line's
 * embedded one).
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as EnvConfig from "./internal/envConfig.js"
import type { RedisError } from "./RedisError.js"
import type { RedisStreams } from "./RedisStreams.js"
import * as RedisStreamsCluster from "./RedisStreamsCluster.js"
import * as RedisStreamsLive from "./RedisStreamsLive.js"

/**
 * The Redis setup the environment names.
 *
 * @since 0.1.0
 * @category models
 */
export type Target =
  | { readonly _tag: "Cluster"; readonly options: RedisStreamsCluster.ClusterOptions }
  | { readonly _tag: "Sentinel"; readonly options: RedisStreamsLive.LiveOptions }
  | { readonly _tag: "Single"; readonly options: RedisStreamsLive.LiveOptions }

const names = ["REDIS_CLUSTER_NODES", "REDIS_SENTINELS", "REDIS_URL"] as const

const present = (name: string): Config.Config<boolean> =>
  Config.map(Config.option(Config.String(name)), (value) => Option.isSome(value) && value.value.trim() !== "")

const sentinel: Config.Config<RedisStreamsLive.LiveOptions> = Config.all({
  sentinels: EnvConfig.hostPorts("REDIS_SENTINELS"),
  name: Config.NonEmptyString("REDIS_SENTINEL_NAME"),
  sentinelPassword: Config.option(Config.Redacted("REDIS_SENTINEL_PASSWORD")),
  credentials: EnvConfig.credentials,
  secure: EnvConfig.tlsEnabled,
  tls: EnvConfig.tls
}).pipe(Config.map(({ credentials, name, secure, sentinelPassword, sentinels, tls }) => {
  const auth = credentials.password === undefined
    ? ""
    : `${encodeURIComponent(credentials.username ?? "")}:${encodeURIComponent(Redacted.value(credentials.password))}@`
  return {
    // Sentinel names the master: the URL carries only the scheme and credentials.
    url: `${secure ? "rediss" : "redis"}://${auth}sentinel-master`,
    tls,
    sentinel: { sentinels, name, password: Option.getOrUndefined(sentinelPassword) }
  }
}))

const single: Config.Config<RedisStreamsLive.LiveOptions> = Config.all({
  url: Config.NonEmptyString("REDIS_URL"),
  tls: EnvConfig.tls
})

/**
 * The setup from the environment, if it names one. Setting more than one of
 * `REDIS_CLUSTER_NODES`, `REDIS_SENTINELS` and `REDIS_URL` is an error that names
 * them.
 *
 * @since 0.1.0
 * @category config
 */
export const target: Effect.Effect<Option.Option<Target>, Config.ConfigError> = Effect.gen(function*() {
  const set = (yield* Effect.all([
    present("REDIS_CLUSTER_NODES"),
    present("REDIS_SENTINELS"),
    present("REDIS_URL")
  ])).flatMap((isSet, i) => isSet ? [names[i]!] : [])
  if (set.length > 1) return yield* Effect.fail(EnvConfig.invalidData([], `set only one of ${set.join(", ")}`))
  switch (set[0]) {
    case "REDIS_CLUSTER_NODES":
      return Option.some<Target>({ _tag: "Cluster", options: yield* RedisStreamsCluster.config })
    case "REDIS_SENTINELS":
      return Option.some<Target>({ _tag: "Sentinel", options: yield* sentinel })
    case "REDIS_URL":
      return Option.some<Target>({ _tag: "Single", options: yield* single })
    default:
      return Option.none()
  }
})

/**
 * The layer for a setup.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (target: Target): Layer.Layer<RedisStreams, RedisError> =>
  target._tag === "Cluster" ? RedisStreamsCluster.layer(target.options) : RedisStreamsLive.layer(target.options)

/**
 * The layer the environment (`Config`) names, if it names one: what the command line
 * and the server use to choose their store. Not a layer itself: with none of the
 * variables set there is no Redis to use, and the caller picks its own store.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerConfig: Effect.Effect<
  Option.Option<Layer.Layer<RedisStreams, RedisError>>,
  Config.ConfigError
> = Effect.map(target, Option.map(layer))

/**
 * Where a setup points, for messages: never a password.
 *
 * @since 0.1.0
 * @category utils
 */
export const describe = (target: Target): string => {
  switch (target._tag) {
    case "Cluster":
      return `the Redis Cluster at ${target.options.nodes.map(({ host, port }) => `${host}:${port}`).join(",")}`
    case "Sentinel": {
      const sentinels = target.options.sentinel?.sentinels ?? []
      return `the Redis master "${target.options.sentinel?.name ?? ""}" of the Sentinels at ${
        sentinels.map(({ host, port }) => `${host}:${port}`).join(",")
      }`
    }
    case "Single": {
      const url = URL.canParse(target.options.url) ? new URL(target.options.url) : undefined
      if (url === undefined) return `Redis at ${target.options.url}`
      url.password = url.password === "" ? "" : "***"
      return `Redis at ${url.toString()}`
    }
  }
}

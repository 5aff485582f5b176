/**
 * `RedisStreams` on a Redis Cluster, through ioredis's `Cluster` client. Keys keep
 * their layout: a turn's keys share the `{turnId}` hash tag, so every command of a
 * turn goes to one slot, one shard.
 *
 * - Commands (ranges, expiry, the index of turns, the lease) go through the cluster
 *   client, which follows the slot map and its `MOVED` / `ASK` redirections.
 * - Batch writes (`xaddAll`, the publisher's write path) go, by default, through one
 *   batch connection per master, chosen by the key's slot from the client's slot
 *   map: the same RESP connection as the single-node layer. A pipeline answered with
 *   `MOVED` / `ASK` (the slot moved while the map was old) is not executed; the map
 *   is refreshed and the entries from the first redirected one are sent again through
 *   the cluster client's own pipeline, which follows the redirection. `writePath:
 *   "pipeline"` sends every batch that way instead.
 * - A tail opens one plain connection to the master of its key's slot for its
 *   blocking reads. When the slot moves, its reads fail with `Unavailable` and the
 *   map is refreshed; a resuming reader opens its next tail on the new master.
 *
 * The single-node rules hold: no client-side queue, nothing resent by the client
 * after a lost connection. While a slot has no master (it failed, and no replica took
 * over yet) its commands fail with `Unavailable` and the publisher's retries carry
 * the turn through; `CLUSTERDOWN` replies are `Unavailable` too.
 *
 * @since 0.1.0
 */
import calculateSlot from "cluster-key-slot"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import { Cluster } from "ioredis"
import * as BatchConnection from "./internal/batchConnection.js"
import * as EnvConfig from "./internal/envConfig.js"
import { pipelineXaddAll } from "./internal/pipelineXadd.js"
import { toRedisError } from "./internal/replies.js"
import { RedisError } from "./RedisError.js"
import type { RedisStreamsService } from "./RedisStreams.js"
import { RedisStreams } from "./RedisStreams.js"
import * as RedisStreamsLive from "./RedisStreamsLive.js"
import { type TlsOptions, toConnectionOptions } from "./RedisTls.js"

/**
 * How to reach the cluster.
 *
 * - `nodes`: some of its nodes (any one that answers gives the whole slot map);
 * - `username`, `password`: the nodes' credentials;
 * - `tls`: connect to every node over TLS with these settings;
 * - `writePath`: `batch` (default) or `pipeline`, see the module's description;
 * - `commandTimeoutMs`, `connectTimeoutMs`, `reconnectMaxDelayMs`: as the single-node
 *   layer's (5000, 5000, 2000).
 *
 * @since 0.1.0
 * @category models
 */
export interface ClusterOptions {
  readonly nodes: ReadonlyArray<{ readonly host: string; readonly port: number }>
  readonly username?: string | undefined
  readonly password?: Redacted.Redacted<string> | undefined
  readonly tls?: TlsOptions | undefined
  readonly writePath?: "batch" | "pipeline" | undefined
  readonly commandTimeoutMs?: number | undefined
  readonly connectTimeoutMs?: number | undefined
  readonly reconnectMaxDelayMs?: number | undefined
}

/**
 * The options from configuration: `REDIS_CLUSTER_NODES` (`host:port,host:port`),
 * `REDIS_USERNAME`, `REDIS_PASSWORD`, and with `REDIS_TLS=true` TLS to every node
 * (`REDIS_TLS_CA`, `REDIS_TLS_SERVERNAME`, `REDIS_TLS_REJECT_UNAUTHORIZED`).
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<ClusterOptions> = Config.all({
  nodes: EnvConfig.hostPorts("REDIS_CLUSTER_NODES"),
  credentials: EnvConfig.credentials,
  secure: EnvConfig.tlsEnabled,
  tls: EnvConfig.tls
}).pipe(Config.map(({ credentials, nodes, secure, tls }) => ({
  nodes,
  username: credentials.username,
  password: credentials.password,
  tls: secure ? tls : undefined
})))

const redirection = /^(MOVED|ASK) /

// The URL of one node, for the connections opened to it alone.
const nodeUrl = (options: ClusterOptions, node: string): string => {
  const at = node.lastIndexOf(":")
  const host = node.slice(0, at)
  const auth = options.password === undefined
    ? ""
    : `${encodeURIComponent(options.username ?? "")}:${encodeURIComponent(Redacted.value(options.password))}@`
  return `${options.tls === undefined ? "redis" : "rediss"}://${auth}${host.includes(":") ? `[${host}]` : host}${
    node.slice(at)
  }`
}

const openCluster = (options: ClusterOptions): Effect.Effect<Cluster, RedisError, Scope.Scope> => {
  const connectTimeoutMs = options.connectTimeoutMs ?? 5000
  const reconnectMax = options.reconnectMaxDelayMs ?? 2000
  return Effect.acquireRelease(
    Effect.suspend(() => {
      const cluster = new Cluster(options.nodes.map(({ host, port }) => ({ host, port })), {
        lazyConnect: true,
        enableOfflineQueue: false,
        enableAutoPipelining: true,
        // Only replies that say the command did not run are followed (MOVED, ASK);
        // a closed connection or CLUSTERDOWN reaches the caller as `Unavailable`.
        retryDelayOnFailover: 0,
        retryDelayOnClusterDown: 0,
        retryDelayOnTryAgain: 0,
        clusterRetryStrategy: (times) => Math.min(times * 50, reconnectMax),
        slotsRefreshTimeout: connectTimeoutMs,
        redisOptions: {
          ...(options.username === undefined ? {} : { username: options.username }),
          ...(options.password === undefined ? {} : { password: Redacted.value(options.password) }),
          ...(options.tls === undefined ? {} : { tls: toConnectionOptions(options.tls) }),
          connectTimeout: connectTimeoutMs,
          commandTimeout: options.commandTimeoutMs ?? 5000,
          maxRetriesPerRequest: 0,
          autoResendUnfulfilledCommands: false,
          connectionName: "sluice",
          // RESP2, which the batch writer's own reader speaks (ioredis 6 asks for RESP3 by default)
          protocol: 2
        }
      })
      // Failures reach callers through their commands.
      cluster.on("error", () => {})
      cluster.on("node error", () => {})
      return Effect.tryPromise({
        // The client opens a node's connection with its first command and, without a
        // queue, refuses the commands that come while it opens: every node's
        // connection is opened here, before the first command.
        try: () =>
          cluster.connect().then(() =>
            Promise.all(cluster.nodes("all").map((node) => node.status === "wait" ? node.connect() : undefined))
          ),
        catch: (cause) => toRedisError("CONNECT", undefined, cause)
      }).pipe(
        // Acquiring is uninterruptible; the wait for the cluster must not be.
        Effect.interruptible,
        Effect.timeoutOrElse({
          duration: connectTimeoutMs,
          orElse: () =>
            Effect.fail(
              new RedisError({
                reason: "Unavailable",
                command: "CONNECT",
                detail: `no cluster within ${connectTimeoutMs} ms`
              })
            )
        }),
        Effect.tapError(() => Effect.sync(() => cluster.disconnect())),
        Effect.as(cluster)
      )
    }),
    (cluster) => Effect.sync(() => cluster.disconnect())
  )
}

/**
 * Connects to the cluster and builds the service; every connection closes with the
 * scope. Fails with an `Unavailable` `RedisError` when no node answers.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: ClusterOptions): Effect.Effect<RedisStreamsService, RedisError, Scope.Scope> =>
  Effect.gen(function*() {
    if (options.nodes.length === 0) {
      return yield* new RedisError({ reason: "Rejected", command: "CONNECT", detail: "no cluster nodes given" })
    }
    const cluster = yield* openCluster(options)
    const scope = yield* Effect.scope
    const timeouts = {
      commandTimeoutMs: options.commandTimeoutMs ?? 5000,
      connectTimeoutMs: options.connectTimeoutMs ?? 5000,
      reconnectMaxDelayMs: options.reconnectMaxDelayMs ?? 2000
    }
    const refresh = () => cluster.refreshSlotsCache(() => {})

    // The master of a key's slot, as `host:port`, from the client's slot map.
    const masterOf = (command: string, key: string): Effect.Effect<string, RedisError> =>
      Effect.suspend(() => {
        const node = cluster.slots[calculateSlot(key)]?.[0]
        if (node !== undefined) return Effect.succeed(node)
        refresh()
        return Effect.fail(
          new RedisError({
            reason: "Unavailable",
            command,
            key,
            detail: `no master known for slot ${calculateSlot(key)}`
          })
        )
      })

    const pipelined = pipelineXaddAll(cluster)
    const batchesByNode = new Map<string, BatchConnection.BatchConnection>()
    const batchesOf = (node: string): Effect.Effect<BatchConnection.BatchConnection, RedisError> =>
      Effect.suspend(() => {
        const known = batchesByNode.get(node)
        if (known !== undefined) return Effect.succeed(known)
        return Scope.provide(
          BatchConnection.make({ url: nodeUrl(options, node), ...timeouts, tls: options.tls }),
          scope
        ).pipe(
          Effect.mapError((error) =>
            new RedisError({ reason: error.reason, command: "CONNECT", detail: error.detail })
          ),
          Effect.map((made) => {
            const raced = batchesByNode.get(node)
            if (raced !== undefined) return raced
            batchesByNode.set(node, made)
            return made
          })
        )
      })

    const batchXaddAll: RedisStreamsService["xaddAll"] = (key, entries, xaddOptions) =>
      Effect.gen(function*() {
        const node = yield* masterOf("XADD", key)
        const results = yield* RedisStreamsLive.batchXaddAll(yield* batchesOf(node))(key, entries, xaddOptions).pipe(
          Effect.tapError((error) => Effect.sync(() => error.reason === "Unavailable" && refresh()))
        )
        const first = results.findIndex((result) => Result.isFailure(result) && redirection.test(result.failure.detail))
        if (first < 0) return results
        // The slot moved: nothing from `first` on ran there. The cluster client
        // sends those entries again and follows the redirection.
        refresh()
        const again = yield* Effect.result(pipelined(key, entries.slice(first), xaddOptions))
        return Result.match(again, {
          onFailure: (error) => [...results.slice(0, first), ...entries.slice(first).map(() => Result.fail(error))],
          onSuccess: (rest) => [...results.slice(0, first), ...rest]
        })
      })

    // A tail reads from the master of its slot over a connection of its own.
    const openTail = (key: string) =>
      Effect.gen(function*() {
        const node = yield* masterOf("XREAD", key)
        const reader = yield* RedisStreamsLive.openClient({
          url: nodeUrl(options, node),
          ...timeouts,
          tls: options.tls
        }, "tail")
        const call = (command: string, ...args: Array<string | number>): Promise<unknown> =>
          reader.call(command, ...args).catch((error: unknown) => {
            if (error instanceof Error && redirection.test(error.message)) {
              refresh()
              // Not a reply of this command: the slot is served elsewhere now.
              throw new Error(`slot moved: ${error.message}`)
            }
            throw error
          })
        return { call }
      })

    return RedisStreamsLive.fromConnections({
      client: cluster,
      openTail,
      xaddAll: options.writePath === "pipeline" ? pipelined : batchXaddAll
    })
  })

/**
 * The cluster layer from the given options; `layerConfig` reads them from `Config`.
 * (Up to 0.2.0 this was `layerFrom`, and `layer` read `Config` as `layerConfig` does now.)
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: ClusterOptions): Layer.Layer<RedisStreams, RedisError> =>
  Layer.effect(RedisStreams, make(options))

/**
 * The cluster layer with its options read from `Config`: by default `config`
 * (`REDIS_CLUSTER_NODES` and the variables it lists), or a `Config` (or a record of
 * `Config`s) of the options.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerConfig = (
  options: Config.Wrap<ClusterOptions> = config
): Layer.Layer<RedisStreams, RedisError | Config.ConfigError> =>
  Layer.effect(RedisStreams, Effect.flatMap(Config.unwrap(options), make))

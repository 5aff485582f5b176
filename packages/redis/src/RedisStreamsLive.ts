/**
 * `RedisStreams` on ioredis. One connection carries the small commands (pipelined
 * automatically), a second one the range reads (`XRANGE`, `XREVRANGE`), whose replies
 * can be large, so that a snapshot being read never holds up a list or an expiry
 * behind it; each tail opens a connection of its own for its blocking reads and
 * closes it when it ends, and the publisher's batches have their own.
 *
 * A command never waits in a client-side queue: while the connection is down every
 * command fails at once with an `Unavailable` error, and a command that was sent but
 * not answered fails when the connection drops or after `commandTimeoutMs`. Callers
 * decide whether to retry (the turn publisher does, with docs/upserts.md's policy); the
 * client is never allowed to resend a command by itself, so nothing is written twice
 * behind the caller's back.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Redis } from "ioredis"
import * as BatchConnection from "./internal/batchConnection.js"
import { connect } from "./internal/connection.js"
import { pipelineXaddAll } from "./internal/pipelineXadd.js"
import {
  decodeReply,
  FlatReply,
  IntegerReply,
  RangeReply,
  ReadReply,
  StringReply,
  toEntry,
  toRedisError,
  unexpectedReply
} from "./internal/replies.js"
import { ErrorReply } from "./internal/resp.js"
import * as ReadBudget from "./ReadBudget.js"
import { reasonOfReply, RedisError } from "./RedisError.js"
import type { RedisStreamsService, XAddEntry, XAddOptions } from "./RedisStreams.js"
import { RedisStreams, tailDefaults } from "./RedisStreams.js"
import { type TlsOptions, toConnectionOptions } from "./RedisTls.js"
import { fieldsToFlat } from "./StreamEntry.js"

/**
 * How to reach Redis.
 *
 * - `url`: `redis://[user:password@]host:port[/db]` (or `rediss://` for TLS).
 * - `tls`: the CA, server name and verification of a `rediss://` connection.
 * - `sentinel`: reach the master through Sentinel (the URL then gives only the
 *   credentials, the database and `rediss://`; its host is not used).
 * - `commandTimeoutMs`: how long a command waits for its reply (default 5000).
 * - `connectTimeoutMs`: how long a connection attempt may take (default 5000).
 * - `reconnectMaxDelayMs`: the longest pause between reconnection attempts after the
 *   connection is lost (default 2000; attempts start at 50 ms and grow by 50 ms).
 *
 * @since 0.1.0
 * @category models
 */
export interface LiveOptions {
  readonly url: string
  readonly tls?: TlsOptions | undefined
  readonly sentinel?: SentinelOptions | undefined
  readonly commandTimeoutMs?: number | undefined
  readonly connectTimeoutMs?: number | undefined
  readonly reconnectMaxDelayMs?: number | undefined
}

/**
 * The Sentinels to ask for the master named `name`, and the Sentinels' own password.
 *
 * @since 0.1.0
 * @category models
 */
export interface SentinelOptions {
  readonly sentinels: ReadonlyArray<{ readonly host: string; readonly port: number }>
  readonly name: string
  readonly password?: Redacted.Redacted<string> | undefined
}

/**
 * The default URL, a local Redis.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultUrl = "redis://127.0.0.1:6379"

/**
 * The options from configuration: `REDIS_URL` (default `redis://127.0.0.1:6379`).
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<LiveOptions> = Config.map(
  Config.String("REDIS_URL").pipe(Config.withDefault(defaultUrl)),
  (url) => ({ url })
)

type Role = "commands" | "reads" | "tail"

const connectionNames: Record<Role, string> = { commands: "sluice", reads: "sluice-read", tail: "sluice-tail" }

/**
 * Opens an ioredis connection (`commands`: auto-pipelined, with a command timeout;
 * `reads`: the same, for range reads of any size, so they never hold up commands;
 * `tail`: for blocking reads), closed with the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const openClient = (options: LiveOptions, role: Role): Effect.Effect<Redis, RedisError, Scope.Scope> => {
  const secure = options.url.startsWith("rediss:")
  const tls = secure ? toConnectionOptions(options.tls ?? {}) : undefined
  const sentinel = options.sentinel
  const reconnectMax = options.reconnectMaxDelayMs ?? 2000
  const connectTimeout = options.connectTimeoutMs ?? 5000
  // Through Sentinel, ioredis keeps asking for a master it is not given: the connect
  // timeout gives up for it.
  return connect(options.url, {
    ...(tls === undefined ? {} : { tls }),
    ...(sentinel === undefined ? {} : {
      sentinels: sentinel.sentinels.map(({ host, port }) => ({ host, port })),
      name: sentinel.name,
      ...(sentinel.password === undefined ? {} : { sentinelPassword: Redacted.value(sentinel.password) }),
      ...(tls === undefined ? {} : { enableTLSForSentinelMode: true, sentinelTLS: tls })
    }),
    enableAutoPipelining: role !== "tail",
    connectTimeout,
    ...(role === "tail" ? {} : { commandTimeout: options.commandTimeoutMs ?? 5000 }),
    retryStrategy: (times) => Math.min(times * 50, reconnectMax),
    connectionName: connectionNames[role]
  }, connectTimeout)
}

const xaddArgs = (key: string, entry: XAddEntry, options: XAddOptions | undefined): Array<string | number> =>
  options?.maxLen === undefined
    ? [key, entry.id, ...fieldsToFlat(entry.fields)]
    : [key, "MAXLEN", "~", options.maxLen, entry.id, ...fieldsToFlat(entry.fields)]

// One result per XADD of a pipeline: its id, the error Redis replied, or `Unavailable`
// for the commands whose replies the lost connection took with it.
const xaddResults = (
  key: string,
  count: number,
  { lost, replies }: BatchConnection.Settled
): Array<Result.Result<string, RedisError>> => {
  const results: Array<Result.Result<string, RedisError>> = new Array(count)
  for (let i = 0; i < count; i++) {
    const reply = replies[i]
    results[i] = typeof reply === "string"
      ? Result.succeed(reply)
      : Result.fail(
        reply instanceof ErrorReply
          ? new RedisError({ reason: reasonOfReply(reply.message), command: "XADD", key, detail: reply.message })
          : reply === undefined
          ? new RedisError({ reason: "Unavailable", command: "XADD", key, detail: lost ?? "no reply" })
          : unexpectedReply("XADD", key, reply)
      )
  }
  return results
}

const scoreBound = (score: number): string => score === Infinity ? "+inf" : score === -Infinity ? "-inf" : String(score)

const asString = decodeReply(StringReply)

// `xaddAfter`: ARGV = after, the entry count, then per entry its id, its field count
// and its fields; nothing is written unless the stream's last entry is `after`.
const appendAfterScript = `
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #top == 0 or top[1][1] ~= ARGV[1] then return 0 end
local i = 3
for n = 1, tonumber(ARGV[2]) do
  local count = tonumber(ARGV[i + 1])
  local args = {}
  for k = 1, count * 2 do args[k] = ARGV[i + 1 + k] end
  redis.call('XADD', KEYS[1], ARGV[i], unpack(args))
  i = i + 2 + count * 2
end
return 1
`
const asOptionalString = decodeReply(Schema.NullOr(StringReply))
const asInteger = decodeReply(IntegerReply)
const asRange = decodeReply(RangeReply)
const asRead = decodeReply(ReadReply)
const asFlat = decodeReply(FlatReply)

/**
 * What a service runs on: a client for every command but the batch writes, a way to
 * open a connection of its own for each tail, and the batch writes themselves. The
 * single-node layer builds them from one URL; `RedisStreamsCluster` from a cluster.
 *
 * @since 0.1.0
 * @category models
 */
export interface Connections {
  readonly client: Caller
  /** Range reads (`XRANGE`, `XREVRANGE`), so a large read never holds up commands; `client` when absent. */
  readonly reader?: Caller | undefined
  readonly openTail: (key: string) => Effect.Effect<Caller, RedisError, Scope.Scope>
  readonly xaddAll: RedisStreamsService["xaddAll"]
}

/**
 * A client that sends one command and resolves with its reply (ioredis's `call`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Caller {
  readonly call: (command: string, ...args: Array<string | number>) => Promise<unknown>
}

/**
 * `xaddAll` through a batch connection: the pipeline written as RESP into the bytes
 * the connection sends, one result per entry.
 *
 * @since 0.1.0
 * @category constructors
 */
export const batchXaddAll =
  (batches: BatchConnection.BatchConnection): RedisStreamsService["xaddAll"] => (key, entries, xaddOptions) => {
    // While Redis answers, the effect keeps the entries (the caller holds them for a
    // retry anyway) and the count, never the pipeline's bytes.
    const count = entries.length
    if (count === 0) return Effect.succeed([])
    const maxLen = xaddOptions?.maxLen
    return Effect.mapBoth(batches.send((out) => out.xadds(key, entries, maxLen), count), {
      onFailure: (error) => new RedisError({ reason: error.reason, command: "XADD", key, detail: error.detail }),
      onSuccess: (settled) => xaddResults(key, count, settled)
    })
  }

/**
 * Connects to Redis and builds the service; the connection closes with the scope.
 * Fails with an `Unavailable` `RedisError` when Redis cannot be reached.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: LiveOptions): Effect.Effect<RedisStreamsService, RedisError, Scope.Scope> =>
  Effect.gen(function*() {
    const client = yield* openClient(options, "commands")
    const reader = yield* openClient(options, "reads")
    const openTail = () => openClient(options, "tail")
    // Sentinel may move the master at any time: the writes follow ioredis there.
    if (options.sentinel !== undefined) {
      return fromConnections({ client, reader, openTail, xaddAll: pipelineXaddAll(client) })
    }
    const batches = yield* Effect.mapError(
      BatchConnection.make({
        url: options.url,
        connectTimeoutMs: options.connectTimeoutMs ?? 5000,
        commandTimeoutMs: options.commandTimeoutMs ?? 5000,
        tls: options.tls
      }),
      (error) => new RedisError({ reason: error.reason, command: "CONNECT", detail: error.detail })
    )
    return fromConnections({ client, reader, openTail, xaddAll: batchXaddAll(batches) })
  })

/**
 * The service over the given connections.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromConnections = (connections: Connections): RedisStreamsService => {
  const { client } = connections
  const callOn = (on: Caller) =>
  <A>(
    decode: (command: string, key: string) => (reply: unknown) => Effect.Effect<A, RedisError>,
    command: string,
    key: string,
    args: ReadonlyArray<string | number>
  ): Effect.Effect<A, RedisError> =>
    Effect.tryPromise({
      try: () => on.call(command, ...args),
      catch: (cause) => toRedisError(command, key, cause)
    }).pipe(Effect.flatMap(decode(command, key)))
  const call = callOn(client)
  const read = callOn(connections.reader ?? client)

  const tail: RedisStreamsService["tail"] = (key, tailOptions) => {
    const pages = ReadBudget.pager({
      maxCount: tailOptions?.count ?? tailDefaults.count,
      maxBytes: tailOptions?.maxBytes ?? tailDefaults.maxBytes
    })
    const blockMs = Math.max(1, tailOptions?.blockMs ?? tailDefaults.blockMs)
    const until = tailOptions?.until
    const decodeRead = asRead("XREAD", key)
    return Stream.unwrap(
      Effect.map(connections.openTail(key), (blocking) => {
        const readOnce = (after: string) =>
          Effect.tryPromise({
            try: () => blocking.call("XREAD", "COUNT", pages.count(), "BLOCK", blockMs, "STREAMS", key, after),
            catch: (cause) => toRedisError("XREAD", key, cause)
          }).pipe(Effect.flatMap(decodeRead))
        // Blocks until entries arrive after `after`, repeating timed-out reads.
        const readNext = (after: string): Effect.Effect<ReadonlyArray<typeof RangeReply.Type[number]>, RedisError> =>
          Effect.flatMap(readOnce(after), (reply) => {
            const entries = reply?.[0]?.[1] ?? []
            return entries.length > 0 ? Effect.succeed(entries) : readNext(after)
          })
        return Stream.paginate(
          tailOptions?.after ?? tailDefaults.after,
          (after) =>
            Effect.map(readNext(after), (replies) => {
              const entries = replies.map(toEntry)
              pages.seen(entries)
              const stop = until === undefined ? -1 : entries.findIndex(until)
              const taken = stop < 0 ? entries : entries.slice(0, stop + 1)
              return [taken, stop < 0 ? Option.some(taken[taken.length - 1]!.id) : Option.none()] as const
            })
        )
      })
    )
  }

  const service: RedisStreamsService = {
    xadd: (key, entry, xaddOptions) => call(asString, "XADD", key, xaddArgs(key, entry, xaddOptions)),
    xaddAfter: (key, after, entries) =>
      Effect.map(
        call(asInteger, "EVAL", key, [
          appendAfterScript,
          1,
          key,
          after,
          entries.length,
          ...entries.flatMap((entry) => {
            const fields = entry.fields
            return [entry.id, fields.length, ...fields.flat()]
          })
        ]),
        (reply) => reply === 1
      ),
    xaddAll: connections.xaddAll,
    xrange: (key, start, end, count) =>
      Effect.map(
        read(asRange, "XRANGE", key, count === undefined ? [key, start, end] : [key, start, end, "COUNT", count]),
        (entries) => entries.map(toEntry)
      ),
    xdel: (key, ids) => ids.length === 0 ? Effect.succeed(0) : call(asInteger, "XDEL", key, [key, ...ids]),
    xlen: (key) => call(asInteger, "XLEN", key, [key]),
    xlast: (key) =>
      Effect.map(
        read(asRange, "XREVRANGE", key, [key, "+", "-", "COUNT", 1]),
        (entries) => entries.length === 0 ? Option.none() : Option.some(toEntry(entries[0]!))
      ),
    setPx: (key, value, ms) => Effect.asVoid(call(asString, "SET", key, [key, value, "PX", ms])),
    get: (key) => Effect.map(call(asOptionalString, "GET", key, [key]), Option.fromNullishOr),
    tail,
    pexpire: (key, ms) => Effect.map(call(asInteger, "PEXPIRE", key, [key, ms]), (reply) => reply === 1),
    pttl: (key) => call(asInteger, "PTTL", key, [key]),
    zadd: (key, score, member, zaddOptions) =>
      Effect.map(
        call(asInteger, "ZADD", key, zaddOptions?.onlyNew === true ? [key, "NX", score, member] : [key, score, member]),
        (added) => added === 1
      ),
    zrangeByScore: (key, min, max, rangeOptions) => {
      const reverse = rangeOptions?.reverse === true
      const bounds = reverse ? [scoreBound(max), scoreBound(min)] : [scoreBound(min), scoreBound(max)]
      const limit = rangeOptions?.offset === undefined && rangeOptions?.count === undefined
        ? []
        : ["LIMIT", rangeOptions?.offset ?? 0, rangeOptions?.count ?? -1]
      return Effect.map(
        call(asFlat, "ZRANGE", key, [key, ...bounds, "BYSCORE", ...(reverse ? ["REV"] : []), ...limit, "WITHSCORES"]),
        (flat) => {
          const members: Array<{ member: string; score: number }> = []
          for (let i = 0; i + 1 < flat.length; i += 2) members.push({ member: flat[i]!, score: Number(flat[i + 1]) })
          return members
        }
      )
    },
    zremRangeByScore: (key, min, max) =>
      call(asInteger, "ZREMRANGEBYSCORE", key, [key, scoreBound(min), scoreBound(max)])
  }
  return service
}

/**
 * The live layer from the given options; `layerConfig` reads them from `Config`.
 * (Up to 0.2.0 this was `layerFrom`, and `layer` read `Config` as `layerConfig` does now.)
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: LiveOptions): Layer.Layer<RedisStreams, RedisError> =>
  Layer.effect(RedisStreams, make(options))

/**
 * The live layer with its options read from `Config`: by default `config`
 * (`REDIS_URL`, default `redis://127.0.0.1:6379`), or a `Config` (or a record of
 * `Config`s) of the options.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerConfig = (
  options: Config.Wrap<LiveOptions> = config
): Layer.Layer<RedisStreams, RedisError | Config.ConfigError> =>
  Layer.effect(RedisStreams, Effect.flatMap(Config.unwrap(options), make))

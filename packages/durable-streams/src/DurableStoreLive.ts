/**
 * `DurableStore` on Redis through ioredis: a load, a commit, a touch, a delete and a
 * read are each one Lua script (atomic on the server, on the keys of one stream; a read
 * is `XRANGE` on the data stream, bytes kept as they are, with the stream's fork point,
 * and a fork read before its fork point reads its source the same way, one script per
 * level of its chain), and a wait is a shared one (`StreamWaits`, docs/http.md#shared-waits)
 * on the stream's signal key: every wait on one stream in the process joins one key of
 * one `XREAD BLOCK`, and the streams waited on share at most `waitConnections` (8)
 * blocking connections, however many readers wait. The steps of a fork's creation
 * and of a delete that reaches a fork's sources are separate scripts, one per stream,
 * so that they work when the streams live on different Redis Cluster slots.
 *
 * The connections are opened as `RedisStreamsLive.openClient` opens the turns' (the
 * same TLS, Sentinel, connect timeout and reconnection), so every command has the
 * turns' bound: it is never queued while the connection is down (it fails at once with
 * an `Unavailable` `RedisError`), and a command sent but not answered fails with
 * `Unavailable` after `commandTimeoutMs` (5 s by default), as when Redis is frozen; a
 * wait fails so once its shared `XREAD`'s block (at most `waitBlockMs`, 1 s) and that
 * bound have passed.
 *
 * A wait also ends when the stream's deadline (a TTL or an expiry time) comes first:
 * Redis's own time of the deadline bounds the shared block, and the stream is looked at
 * again then, so a waiting reader learns of an expiry as soon as of a delete.
 *
 * @since 0.3.0
 */
import * as EntryId from "@sluice/redis/EntryId"
import { decodeReply, fromCause as toRedisError } from "@sluice/redis/RedisError"
import { RedisError } from "@sluice/redis/RedisError"
import type { LiveOptions } from "@sluice/redis/RedisStreamsLive"
import * as RedisStreamsLive from "@sluice/redis/RedisStreamsLive"
import * as StreamWaits from "@sluice/redis/StreamWaits"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { Command, type Redis } from "ioredis"
import { randomUUID } from "node:crypto"
import type { Commit, DurableState, DurableStoreService, Expiry } from "./DurableStore.js"
import { bookkeeping, DurableStore, key } from "./DurableStore.js"
import { defaultMaxForkDepth, maxChain, readThrough, startOf } from "./internal/storeFork.js"
import {
  commitScript,
  extendScript,
  linkScript,
  loadScript,
  readScript,
  removeScript,
  touchScript,
  unlinkScript,
  waitScript
} from "./internal/storeScripts.js"

const expiryArgs = (expiry: Expiry): [string, string] =>
  expiry._tag === "Persist"
    ? ["persist", "0"]
    : expiry._tag === "After"
    ? ["after", String(Math.max(1, Math.ceil(expiry.ms)))]
    : ["at", String(Math.max(1, Math.floor(expiry.epochMs)))]

const CommitReply = Schema.TupleWithRest(Schema.Tuple([Schema.Number]), [Schema.String])
const BufferEntries = Schema.Array(
  Schema.Tuple([Schema.Uint8Array, Schema.Tuple([Schema.Uint8Array, Schema.Uint8Array])])
)
const CommitOutcome = Schema.Union([Schema.Tuple([Schema.Literal(0)]), CommitReply])
const asCommit = decodeReply(CommitOutcome)
const asStrings = decodeReply(Schema.Array(Schema.String))
const asText = decodeReply(Schema.NullOr(Schema.String))
const asNumber = decodeReply(Schema.Number)
const asOwnEntries = decodeReply(Schema.Tuple([Schema.Uint8Array, Schema.Uint8Array, BufferEntries]))
// A command whose reply keeps its bytes. Sent as it is, never auto-pipelined: ioredis's
// auto-pipelining drops the command name of a `callBuffer` (it would send the script
// as the command); the command timeout still applies.
const sendBuffer = (redis: Redis, name: string, args: ReadonlyArray<string | number>): Promise<unknown> => {
  const command = new Command(name, [...args], { replyEncoding: null })
  redis.sendCommand(command)
  return command.promise
}
const latin1 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("latin1")
const asWait = decodeReply(Schema.Tuple([Schema.Number, Schema.Number]))

/**
 * The options of the live store: the Redis connection, the key prefix, how long a
 * source's link to a fork that does not exist is kept before it is pruned (the fork
 * may be on its way: its link is made first; 60 s by default), and how its waits are
 * shared (docs/http.md#shared-waits): at most `waitConnections` blocking connections
 * (8), each blocking at most `waitBlockMs` (1,000 ms) at a time; and how deep a chain of
 * forks may go, `maxForkDepth` (100; docs/http.md#fork-depth).
 *
 * @since 0.3.0
 * @category models
 */
export interface DurableLiveOptions extends LiveOptions {
  readonly prefix: string
  readonly pruneAfterMs?: number
  readonly maxForkDepth?: number | undefined
  readonly waitConnections?: number | undefined
  readonly waitBlockMs?: number | undefined
}

/**
 * Connects to Redis and builds the store; its connections (the commands', and the
 * blocking ones kept for waits) close with the scope.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (
  options: DurableLiveOptions
): Effect.Effect<DurableStoreService, RedisError, Scope.Scope> =>
  Effect.gen(function*() {
    const pruneAfterMs = options.pruneAfterMs ?? 60_000
    const maxForkDepth = options.maxForkDepth ?? defaultMaxForkDepth
    const client = yield* RedisStreamsLive.openClient(options, "commands")
    // Waits shared by stream, over a bounded number of blocking connections; a restart
    // of a blocked read goes through the command connection.
    const waits = yield* StreamWaits.make(options, {
      ...(options.waitConnections === undefined ? {} : { connections: options.waitConnections }),
      ...(options.waitBlockMs === undefined ? {} : { blockMs: options.waitBlockMs })
    }, client)
    const keys = (name: string) =>
      [
        key(options.prefix, name, "meta"),
        key(options.prefix, name, "data"),
        key(options.prefix, name, "sig"),
        key(options.prefix, name, "forks")
      ] as const
    const run = <A>(
      decode: (command: string, key: string) => (reply: unknown) => Effect.Effect<A, RedisError>,
      command: string,
      name: string,
      send: (client: Redis) => Promise<unknown>
    ): Effect.Effect<A, RedisError> => {
      const target = key(options.prefix, name, "meta")
      return Effect.tryPromise({ try: () => send(client), catch: (cause) => toRedisError(command, target, cause) })
        .pipe(
          Effect.flatMap(decode(command, target))
        )
    }
    const script = (source: string, name: string, args: ReadonlyArray<string | Uint8Array>) => (redis: Redis) =>
      redis.call(
        "EVAL",
        source,
        4,
        ...keys(name),
        ...args.map((arg) => typeof arg === "string" ? arg : Buffer.from(arg))
      )
    const metaField = (name: string, field: string) =>
      run(asText, "HGET", name, (redis) => redis.call("HGET", keys(name)[0], field))

    const commitArgs = (
      change: Pick<Commit, "expect" | "set" | "append" | "expiry">,
      fork: ReadonlyArray<string>
    ): Array<string | Uint8Array> => [
      String(change.expect),
      ...expiryArgs(change.expiry),
      ...(fork.length === 4 ? fork : ["", "", "", ""]),
      String(Object.keys(change.set).length),
      ...Object.entries(change.set).flat(),
      String(change.append.length),
      ...change.append
    ]
    const commitReply = (reply: typeof CommitOutcome.Type) =>
      reply[0] === 0 ? Option.none() : Option.some(reply.slice(1).map(String))

    // Extends the expiry of every source up the chain from `source` to cover a fork's.
    const cover = (source: string | null, expiry: Expiry): Effect.Effect<void, RedisError> =>
      Effect.gen(function*() {
        let next = source
        for (let steps = 0; next !== null && next !== "" && steps < maxChain; steps++) {
          next = yield* run(asText, "EVAL", next, script(extendScript, next, expiryArgs(expiry)))
        }
      })
    const coverSources = (name: string, expiry: Expiry) =>
      Effect.flatMap(metaField(name, "src"), (source) => cover(source, expiry))

    // Unlinks the fork `name` (link token `link`) from `source` (if the link still has
    // the value `expected` and is at least `minAgeMs` old), and goes on up the chain while
    // a source gone with no fork left is removed in turn.
    const release = (
      source: string,
      name: string,
      link: string,
      expected = "",
      minAgeMs = 0
    ): Effect.Effect<void, RedisError> =>
      Effect.gen(function*() {
        let at = { source, name, link, condition: [expected, String(minAgeMs)] }
        for (let steps = 0; at.source !== "" && steps < maxChain; steps++) {
          const [outcome, up, upLink] = yield* run(
            asStrings,
            "EVAL",
            at.source,
            script(unlinkScript, at.source, [`${at.name} ${at.link}`, ...at.condition])
          )
          at = outcome === "removed"
            ? { source: up ?? "", name: at.source, link: upLink ?? "", condition: ["", "0"] }
            : { ...at, source: "" }
        }
      })

    // Unlinks the forks of `name` that no longer exist (expired, or never created after
    // a crash), once their links are older than `pruneAfterMs`.
    const prune = (name: string) =>
      Effect.gen(function*() {
        const flat = yield* run(asStrings, "HGETALL", name, (redis) => redis.call("HGETALL", keys(name)[3]))
        for (let i = 0; i + 1 < flat.length; i += 2) {
          const field = flat[i]!
          const space = field.lastIndexOf(" ")
          const fork = field.slice(0, space)
          const link = field.slice(space + 1)
          if ((yield* metaField(fork, "lnk")) === link) continue
          yield* release(name, fork, link, flat[i + 1]!, pruneAfterMs)
        }
      })

    const loadOnce = (name: string): Effect.Effect<Option.Option<DurableState>, RedisError> =>
      Effect.map(run(asStrings, "EVAL", name, script(loadScript, name, [])), (reply) => {
        if (reply.length < 2) return Option.none()
        const now = Number(reply[0])
        const forks = Number(reply[1])
        const all: Record<string, string> = {}
        for (let i = 2; i + 1 < reply.length; i += 2) all[reply[i]!] = reply[i + 1]!
        const gone = all.del === "1" || (all.dl !== undefined && Number(all.dl) <= now)
        if (gone && forks === 0) return Option.none()
        const meta: Record<string, string> = {}
        for (const [field, value] of Object.entries(all)) if (!bookkeeping.has(field)) meta[field] = value
        return Option.some({
          meta,
          version: Number(all.v ?? 0),
          tail: all.tail ?? "0-0",
          signal: all.s ?? "0-0",
          forkOf: all.src === undefined ? Option.none() : Option.some({ source: all.src, at: all.at ?? "0-0" }),
          forks,
          gone
        })
      })

    const read = readThrough<RedisError>((name, after, count) =>
      Effect.map(
        run(
          asOwnEntries,
          "EVAL",
          name,
          (redis) => sendBuffer(redis, "EVAL", [readScript, 4, ...keys(name), after, String(Math.max(1, count))])
        ),
        ([source, at, entries]) => ({
          forkOf: source.length === 0
            ? Option.none()
            : Option.some({ source: Buffer.from(source).toString("utf8"), at: at.length === 0 ? "0-0" : latin1(at) }),
          entries: entries.map(([id, [, data]]) => ({ id: latin1(id), data }))
        })
      )
    )

    const removed = (outcome: string | undefined, name: string, source: string | undefined, link: string | undefined) =>
      Effect.as(
        release(source ?? "", name, link ?? ""),
        outcome === "removed" ? "Removed" as const : "Missing" as const
      )

    const service: DurableStoreService = {
      load: (name) =>
        Effect.flatMap(loadOnce(name), (state) =>
          Option.isSome(state) && state.value.gone
            ? Effect.andThen(prune(name), loadOnce(name))
            : Effect.succeed(state)),
      commit: (name, change) =>
        Effect.andThen(
          change.expiry._tag === "After" ? coverSources(name, change.expiry) : Effect.void,
          Effect.map(run(asCommit, "EVAL", name, script(commitScript, name, commitArgs(change, []))), commitReply)
        ),
      fork: (name, fork) =>
        Effect.gen(function*() {
          const link = randomUUID()
          const field = `${name} ${link}`
          const at = EntryId.parse(fork.at)
          const atNumber = Option.isSome(at) && at.value.ms === 0n ? String(at.value.seq) : "-1"
          const [linked, detail] = yield* run(
            asStrings,
            "EVAL",
            fork.source,
            script(linkScript, fork.source, [field, atNumber, ...expiryArgs(fork.expiry), String(maxForkDepth)])
          )
          if (linked === "missing") return { _tag: "SourceMissing" } as const
          if (linked === "gone") return { _tag: "SourceGone" } as const
          if (linked === "deep") return { _tag: "TooDeep", depth: Number(detail), limit: maxForkDepth } as const
          if (linked === "beyond") return { _tag: "BeyondTail", tail: detail ?? "0-0" } as const
          const depth = Number(detail ?? "0") + 1
          yield* coverSources(fork.source, fork.expiry)
          const created = commitReply(
            yield* run(
              asCommit,
              "EVAL",
              name,
              script(
                commitScript,
                name,
                commitArgs({ ...fork, set: { ...fork.set, dp: String(depth) }, expect: 0 }, [
                  fork.source,
                  fork.at,
                  link,
                  String(startOf(fork.at))
                ])
              )
            )
          )
          if (Option.isSome(created)) return { _tag: "Forked", ids: created.value } as const
          yield* release(fork.source, name, link)
          return { _tag: "Exists" } as const
        }),
      read,
      touch: (name, expiry) =>
        Effect.andThen(
          expiry._tag === "After" ? coverSources(name, expiry) : Effect.void,
          Effect.asVoid(run(asNumber, "EVAL", name, script(touchScript, name, expiryArgs(expiry))))
        ),
      remove: (name) =>
        Effect.gen(function*() {
          yield* prune(name)
          const [outcome, source, link] = yield* run(asStrings, "EVAL", name, script(removeScript, name, []))
          if (outcome === "soft") return "SoftDeleted" as const
          if (outcome === "gone") return "Gone" as const
          return yield* removed(outcome, name, source, link)
        }),
      awaitChange: (name, signal, timeoutMs) =>
        Effect.gen(function*() {
          const end = (yield* Clock.currentTimeMillis) + timeoutMs
          for (;;) {
            const [changed, left] = yield* run(asWait, "EVAL", name, script(waitScript, name, [signal]))
            if (changed === 1) return true
            const remaining = end - (yield* Clock.currentTimeMillis)
            if (remaining <= 0) return false
            // the deadline comes first: Redis's block ends there, and the stream is looked at again
            const expires = left >= 0 && left <= remaining
            const woken = yield* waits.await({
              key: keys(name)[2],
              after: signal,
              timeoutMs: remaining,
              ...(expires ? { dueMs: Math.max(1, Math.ceil(left)) } : {})
            })
            if (woken === "changed") return true
            if (woken === "timeout") return expires
          }
        })
    }
    return service
  })

/**
 * The live layer with the connection's options read from `Config`: by default
 * `RedisStreamsLive.config` (`REDIS_URL`, default `redis://127.0.0.1:6379`), keys
 * under `prefix`.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerConfig = (
  prefix: string,
  options: Config.Wrap<LiveOptions> = RedisStreamsLive.config
): Layer.Layer<DurableStore, RedisError | Config.ConfigError> =>
  Layer.effect(DurableStore, Effect.flatMap(Config.unwrap(options), (live) => make({ ...live, prefix })))

/**
 * The live layer from the given options.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (options: DurableLiveOptions): Layer.Layer<DurableStore, RedisError> =>
  Layer.effect(DurableStore, make(options))

/**
 * `DurableStore` on Redis through ioredis: a commit, a touch and a delete are each one
 * Lua script (atomic on the server), a read is `XRANGE` on the data stream (bytes kept
 * as they are), and a wait is `XREAD BLOCK` on the stream's signal key over a
 * connection of its own, closed when the wait ends. Commands are never queued while
 * the connection is down: they fail at once with an `Unavailable` `RedisError`.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { Redis } from "ioredis"
import type { Commit, DurableStoreService, Expiry } from "./DurableStore.js"
import { bookkeeping, DurableStore, key } from "./DurableStore.js"
import { connect as openConnection } from "./internal/connection.js"
import { commitScript, removeScript, touchScript } from "./internal/durableScripts.js"
import { decodeReply, toRedisError } from "./internal/replies.js"
import type { RedisError } from "./RedisError.js"
import type { LiveOptions } from "./RedisStreamsLive.js"
import * as RedisStreamsLive from "./RedisStreamsLive.js"

const connect = (url: string, name: string): Effect.Effect<Redis, RedisError, Scope.Scope> =>
  openConnection(url, { connectionName: name })

const expiryArgs = (expiry: Expiry): [string, string] =>
  expiry._tag === "Persist"
    ? ["persist", "0"]
    : expiry._tag === "After"
    ? ["after", String(Math.max(1, Math.ceil(expiry.ms)))]
    : ["at", String(Math.max(1, Math.floor(expiry.epochMs)))]

const CommitReply = Schema.Tuple([Schema.Number], Schema.String)
const BufferEntries = Schema.Array(
  Schema.Tuple(Schema.Uint8ArrayFromSelf, Schema.Tuple(Schema.Uint8ArrayFromSelf, Schema.Uint8ArrayFromSelf))
)
const asCommit = decodeReply(Schema.Union(Schema.Tuple(Schema.Literal(0)), CommitReply))
const asStrings = decodeReply(Schema.Array(Schema.String))
const asNumber = decodeReply(Schema.Number)
const asEntries = decodeReply(BufferEntries)
const asRead = decodeReply(Schema.NullOr(Schema.Array(Schema.Unknown)))

/**
 * Connects to Redis and builds the store; the connection closes with the scope.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (
  options: LiveOptions & { readonly prefix: string }
): Effect.Effect<DurableStoreService, RedisError, Scope.Scope> =>
  Effect.gen(function*() {
    const client = yield* connect(options.url, "sluice-durable")
    const keys = (name: string) =>
      [key(options.prefix, name, "meta"), key(options.prefix, name, "data"), key(options.prefix, name, "sig")] as const
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
        3,
        ...keys(name),
        ...args.map((arg) => typeof arg === "string" ? arg : Buffer.from(arg))
      )

    const commitArgs = (change: Commit): Array<string | Uint8Array> => [
      String(change.expect),
      String(Object.keys(change.set).length),
      ...Object.entries(change.set).flat(),
      String(change.append.length),
      ...change.append,
      ...expiryArgs(change.expiry)
    ]

    const service: DurableStoreService = {
      load: (name) =>
        Effect.map(run(asStrings, "HGETALL", name, (redis) => redis.call("HGETALL", keys(name)[0])), (flat) => {
          if (flat.length === 0) return Option.none()
          const all: Record<string, string> = {}
          for (let i = 0; i + 1 < flat.length; i += 2) all[flat[i]!] = flat[i + 1]!
          const meta: Record<string, string> = {}
          for (const [field, value] of Object.entries(all)) if (!bookkeeping.has(field)) meta[field] = value
          return Option.some({ meta, version: Number(all.v ?? 0), tail: all.tail ?? "0-0", signal: all.s ?? "0-0" })
        }),
      commit: (name, change) =>
        Effect.map(
          run(asCommit, "EVAL", name, script(commitScript, name, commitArgs(change))),
          (reply) => reply[0] === 0 ? Option.none() : Option.some(reply.slice(1).map(String))
        ),
      read: (name, after, count) =>
        Effect.map(
          run(
            asEntries,
            "XRANGE",
            name,
            (redis) => redis.callBuffer("XRANGE", keys(name)[1], `(${after}`, "+", "COUNT", Math.max(1, count))
          ),
          (entries) => entries.map(([id, [, data]]) => ({ id: Buffer.from(id).toString("latin1"), data }))
        ),
      touch: (name, expiry) =>
        Effect.asVoid(run(asNumber, "EVAL", name, script(touchScript, name, expiryArgs(expiry)))),
      remove: (name) =>
        Effect.map(run(asNumber, "EVAL", name, script(removeScript, name, [])), (existed) => existed === 1),
      awaitChange: (name, signal, timeoutMs) =>
        Effect.scoped(Effect.gen(function*() {
          const waiter = yield* connect(options.url, "sluice-durable-wait")
          const reply = yield* run(
            asRead,
            "XREAD",
            name,
            () => waiter.call("XREAD", "BLOCK", Math.max(1, Math.ceil(timeoutMs)), "STREAMS", keys(name)[2], signal)
          )
          return reply !== null
        }))
    }
    return service
  })

/**
 * The live layer: `REDIS_URL` (default `redis://127.0.0.1:6379`), keys under `prefix`.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (prefix: string) =>
  Layer.scoped(DurableStore, Effect.flatMap(RedisStreamsLive.config, (live) => make({ ...live, prefix })))

/**
 * The live layer from the given options.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerFrom = (options: LiveOptions & { readonly prefix: string }): Layer.Layer<DurableStore, RedisError> =>
  Layer.scoped(DurableStore, make(options))

/**
 * `DurableSubscriptions` on Redis through ioredis: a save is one Lua script (a
 * conditional write of the record and its version), the index of ids a set counted
 * with its subscribers' counts in one script (an insert's reservation, a delete's
 * release), the versions of many records one pipeline, the stream listing a `SCAN` over
 * the `DurableStore` metadata keys.
 *
 * @internal
 */
import type { RedisError } from "@sluice/redis/RedisError"
import { decodeReply, fromCause as toRedisError } from "@sluice/redis/RedisError"
import type { LiveOptions } from "@sluice/redis/RedisStreamsLive"
import { openClient } from "@sluice/redis/RedisStreamsLive"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { Redis } from "ioredis"
import type { DurableSubscriptionsService, StoreOptions } from "../DurableSubscriptions.js"
import {
  decodeRecord,
  defaultMaxSubscriptions,
  encodeRecord,
  indexKey,
  ownerCountsKey,
  ownerOfKey,
  recordKey,
  revisionKey,
  signingKeyKey,
  type Subscription
} from "./subscriptionRecord.js"

// KEYS: the record. ARGV: the expected version, the record's JSON. Replies 1 when saved.
const saveScript = `
local current = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if current ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'v', current + 1, 'r', ARGV[2])
return 1
`

// KEYS: the index, the subscribers' counts, each subscription's subscriber. ARGV: the
// id, the most subscriptions in all, the subscriber ('': none), its most. Replies
// 'member' (counted already), 'total' or 'owner' (a limit reached), or 'added'.
const reserveScript = `
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 'member' end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 'total' end
if ARGV[3] ~= '' then
  if tonumber(redis.call('HGET', KEYS[2], ARGV[3]) or '0') >= tonumber(ARGV[4]) then return 'owner' end
  redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
end
redis.call('SADD', KEYS[1], ARGV[1])
return 'added'
`

// KEYS: as reserveScript's, and the revision. ARGV: the id. Uncounts it.
const releaseScript = `
redis.call('INCR', KEYS[4])
redis.call('SREM', KEYS[1], ARGV[1])
local owner = redis.call('HGET', KEYS[3], ARGV[1])
if owner then
  redis.call('HDEL', KEYS[3], ARGV[1])
  if redis.call('HINCRBY', KEYS[2], owner, -1) <= 0 then redis.call('HDEL', KEYS[2], owner) end
end
return 1
`

const asLoaded = decodeReply(Schema.Tuple([Schema.NullOr(Schema.String), Schema.NullOr(Schema.String)]))
const asNumber = decodeReply(Schema.Number)
const asStrings = decodeReply(Schema.Array(Schema.String))
const asNullableString = decodeReply(Schema.NullOr(Schema.String))
const asScan = decodeReply(Schema.Tuple([Schema.String, Schema.Array(Schema.String)]))
const asText = decodeReply(Schema.String)
const asVersions = decodeReply(Schema.Array(Schema.NullOr(Schema.String)))
const asSaved = decodeReply(Schema.Tuple([Schema.Number, Schema.Number]))

const globSpecial = /[*?[\]\\]/g

/**
 * Connects to Redis and builds the store; the connection closes with the scope.
 *
 * @internal
 */
export const make = (
  options: LiveOptions & StoreOptions & { readonly prefix: string }
): Effect.Effect<DurableSubscriptionsService, RedisError, Scope.Scope> =>
  Effect.gen(function*() {
    const maxSubscriptions = options.maxSubscriptions ?? defaultMaxSubscriptions
    const client = yield* openClient(options, "commands")
    const run = <A>(
      decode: (command: string, key: string) => (reply: unknown) => Effect.Effect<A, RedisError>,
      command: string,
      key: string,
      send: (client: Redis) => Promise<unknown>
    ): Effect.Effect<A, RedisError> =>
      Effect.tryPromise({ try: () => send(client), catch: (cause) => toRedisError(command, key, cause) }).pipe(
        Effect.flatMap(decode(command, key))
      )
    const index = indexKey(options.prefix)
    const counting = [index, ownerCountsKey(options.prefix), ownerOfKey(options.prefix)] as const
    const revision = revisionKey(options.prefix)
    const release = (id: string) =>
      run(asNumber, "EVAL", index, (redis) => redis.call("EVAL", releaseScript, 4, ...counting, revision, id))
    // The conditional save, and the revision raised after it: sent together, in this
    // order (a conflict raises it too, needlessly but harmlessly).
    const saveRecord = (subscription: Subscription, expect: number) => {
      const key = recordKey(options.prefix, subscription.id)
      return Effect.map(
        run(asSaved, "EVAL", key, (redis) =>
          Promise.all([
            redis.call("EVAL", saveScript, 1, key, String(expect), encodeRecord(subscription)),
            redis.call("INCR", revision)
          ])),
        ([saved]) => saved === 1
      )
    }
    const metaPrefix = `${options.prefix}:ds:{`
    const metaMatch = `${options.prefix.replace(globSpecial, "\\$&")}:ds:{*}:meta`

    const scanFrom = (
      cursor: string,
      found: ReadonlyArray<string>
    ): Effect.Effect<ReadonlyArray<string>, RedisError> =>
      Effect.flatMap(
        run(asScan, "SCAN", metaMatch, (redis) => redis.call("SCAN", cursor, "MATCH", metaMatch, "COUNT", 1000)),
        ([next, keys]) => {
          const names = keys.filter((key) => key.startsWith(metaPrefix) && key.endsWith("}:meta")).map((key) =>
            key.slice(metaPrefix.length, key.length - "}:meta".length)
          )
          const all = [...found, ...names]
          return next === "0" ? Effect.succeed(all) : scanFrom(next, all)
        }
      )

    const service: DurableSubscriptionsService = {
      load: (id) => {
        const key = recordKey(options.prefix, id)
        return Effect.flatMap(
          run(asLoaded, "HMGET", key, (redis) => redis.call("HMGET", key, "v", "r")),
          ([version, json]) =>
            json === null
              ? Effect.succeedNone
              : Effect.map(
                decodeRecord(key, json),
                (subscription) => Option.some({ subscription, version: Number(version ?? 0) })
              )
        )
      },
      save: (subscription, expect) =>
        Effect.tap(
          saveRecord(subscription, expect),
          (saved) =>
            saved && expect === 0
              ? Effect.asVoid(run(asNumber, "SADD", index, (redis) => redis.call("SADD", index, subscription.id)))
              : Effect.void
        ),
      insert: (subscription, owner) =>
        Effect.gen(function*() {
          const reserved = yield* run(asText, "EVAL", index, (redis) =>
            redis.call(
              "EVAL",
              reserveScript,
              3,
              ...counting,
              subscription.id,
              String(maxSubscriptions),
              owner?.key ?? "",
              String(owner?.max ?? 0)
            ))
          if (reserved === "total") return { _tag: "TooMany", scope: "total", limit: maxSubscriptions } as const
          if (reserved === "owner") return { _tag: "TooMany", scope: "owner", limit: owner?.max ?? 0 } as const
          // taken meanwhile: its count, made by whichever insert came first, stays with it
          return (yield* saveRecord(subscription, 0)) ? { _tag: "Inserted" } as const : { _tag: "Exists" } as const
        }),
      remove: (id) => {
        const key = recordKey(options.prefix, id)
        return Effect.tap(
          Effect.map(run(asNumber, "DEL", key, (redis) => redis.call("DEL", key)), (deleted) => deleted === 1),
          () => release(id)
        )
      },
      ids: run(asStrings, "SMEMBERS", index, (redis) => redis.call("SMEMBERS", index)),
      versions: (ids) =>
        ids.length === 0 ? Effect.succeed([]) : Effect.map(
          run(asVersions, "HGET", index, (redis) => {
            const pipeline = redis.pipeline()
            for (const id of ids) pipeline.hget(recordKey(options.prefix, id), "v")
            return pipeline.exec().then((results) =>
              (results ?? []).map(([error, value]) => {
                if (error !== null) throw error
                return value
              })
            )
          }),
          (versions) => versions.map((version) => Number(version ?? 0))
        ),
      revision: Effect.map(
        run(asNullableString, "GET", revision, (redis) => redis.call("GET", revision)),
        (value) => Number(value ?? 0)
      ),
      streamNames: Effect.map(scanFrom("0", []), (names) => [...new Set(names)]),
      observe: () => Effect.void,
      signingKey: (candidate) => {
        const key = signingKeyKey(options.prefix)
        return Effect.flatMap(
          run(asNullableString, "SET", key, (redis) => redis.call("SET", key, candidate, "NX")),
          () =>
            Effect.map(
              run(asNullableString, "GET", key, (redis) => redis.call("GET", key)),
              (stored) => stored ?? candidate
            )
        )
      }
    }
    return service
  })

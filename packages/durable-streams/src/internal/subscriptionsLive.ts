/**
 * `DurableSubscriptions` on Redis through ioredis: a save is one Lua script (a
 * conditional write of the record and its version), the index of ids a set, the
 * stream listing a `SCAN` over the `DurableStore` metadata keys.
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
import type { DurableSubscriptionsService } from "../DurableSubscriptions.js"
import { decodeRecord, encodeRecord, indexKey, recordKey, signingKeyKey } from "./subscriptionRecord.js"

// KEYS: the record. ARGV: the expected version, the record's JSON. Replies 1 when saved.
const saveScript = `
local current = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if current ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'v', current + 1, 'r', ARGV[2])
return 1
`

const asLoaded = decodeReply(Schema.Tuple([Schema.NullOr(Schema.String), Schema.NullOr(Schema.String)]))
const asNumber = decodeReply(Schema.Number)
const asStrings = decodeReply(Schema.Array(Schema.String))
const asNullableString = decodeReply(Schema.NullOr(Schema.String))
const asScan = decodeReply(Schema.Tuple([Schema.String, Schema.Array(Schema.String)]))

const globSpecial = /[*?[\]\\]/g

/**
 * Connects to Redis and builds the store; the connection closes with the scope.
 *
 * @internal
 */
export const make = (
  options: LiveOptions & { readonly prefix: string }
): Effect.Effect<DurableSubscriptionsService, RedisError, Scope.Scope> =>
  Effect.gen(function*() {
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
      save: (subscription, expect) => {
        const key = recordKey(options.prefix, subscription.id)
        return Effect.tap(
          Effect.map(
            run(
              asNumber,
              "EVAL",
              key,
              (redis) => redis.call("EVAL", saveScript, 1, key, String(expect), encodeRecord(subscription))
            ),
            (saved) => saved === 1
          ),
          (saved) =>
            saved && expect === 0
              ? Effect.asVoid(run(asNumber, "SADD", index, (redis) => redis.call("SADD", index, subscription.id)))
              : Effect.void
        )
      },
      remove: (id) => {
        const key = recordKey(options.prefix, id)
        return Effect.tap(
          Effect.map(run(asNumber, "DEL", key, (redis) => redis.call("DEL", key)), (deleted) => deleted === 1),
          () => run(asNumber, "SREM", index, (redis) => redis.call("SREM", index, id))
        )
      },
      ids: run(asStrings, "SMEMBERS", index, (redis) => redis.call("SMEMBERS", index)),
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

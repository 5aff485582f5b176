/**
 * The subscription record as stored (schemas, JSON codec) and its Redis keys.
 *
 * @internal
 */
import { SchemaDecode } from "@sluice/core"
import { RedisError } from "@sluice/redis/RedisError"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * One stream of a subscription: its path, how it was linked (by the pattern, by name,
 * or both) and the last offset the worker acknowledged (inclusive).
 *
 * @since 0.3.0
 * @category schemas
 */
export const Link = Schema.Struct({
  path: Schema.String,
  glob: Schema.Boolean,
  explicit: Schema.Boolean,
  acked: Schema.String
})

/**
 * @since 0.3.0
 * @category models
 */
export type Link = typeof Link.Type

/**
 * The wake in flight: its id, the tail offset of each stream when it was issued (what
 * a webhook's `{"done": true}` acknowledges), when its lease ends (epoch ms), and the
 * worker holding it (pull-wake claims).
 *
 * @since 0.3.0
 * @category schemas
 */
export const Wake = Schema.Struct({
  id: Schema.String,
  snapshot: Schema.Array(Schema.Struct({ path: Schema.String, tail: Schema.String })),
  leaseUntil: Schema.Number,
  holder: Schema.optionalKey(Schema.String)
})

/**
 * @since 0.3.0
 * @category models
 */
export type Wake = typeof Wake.Type

/**
 * A subscription: its configuration as created (and the hash of it that a repeated
 * `PUT` is compared with), the base URL its callbacks are addressed under, its
 * streams, its fencing counter (`generation`, raised by every wake), the wake in
 * flight, and the state of a failing webhook delivery (failed attempts in a row, when
 * the next one is due).
 *
 * @since 0.3.0
 * @category schemas
 */
export const Subscription = Schema.Struct({
  id: Schema.String,
  type: Schema.Literals(["webhook", "pull-wake"]),
  pattern: Schema.optionalKey(Schema.String),
  webhookUrl: Schema.optionalKey(Schema.String),
  wakeStream: Schema.optionalKey(Schema.String),
  leaseTtlMs: Schema.Number,
  description: Schema.optionalKey(Schema.String),
  configHash: Schema.String,
  createdAt: Schema.Number,
  baseUrl: Schema.String,
  links: Schema.Array(Link),
  generation: Schema.Number,
  wake: Schema.optionalKey(Wake),
  failures: Schema.Number,
  nextAttemptAt: Schema.optionalKey(Schema.Number)
}).annotate({ identifier: "Subscription" })

/**
 * @since 0.3.0
 * @category models
 */
export type Subscription = typeof Subscription.Type

const decodeJson = SchemaDecode.decodeUnknown(Schema.fromJsonString(Subscription))

/**
 * Reads a stored record, failing with a `Rejected` `RedisError` that names the key
 * when it is not a subscription.
 *
 * @since 0.3.0
 * @category codecs
 */
export const decodeRecord = (key: string, json: string): Effect.Effect<Subscription, RedisError> =>
  Effect.mapError(decodeJson(json), (error) =>
    new RedisError({
      reason: "Rejected",
      command: "GET",
      key,
      detail: `not a stored subscription: ${error.message}`
    }))

/**
 * A record as stored.
 *
 * @since 0.3.0
 * @category codecs
 */
export const encodeRecord = (subscription: Subscription): string => JSON.stringify(subscription)

/**
 * `<prefix>:ds:sub:{<id>}`: a subscription's key.
 *
 * @since 0.3.0
 * @category keys
 */
export const recordKey = (prefix: string, id: string): string => `${prefix}:ds:sub:{${id}}`

/**
 * `<prefix>:ds:subs`: the set of every subscription's id.
 *
 * @since 0.3.0
 * @category keys
 */
export const indexKey = (prefix: string): string => `${prefix}:ds:subs`

/**
 * `<prefix>:ds:sub-key`: the webhook signing key.
 *
 * @since 0.3.0
 * @category keys
 */
export const signingKeyKey = (prefix: string): string => `${prefix}:ds:sub-key`

/**
 * `{<prefix>:ds:subs}:owners`: how many subscriptions each subscriber holds (a hash;
 * the braces keep it in the slot of `indexKey`, so both change in one script).
 *
 * @since 0.3.0
 * @category keys
 */
export const ownerCountsKey = (prefix: string): string => `{${indexKey(prefix)}}:owners`

/**
 * `{<prefix>:ds:subs}:owner-of`: the subscriber of each subscription counted under one
 * (a hash, in the slot of `indexKey`).
 *
 * @since 0.3.0
 * @category keys
 */
export const ownerOfKey = (prefix: string): string => `{${indexKey(prefix)}}:owner-of`

/**
 * `{<prefix>:ds:subs}:rev`: a number every change of a subscription raises (a save, an
 * insert, a delete), in the slot of `indexKey`.
 *
 * @since 0.3.0
 * @category keys
 */
export const revisionKey = (prefix: string): string => `{${indexKey(prefix)}}:rev`

/**
 * The most subscriptions a store holds by default (docs/http.md#subscription-limits).
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultMaxSubscriptions = 10_000

/**
 * The storage of Durable Streams subscriptions: durable cursors over a set of streams
 * (matched by a glob pattern or named one by one) that wake a worker, by webhook or
 * through a wake stream, when the streams have entries past the cursors.
 *
 * Each subscription is one record (`Subscription`, stored as JSON) with a version
 * raised by every save, so that the protocol's decisions (wake, ack, claim, lease
 * expiry) are made once over a consistent record and saved conditionally, by any
 * number of servers. On Redis:
 *
 * - `<prefix>:ds:sub:{<id>}`, a hash: `v` (the version) and `r` (the record's JSON);
 * - `<prefix>:ds:subs`, a set: the ids of every subscription;
 * - `<prefix>:ds:sub-key`, a string: the webhook signing key, written once by the
 *   first server that needs one, so every server signs with the same key.
 *
 * Stream keys are `<prefix>:ds:{<name>}:...` (`DurableStore`), so none of these can
 * meet a stream's. Two layers implement it, with the same semantics: `layer`
 * (options) and `layerConfig` on Redis, and `layerMemory` in process.
 *
 * @since 0.3.0
 */
import type { RedisError } from "@sluice/redis/RedisError"
import type { LiveOptions } from "@sluice/redis/RedisStreamsLive"
import * as RedisStreamsLive from "@sluice/redis/RedisStreamsLive"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type { Subscription } from "./internal/subscriptionRecord.js"
import * as Live from "./internal/subscriptionsLive.js"
import * as Memory from "./internal/subscriptionsMemory.js"

/**
 * @since 0.3.0
 */
export {
  decodeRecord,
  encodeRecord,
  indexKey,
  Link,
  recordKey,
  signingKeyKey,
  Subscription,
  Wake
} from "./internal/subscriptionRecord.js"

/**
 * A subscription as loaded, with the version to save it against.
 *
 * @since 0.3.0
 * @category models
 */
export interface Versioned {
  readonly subscription: Subscription
  readonly version: number
}

/**
 * The operations. Every failure is a `RedisError`.
 *
 * @since 0.3.0
 * @category models
 */
export interface DurableSubscriptionsService {
  /** The subscription, if there is one. */
  readonly load: (id: string) => Effect.Effect<Option.Option<Versioned>, RedisError>
  /**
   * Saves the subscription if its version is still `expect` (0: there must be none);
   * whether it was saved.
   */
  readonly save: (subscription: Subscription, expect: number) => Effect.Effect<boolean, RedisError>
  /** Deletes the subscription: whether there was one. */
  readonly remove: (id: string) => Effect.Effect<boolean, RedisError>
  /** The ids of every subscription. */
  readonly ids: Effect.Effect<ReadonlyArray<string>, RedisError>
  /**
   * The names of the durable streams that may exist (on Redis, the `DurableStore`
   * keys under the prefix; in memory, the names `observe` was told about), for linking
   * the streams a new pattern matches.
   */
  readonly streamNames: Effect.Effect<ReadonlyArray<string>, RedisError>
  /** Tells the store a stream was written (`true`) or deleted (`false`). */
  readonly observe: (name: string, exists: boolean) => Effect.Effect<void>
  /** The stored signing key, or `candidate` stored as it when there is none yet. */
  readonly signingKey: (candidate: string) => Effect.Effect<string, RedisError>
}

/**
 * The storage of subscriptions.
 *
 * @since 0.3.0
 * @category tags
 */
export class DurableSubscriptions extends Context.Service<DurableSubscriptions, DurableSubscriptionsService>()(
  "@sluice/durable-streams/DurableSubscriptions"
) {}

/**
 * Connects to Redis and builds the store; the connection closes with the scope.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = Live.make

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
): Layer.Layer<DurableSubscriptions, RedisError | Config.ConfigError> =>
  Layer.effect(DurableSubscriptions, Effect.flatMap(Config.unwrap(options), (live) => make({ ...live, prefix })))

/**
 * The live layer from the given options.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (
  options: LiveOptions & { readonly prefix: string }
): Layer.Layer<DurableSubscriptions, RedisError> => Layer.effect(DurableSubscriptions, make(options))

/**
 * A layer with a fresh in-memory store.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerMemory: Layer.Layer<DurableSubscriptions> = Layer.effect(DurableSubscriptions, Memory.make)

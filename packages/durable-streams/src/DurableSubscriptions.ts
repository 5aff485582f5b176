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
 * - `<prefix>:ds:subs`, a set: the ids of every subscription, at most
 *   `maxSubscriptions` (10,000 by default; docs/http.md#subscription-limits);
 * - `{<prefix>:ds:subs}:owners` and `{<prefix>:ds:subs}:owner-of`, hashes in the set's
 *   slot: how many subscriptions each subscriber (a caller's key) holds, and whose each
 *   one is, changed with the set in one script;
 * - `{<prefix>:ds:subs}:rev`, a number raised by every save, insert and delete, after
 *   the record's change, so that a server that keeps what it read of the records can
 *   tell whether any changed (`revision`);
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
import { defaultMaxSubscriptions, type Subscription } from "./internal/subscriptionRecord.js"
import * as Live from "./internal/subscriptionsLive.js"
import * as Memory from "./internal/subscriptionsMemory.js"

/**
 * @since 0.3.0
 */
export {
  decodeRecord,
  defaultMaxSubscriptions,
  encodeRecord,
  indexKey,
  Link,
  ownerCountsKey,
  ownerOfKey,
  recordKey,
  revisionKey,
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
 * Who a new subscription is counted under, and the most that subscriber may hold.
 *
 * @since 0.3.0
 * @category models
 */
export interface Owner {
  readonly key: string
  readonly max: number
}

/**
 * How an insert ended: the subscription is stored (`Inserted`), or one with its id was
 * there (`Exists`: nothing written), or a limit is reached (`TooMany`: the store's
 * `total`, or the subscriber's `owner`, with that limit), nothing written.
 *
 * @since 0.3.0
 * @category models
 */
export type InsertOutcome =
  | { readonly _tag: "Inserted" }
  | { readonly _tag: "Exists" }
  | { readonly _tag: "TooMany"; readonly scope: "total" | "owner"; readonly limit: number }

/**
 * The options of a store: the most subscriptions it holds in all (10,000 by default;
 * docs/http.md#subscription-limits).
 *
 * @since 0.3.0
 * @category models
 */
export interface StoreOptions {
  readonly maxSubscriptions?: number | undefined
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
   * Saves the subscription if its version is still `expect` (0: there must be none,
   * and it is stored without the limits: `insert` applies them); whether it was saved.
   */
  readonly save: (subscription: Subscription, expect: number) => Effect.Effect<boolean, RedisError>
  /**
   * Stores a new subscription (version 1) within the limits: the store's
   * `maxSubscriptions` in all and, with an `owner`, its `max` for that subscriber,
   * counted in one atomic step with the set of ids (a crash between that step and the
   * record's write leaves the id counted until it is deleted).
   */
  readonly insert: (subscription: Subscription, owner: Owner | undefined) => Effect.Effect<InsertOutcome, RedisError>
  /** Deletes the subscription (and its count): whether there was one. */
  readonly remove: (id: string) => Effect.Effect<boolean, RedisError>
  /** The ids of every subscription. */
  readonly ids: Effect.Effect<ReadonlyArray<string>, RedisError>
  /** The version of each subscription named (0: none), in one round trip. */
  readonly versions: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<number>, RedisError>
  /**
   * A number that every save, insert and delete raises once its record has changed:
   * read before the records, it tells a reader that keeps them whether any changed
   * since (docs/http.md#subscription-limits).
   */
  readonly revision: Effect.Effect<number, RedisError>
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
  options: Config.Wrap<LiveOptions> = RedisStreamsLive.config,
  store: StoreOptions = {}
): Layer.Layer<DurableSubscriptions, RedisError | Config.ConfigError> =>
  Layer.effect(
    DurableSubscriptions,
    Effect.flatMap(Config.unwrap(options), (live) => make({ ...live, ...store, prefix }))
  )

/**
 * The live layer from the given options.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (
  options: LiveOptions & StoreOptions & { readonly prefix: string }
): Layer.Layer<DurableSubscriptions, RedisError> => Layer.effect(DurableSubscriptions, make(options))

/**
 * A fresh in-memory store with the given options.
 *
 * @since 0.3.0
 * @category constructors
 */
export const makeMemory = (options: StoreOptions = {}): Effect.Effect<DurableSubscriptionsService> =>
  Memory.make(options.maxSubscriptions ?? defaultMaxSubscriptions)

/**
 * A layer with a fresh in-memory store.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerMemory: Layer.Layer<DurableSubscriptions> = Layer.effect(DurableSubscriptions, makeMemory())

/**
 * A layer with a fresh in-memory store with the given options.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerMemoryWith = (options: StoreOptions): Layer.Layer<DurableSubscriptions> =>
  Layer.effect(DurableSubscriptions, makeMemory(options))

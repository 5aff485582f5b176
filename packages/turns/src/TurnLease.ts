/**
 * The producer's liveness lease of a turn. While a turn runs, its producer keeps the
 * key `<prefix>:turn:{turnId}:lease` alive with a short expiry, renewing it well
 * before it lapses; a producer that dies (killed, out of memory, its machine lost)
 * stops renewing, and within `leaseMs` anyone can see that the turn has nobody to end
 * it. A second key, `:leased`, lives as long as the turn's streams and says that the
 * turn had a lease at all.
 *
 * @since 0.3.0
 */
import type { RedisError } from "@sluice/redis/RedisError"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as LeaseKeeper from "./LeaseKeeper.js"
import * as TurnKeys from "./TurnKeys.js"

/**
 * How long a lease lives without renewal, and how often it is renewed.
 *
 * @since 0.3.0
 * @category models
 */
export interface LeaseOptions {
  /** Default 6000 ms. */
  readonly leaseMs?: number | undefined
  /** Default a third of `leaseMs`. */
  readonly renewEveryMs?: number | undefined
  /** How long the `:leased` mark lives: the turn's retention. Default 24 h. */
  readonly retentionMs?: number | undefined
}

/**
 * The default lease: 6 s, renewed every 2 s.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultLeaseMs = 6_000

/**
 * A held lease: `lost` completes if a renewal finds the lease gone (the producer was
 * paused past its expiry, and the turn may have been ended by someone else).
 *
 * @since 0.3.0
 * @category models
 */
export interface Lease {
  readonly lost: Deferred.Deferred<void>
}

/**
 * Takes the lease of a turn for the life of the scope: sets it, has it renewed (a
 * renewal that fails on a Redis error is retried at the next period), and deletes it
 * when the scope closes. The renewals are the `LeaseKeeper`'s in context, one fiber for
 * every lease of the process; without one, a keeper of this lease alone runs in the
 * scope. `onLost` runs, in the keeper's fiber, when a renewal finds the lease gone.
 *
 * @since 0.3.0
 * @category constructors
 */
export const hold = (
  prefix: string,
  turnId: string,
  options: LeaseOptions & { readonly onLost?: Effect.Effect<void> | undefined } = {}
): Effect.Effect<Lease, RedisError, RedisStreams | Scope.Scope> =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams
    const leaseMs = options.leaseMs ?? defaultLeaseMs
    const renewEveryMs = options.renewEveryMs ?? Math.max(1, Math.floor(leaseMs / 3))
    const lease = TurnKeys.leaseKey(prefix, turnId)
    yield* redis.setPx(TurnKeys.leasedKey(prefix, turnId), "1", options.retentionMs ?? 24 * 60 * 60 * 1000)
    yield* redis.setPx(lease, "1", leaseMs)
    const lost = yield* Deferred.make<void>()
    yield* Effect.addFinalizer(() => Effect.ignore(redis.pexpire(lease, 0)))
    const keeper = yield* Effect.serviceOption(LeaseKeeper.LeaseKeeper)
    const kept = { key: lease, leaseMs, renewEveryMs, lost, onLost: options.onLost }
    yield* Option.isSome(keeper) ? keeper.value.keep(kept) : Effect.flatMap(LeaseKeeper.make, (own) => own.keep(kept))
    return { lost }
  })

/**
 * A turn's lease as a reader sees it: `held`, `lapsed` (the turn had one and it
 * expired), or `none` (the turn never had one, or its retention is over).
 *
 * @since 0.3.0
 * @category models
 */
export type LeaseState = "held" | "lapsed" | "none"

/**
 * Reads the state of a turn's lease.
 *
 * @since 0.3.0
 * @category accessors
 */
export const state = (prefix: string, turnId: string): Effect.Effect<LeaseState, RedisError, RedisStreams> =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams
    if (Option.isSome(yield* redis.get(TurnKeys.leaseKey(prefix, turnId)))) return "held"
    return Option.isSome(yield* redis.get(TurnKeys.leasedKey(prefix, turnId))) ? "lapsed" : "none"
  })

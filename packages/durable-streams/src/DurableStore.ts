/**
 * The storage of durable streams (append-only, offset-addressed byte streams that
 * clients create, append to, close and read over HTTP), as a service on Redis
 * structures. Each stream `name` has four keys sharing the hash tag `{name}`:
 *
 * - `<prefix>:ds:{<name>}:meta`, a hash: the stream's settings (content type, TTL or
 *   expiry time, closed flag, the producers' epochs and sequence numbers, ...), its
 *   version (`v`, raised by every commit), its number of entries (`n`), its last entry
 *   id (`tail`), its last change signal (`s`) and, for a fork, its level in its chain
 *   of forks (`dp`);
 * - `<prefix>:ds:{<name>}:data`, a stream: one entry per append, ids `0-1`, `0-2`, ...,
 *   the bytes in field `d`;
 * - `<prefix>:ds:{<name>}:sig`, a stream of one entry, replaced by every commit, that
 *   waiting readers block on;
 * - `<prefix>:ds:{<name>}:forks`, a hash: the forks that read this stream's data (one
 *   field `<fork name> <link token>` per fork, valued with the time it was linked).
 *
 * A fork is a stream created from a source at a fork point (an entry id of the
 * source): it reads the source's entries up to that point, then its own, whose ids
 * continue after the fork point. A chain of forks goes at most `maxForkDepth` levels
 * deep (100 by default; docs/http.md#fork-depth): a read, a commit with a TTL and a
 * delete go up the chain a step a level. Its metadata hash links it to its source (`src`, `at`,
 * `lnk`); the source's `forks` hash links back. A source deleted (or expired) while
 * forks still read it is gone for its own readers and writers but keeps its data until
 * the last fork goes (see `fork` and `remove` for the order of the steps across Redis
 * Cluster slots).
 *
 * Every change is one conditional commit: it applies only if the stream's version is
 * still the one the caller read (optimistic concurrency; a Lua script on Redis), so
 * the protocol's rules are decided once, by the caller, over a consistent state. An
 * expiry (a sliding TTL or a fixed time) is the keys' own `PEXPIRE`/`PEXPIREAT`, with
 * the deadline also kept in the hash (`dl`); while forks read a stream its keys never
 * expire sooner than theirs (a fork extends its sources' expiry first), and past its
 * deadline it is gone.
 *
 * Two layers implement it: `DurableStoreLive` on ioredis and `DurableStoreMemory` in
 * process, with the same semantics.
 *
 * @since 0.3.0
 */
import type { RedisError } from "@sluice/redis/RedisError"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"

/**
 * One stored append: its entry id (`0-<n>`) and its bytes.
 *
 * @since 0.3.0
 * @category models
 */
export interface DurableEntry {
  readonly id: string
  readonly data: Uint8Array
}

/**
 * A stream as loaded: its settings (`meta`, the hash without the bookkeeping fields),
 * its version, its last entry id (`0-0` when empty) and the signal to wait from.
 *
 * @since 0.3.0
 * @category models
 */
export interface DurableState {
  readonly meta: Readonly<Record<string, string>>
  readonly version: number
  readonly tail: string
  readonly signal: string
  /** The source and fork point of a fork. */
  readonly forkOf: Option.Option<ForkPoint>
  /** How many forks read this stream's data. */
  readonly forks: number
  /** Deleted or expired, kept only for the forks that read its data. */
  readonly gone: boolean
}

/**
 * Where a fork branches off: its source's name and the last entry id of the source it
 * reads (`0-0`: none).
 *
 * @since 0.3.0
 * @category models
 */
export interface ForkPoint {
  readonly source: string
  readonly at: string
}

/**
 * The creation of a fork: the fork point, the fork's settings, its first entries (ids
 * after the fork point) and its expiry.
 *
 * @since 0.3.0
 * @category models
 */
export interface ForkCommit extends ForkPoint {
  readonly set: Readonly<Record<string, string>>
  readonly append: ReadonlyArray<Uint8Array>
  readonly expiry: Expiry
}

/**
 * How a fork's creation ended: created (the ids of its first entries), or not, because
 * the name is taken, the source does not exist, the source is gone (deleted or expired,
 * kept for its forks), the source is a fork already `limit` levels deep (`depth`: its
 * level), or the fork point is after the source's last entry.
 *
 * @since 0.3.0
 * @category models
 */
export type ForkOutcome =
  | { readonly _tag: "Forked"; readonly ids: ReadonlyArray<string> }
  | { readonly _tag: "Exists" }
  | { readonly _tag: "SourceMissing" }
  | { readonly _tag: "SourceGone" }
  | { readonly _tag: "TooDeep"; readonly depth: number; readonly limit: number }
  | { readonly _tag: "BeyondTail"; readonly tail: string }

/**
 * How a delete ended: the stream is removed; or deleted but kept, gone, for the forks
 * that read it (`SoftDeleted`); or there was none (`Missing`); or it was already gone.
 *
 * @since 0.3.0
 * @category models
 */
export type RemoveOutcome = "Removed" | "SoftDeleted" | "Missing" | "Gone"

/**
 * How a commit leaves the stream's expiry: none (`Persist`), `ms` milliseconds from
 * now (`After`, a sliding TTL), or at an epoch time (`At`).
 *
 * @since 0.3.0
 * @category models
 */
export type Expiry =
  | { readonly _tag: "Persist" }
  | { readonly _tag: "After"; readonly ms: number }
  | { readonly _tag: "At"; readonly epochMs: number }

/**
 * A conditional change: applied only if the stream's version is `expect` (0: the
 * stream must not exist; it is then created empty). `set` writes settings, `append`
 * adds entries in order, `expiry` sets the expiry of every key of the stream.
 *
 * @since 0.3.0
 * @category models
 */
export interface Commit {
  readonly expect: number
  readonly set: Readonly<Record<string, string>>
  readonly append: ReadonlyArray<Uint8Array>
  readonly expiry: Expiry
}

/**
 * The operations. Every failure is a `RedisError`; on Redis, a command that gets no
 * reply within the connection's command timeout fails `Unavailable`.
 *
 * @since 0.3.0
 * @category models
 */
export interface DurableStoreService {
  /** The stream's state, if it exists (and has not expired). */
  readonly load: (name: string) => Effect.Effect<Option.Option<DurableState>, RedisError>
  /** Applies a commit; the ids of the appended entries, or none on a version conflict. */
  readonly commit: (name: string, commit: Commit) => Effect.Effect<Option.Option<ReadonlyArray<string>>, RedisError>
  /**
   * Creates the fork `name` of a stream. Three steps, each atomic on the slot it
   * touches: the source links the fork (checking that it exists, is not gone and holds
   * the fork point, and extending its expiry to cover the fork's); the expiry of the
   * source's own sources is extended the same way; the fork is created (its name must
   * be free; when it is taken the link is undone). A crash between the steps leaves a
   * link without a fork (and sources that expire later than they need), which keeps the
   * source's data until the link is pruned (once it is old enough, when the source is
   * next deleted or read gone), never a fork without its source. A source already at
   * the store's deepest level is not linked (`TooDeep`).
   */
  readonly fork: (name: string, fork: ForkCommit) => Effect.Effect<ForkOutcome, RedisError>
  /**
   * Up to `count` entries after the entry id `after` (exclusive); for a fork, its
   * source's entries up to the fork point, then its own: linear in the chain's depth
   * (a step up a level, then down while the page has room), each entry read once.
   */
  readonly read: (name: string, after: string, count: number) => Effect.Effect<ReadonlyArray<DurableEntry>, RedisError>
  /** Sets the expiry of an existing stream (a read renews a sliding TTL). */
  readonly touch: (name: string, expiry: Expiry) => Effect.Effect<void, RedisError>
  /**
   * Deletes the stream; waiting readers wake. A stream that forks still read is only
   * marked deleted (gone). Removing a fork unlinks it from its source, and a source
   * gone with no fork left is removed in turn, up the chain (one step per slot: a crash
   * in between leaves a gone source until its links are pruned).
   */
  readonly remove: (name: string) => Effect.Effect<RemoveOutcome, RedisError>
  /**
   * Waits until the stream changes after the state whose `signal` is given, for at
   * most `timeoutMs`: whether it changed, was deleted or expired before the time ran
   * out. A wait ends at the stream's deadline (its TTL or expiry time) as it ends at a
   * delete, so a waiting reader learns of the expiry then; a stream already gone (over,
   * kept for its forks) has nothing to wait for.
   */
  readonly awaitChange: (name: string, signal: string, timeoutMs: number) => Effect.Effect<boolean, RedisError>
}

/**
 * The storage of durable streams.
 *
 * @since 0.3.0
 * @category tags
 */
export class DurableStore
  extends Context.Service<DurableStore, DurableStoreService>()("@sluice/durable-streams/DurableStore")
{}

/**
 * The fields of the metadata hash that the store keeps for itself.
 *
 * @since 0.3.0
 * @category constants
 */
export const bookkeeping: ReadonlySet<string> = new Set(["v", "n", "tail", "s", "src", "at", "lnk", "del", "dl", "dp"])

/**
 * `<prefix>:ds:{<name>}:<part>`: a key of a durable stream. The `ds` segment keeps
 * durable streams apart from turns (`<prefix>:turn:...`): no write to a durable
 * stream can reach a turn's streams.
 *
 * @since 0.3.0
 * @category keys
 */
export const key = (prefix: string, name: string, part: "meta" | "data" | "sig" | "forks"): string =>
  `${prefix}:ds:{${name}}:${part}`

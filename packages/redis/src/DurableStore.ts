/**
 * The storage of durable streams (append-only, offset-addressed byte streams that
 * clients create, append to, close and read over HTTP), as a service on Redis
 * structures. Each stream `name` has three keys sharing the hash tag `{name}`:
 *
 * - `<prefix>:ds:{<name>}:meta`, a hash: the stream's settings (content type, TTL or
 *   expiry time, closed flag, the producers' epochs and sequence numbers, ...), its
 *   version (`v`, raised by every commit), its number of entries (`n`), its last entry
 *   id (`tail`) and its last change signal (`s`);
 * - `<prefix>:ds:{<name>}:data`, a stream: one entry per append, ids `0-1`, `0-2`, ...,
 *   the bytes in field `d`;
 * - `<prefix>:ds:{<name>}:sig`, a stream of one entry, replaced by every commit, that
 *   waiting readers block on.
 *
 * Every change is one conditional commit: it applies only if the stream's version is
 * still the one the caller read (optimistic concurrency; a Lua script on Redis), so
 * the protocol's rules are decided once, by the caller, over a consistent state. An
 * expiry (a sliding TTL or a fixed time) is the keys' own `PEXPIRE`/`PEXPIREAT`.
 *
 * Two layers implement it: `DurableStoreLive` on ioredis and `DurableStoreMemory` in
 * process, with the same semantics.
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { RedisError } from "./RedisError.js"

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
}

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
 * The operations. Every failure is a `RedisError`.
 *
 * @since 0.3.0
 * @category models
 */
export interface DurableStoreService {
  /** The stream's state, if it exists (and has not expired). */
  readonly load: (name: string) => Effect.Effect<Option.Option<DurableState>, RedisError>
  /** Applies a commit; the ids of the appended entries, or none on a version conflict. */
  readonly commit: (name: string, commit: Commit) => Effect.Effect<Option.Option<ReadonlyArray<string>>, RedisError>
  /** Up to `count` entries after the entry id `after` (exclusive). */
  readonly read: (name: string, after: string, count: number) => Effect.Effect<ReadonlyArray<DurableEntry>, RedisError>
  /** Sets the expiry of an existing stream (a read renews a sliding TTL). */
  readonly touch: (name: string, expiry: Expiry) => Effect.Effect<void, RedisError>
  /** Deletes the stream: whether it existed. Waiting readers wake. */
  readonly remove: (name: string) => Effect.Effect<boolean, RedisError>
  /**
   * Waits until the stream changes after the state whose `signal` is given, for at
   * most `timeoutMs`: whether it changed (or was deleted) before the time ran out.
   */
  readonly awaitChange: (name: string, signal: string, timeoutMs: number) => Effect.Effect<boolean, RedisError>
}

/**
 * The storage of durable streams.
 *
 * @since 0.3.0
 * @category tags
 */
export class DurableStore extends Context.Tag("@sluice/redis/DurableStore")<DurableStore, DurableStoreService>() {}

/**
 * The fields of the metadata hash that the store keeps for itself.
 *
 * @since 0.3.0
 * @category constants
 */
export const bookkeeping: ReadonlySet<string> = new Set(["v", "n", "tail", "s"])

/**
 * `<prefix>:ds:{<name>}:<part>`: a key of a durable stream. The `ds` segment keeps
 * durable streams apart from turns (`<prefix>:turn:...`): no write to a durable
 * stream can reach a turn's streams.
 *
 * @since 0.3.0
 * @category keys
 */
export const key = (prefix: string, name: string, part: "meta" | "data" | "sig"): string =>
  `${prefix}:ds:{${name}}:${part}`

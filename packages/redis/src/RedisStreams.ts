/**
 * The Redis commands Sluice uses, as a service: append to a stream (one entry, or a
 * batch in one pipeline), read a range, follow a stream with blocking reads, expire a
 * key, and keep a sorted set (the index of recent turns). The shape stays close to
 * the commands themselves so that another client can implement it.
 *
 * Two layers implement it: `RedisStreamsLive` on ioredis and `RedisStreamsMemory` in
 * process, with the same semantics.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Result from "effect/Result"
import type * as Stream from "effect/Stream"
import { defaultMaxBytes } from "./ReadBudget.js"
import type { RedisError } from "./RedisError.js"
import type { Fields, StreamEntry } from "./StreamEntry.js"

/**
 * Options of `XADD`.
 *
 * - `maxLen`: trim the stream to about this many entries (`MAXLEN ~ n`): Redis may keep
 *   some more (it trims whole internal nodes), never fewer.
 *
 * @since 0.1.0
 * @category models
 */
export interface XAddOptions {
  readonly maxLen?: number | undefined
}

/**
 * One entry to append: `id` is `*` (Redis picks `<now>-<seq>`), `<ms>-*` (Redis picks
 * the sequence) or a complete `<ms>-<seq>` that must be greater than the stream's top
 * item. `fields` may be made when read (a getter: the turn writer's entries make their
 * JSON only when written), so an implementation reads it once per write.
 *
 * @since 0.1.0
 * @category models
 */
export interface XAddEntry {
  readonly id: string
  readonly fields: Fields
}

/**
 * Options of a tail.
 *
 * - `after`: read entries after this id (exclusive); `0-0`, the default, reads the
 *   whole stream first, then follows it.
 * - `until`: end the stream after the first entry that satisfies it (that entry
 *   included). Without it the tail follows the stream until it is interrupted.
 * - `count`: the most entries one read returns (default 256).
 * - `maxBytes`: about the most bytes one read returns (default 4 MiB): each read's
 *   count is sized from the largest entry seen so far (`ReadBudget`).
 * - `blockMs`: the longest a single blocking read waits before it is repeated
 *   (default 5000); it bounds how long a dead connection goes unnoticed.
 *
 * @since 0.1.0
 * @category models
 */
export interface TailOptions {
  readonly after?: string | undefined
  readonly until?: ((entry: StreamEntry) => boolean) | undefined
  readonly count?: number | undefined
  readonly maxBytes?: number | undefined
  readonly blockMs?: number | undefined
}

/**
 * A member of a sorted set and its score.
 *
 * @since 0.1.0
 * @category models
 */
export interface ScoredMember {
  readonly member: string
  readonly score: number
}

/**
 * Options of a score range read: `reverse` reads from the highest score down, `offset`
 * and `count` page the result (`LIMIT`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ZRangeOptions {
  readonly reverse?: boolean | undefined
  readonly offset?: number | undefined
  readonly count?: number | undefined
}

/**
 * The commands. Every failure is a `RedisError` whose `reason` tells a too-small id
 * (`IdTooSmall`), a lost connection (`Unavailable`) and a refused command (`Rejected`)
 * apart.
 *
 * Score bounds take `-Infinity` and `Infinity` for `-inf` and `+inf`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RedisStreamsService {
  /**
   * `XADD key [MAXLEN ~ n] id field value ...`: the id of the new entry.
   */
  readonly xadd: (key: string, entry: XAddEntry, options?: XAddOptions) => Effect.Effect<string, RedisError>
  /**
   * The `XADD`s of `entries`, in order, in one pipeline. Each entry succeeds or fails on
   * its own; the effect itself fails only when the pipeline could not be sent.
   */
  readonly xaddAll: (
    key: string,
    entries: ReadonlyArray<XAddEntry>,
    options?: XAddOptions
  ) => Effect.Effect<ReadonlyArray<Result.Result<string, RedisError>>, RedisError>
  /**
   * `XRANGE key start end [COUNT n]`. Bounds are `-`, `+`, an id, a bare millisecond,
   * or any of these but `-`/`+` prefixed by `(` to exclude it.
   */
  readonly xrange: (
    key: string,
    start: string,
    end: string,
    count?: number
  ) => Effect.Effect<ReadonlyArray<StreamEntry>, RedisError>
  /**
   * Appends `entries` (each at its own explicit id) in one atomic step, only when the
   * stream's last entry is `after` at that moment: `true` when every entry was
   * written, `false` (and nothing written) when the stream is missing or its last
   * entry is another one. On Redis one Lua script (`XREVRANGE`, then the `XADD`s), so
   * no reader or writer ever sees part of it.
   */
  readonly xaddAfter: (
    key: string,
    after: string,
    entries: ReadonlyArray<XAddEntry>
  ) => Effect.Effect<boolean, RedisError>
  /**
   * `XDEL key id ...`: how many of the entries were there and are now deleted. The
   * stream's top id stays where it was, so a deleted id can never be written again.
   */
  readonly xdel: (key: string, ids: ReadonlyArray<string>) => Effect.Effect<number, RedisError>
  /**
   * `XLEN key`: 0 for a missing key.
   */
  readonly xlen: (key: string) => Effect.Effect<number, RedisError>
  /**
   * `XREVRANGE key + - COUNT 1`: the stream's last entry, if it has one.
   */
  readonly xlast: (key: string) => Effect.Effect<Option.Option<StreamEntry>, RedisError>
  /**
   * `SET key value PX ms`: a string value that expires after `ms` milliseconds.
   */
  readonly setPx: (key: string, value: string, ms: number) => Effect.Effect<void, RedisError>
  /**
   * `GET key`: the string value, if the key holds one.
   */
  readonly get: (key: string) => Effect.Effect<Option.Option<string>, RedisError>
  /**
   * The entries after `options.after`, then every entry appended later, read with
   * `XREAD BLOCK`, until `options.until` matches or the stream is interrupted. A live
   * tail holds a connection of its own while it runs.
   */
  readonly tail: (key: string, options?: TailOptions) => Stream.Stream<StreamEntry, RedisError>
  /**
   * `PEXPIRE key ms`: whether the key exists (and now expires). A non-positive `ms`
   * deletes the key.
   */
  readonly pexpire: (key: string, ms: number) => Effect.Effect<boolean, RedisError>
  /**
   * `PTTL key`: the milliseconds left, `-1` without an expiry, `-2` for a missing key.
   */
  readonly pttl: (key: string) => Effect.Effect<number, RedisError>
  /**
   * `ZADD key [NX] score member`: whether the member was added. `onlyNew` keeps the
   * score of a member that is already there.
   */
  readonly zadd: (
    key: string,
    score: number,
    member: string,
    options?: { readonly onlyNew?: boolean | undefined }
  ) => Effect.Effect<boolean, RedisError>
  /**
   * `ZRANGE key min max BYSCORE [REV] [LIMIT offset count] WITHSCORES`, with bounds
   * given low to high in either direction.
   */
  readonly zrangeByScore: (
    key: string,
    min: number,
    max: number,
    options?: ZRangeOptions
  ) => Effect.Effect<ReadonlyArray<ScoredMember>, RedisError>
  /**
   * `ZREMRANGEBYSCORE key min max`: how many members were removed.
   */
  readonly zremRangeByScore: (key: string, min: number, max: number) => Effect.Effect<number, RedisError>
}

/**
 * The Redis commands Sluice uses.
 *
 * @since 0.1.0
 * @category tags
 */
export class RedisStreams extends Context.Service<RedisStreams, RedisStreamsService>()("@sluice/redis/RedisStreams") {}

/**
 * Defaults of a tail.
 *
 * @since 0.1.0
 * @category constants
 */
export const tailDefaults = { after: "0-0", count: 256, maxBytes: defaultMaxBytes, blockMs: 5000 } as const

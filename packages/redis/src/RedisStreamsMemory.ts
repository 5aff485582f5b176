/**
 * `RedisStreams` in process memory, with the semantics of Redis: `<ms>-<seq>` ids that
 * only grow (`*` from Effect's `Clock`), the explicit-id rules of `XADD`, `MAXLEN`
 * trimming, `XDEL` (a deleted id stays below the top id), tail reads sized by
 * `ReadBudget`, blocking tails woken by appends, and key expiry on Effect's `Clock` (so
 * `TestClock` drives it). For unit tests and the command line's embedded default;
 * nothing survives the process.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as EntryId from "./EntryId.js"
import * as ReadBudget from "./ReadBudget.js"
import { RedisError } from "./RedisError.js"
import type { RedisStreamsService, ScoredMember, XAddEntry, XAddOptions, ZRangeOptions } from "./RedisStreams.js"
import { RedisStreams, tailDefaults } from "./RedisStreams.js"
import type { StreamEntry } from "./StreamEntry.js"

interface StoredEntry {
  readonly key: EntryId.EntryId
  readonly entry: StreamEntry
}

interface StreamValue {
  readonly type: "stream"
  entries: Array<StoredEntry>
  head: number
  lastId: EntryId.EntryId
}

interface SortedSetValue {
  readonly type: "zset"
  readonly members: Map<string, number>
}

interface StringValue {
  readonly type: "string"
  readonly value: string
}

interface Slot {
  readonly value: StreamValue | SortedSetValue | StringValue
  expiresAt: number | undefined
}

const wrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"
const invalidId = "ERR Invalid stream ID specified as stream command argument"
const notInteger = "ERR value is not an integer or out of range"

/**
 * A fresh, empty in-memory store.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<RedisStreamsService> = Effect.sync(() => {
  const slots = new Map<string, Slot>()
  const signals = new Map<string, Deferred.Deferred<void>>()

  const reject = (command: string, key: string, detail: string, reason: RedisError["reason"] = "Rejected") =>
    new RedisError({ reason, command, key, detail })

  const live = (key: string, now: number): Slot | undefined => {
    const slot = slots.get(key)
    if (slot === undefined) return undefined
    if (slot.expiresAt !== undefined && slot.expiresAt <= now) {
      slots.delete(key)
      return undefined
    }
    return slot
  }

  const streamOf = (command: string, key: string, now: number): Result.Result<StreamValue | undefined, RedisError> => {
    const slot = live(key, now)
    if (slot === undefined) return Result.succeed(undefined)
    return slot.value.type === "stream" ? Result.succeed(slot.value) : Result.fail(reject(command, key, wrongType))
  }

  const zsetOf = (command: string, key: string, now: number): Result.Result<SortedSetValue | undefined, RedisError> => {
    const slot = live(key, now)
    if (slot === undefined) return Result.succeed(undefined)
    return slot.value.type === "zset" ? Result.succeed(slot.value) : Result.fail(reject(command, key, wrongType))
  }

  const withNow = <A>(f: (now: number) => Result.Result<A, RedisError>): Effect.Effect<A, RedisError> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.suspend(() => Effect.fromResult(f(now))))

  const wake = (key: string): void => {
    const signal = signals.get(key)
    if (signal !== undefined) {
      signals.delete(key)
      Deferred.doneUnsafe(signal, Effect.void)
    }
  }

  const nextId = (
    key: string,
    requested: string,
    last: EntryId.EntryId,
    now: number
  ): Result.Result<EntryId.EntryId, RedisError> => {
    const tooSmall = (detail: string) => Result.fail(reject("XADD", key, detail, "IdTooSmall"))
    const equalOrSmaller = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
    if (requested === "*") {
      const ms = BigInt(now)
      if (ms > last.ms) return Result.succeed({ ms, seq: 0n })
      return Option.match(EntryId.next(last), { onNone: () => tooSmall(equalOrSmaller), onSome: Result.succeed })
    }
    if (requested.endsWith("-*")) {
      const ms = EntryId.parse(`${requested.slice(0, -2)}-0`)
      if (Option.isNone(ms)) return Result.fail(reject("XADD", key, invalidId))
      if (ms.value.ms > last.ms) return Result.succeed(ms.value)
      if (ms.value.ms === last.ms && last.seq < EntryId.maxPart) {
        return Result.succeed({ ms: last.ms, seq: last.seq + 1n })
      }
      return tooSmall(equalOrSmaller)
    }
    const id = EntryId.parse(requested.includes("-") ? requested : `${requested}-0`)
    if (Option.isNone(id)) return Result.fail(reject("XADD", key, invalidId))
    if (EntryId.order(id.value, EntryId.zero) === 0) {
      return tooSmall("ERR The ID specified in XADD must be greater than 0-0")
    }
    return EntryId.order(id.value, last) > 0 ? Result.succeed(id.value) : tooSmall(equalOrSmaller)
  }

  const append = (
    key: string,
    entry: XAddEntry,
    options: XAddOptions | undefined,
    now: number
  ): Result.Result<string, RedisError> => {
    // read once: an entry may make its fields when they are read
    const fields = entry.fields
    if (fields.length === 0) {
      return Result.fail(reject("XADD", key, "ERR wrong number of arguments for 'xadd' command"))
    }
    const maxLen = options?.maxLen
    if (maxLen !== undefined && !(Number.isSafeInteger(maxLen) && maxLen >= 0)) {
      return Result.fail(reject("XADD", key, "ERR The MAXLEN argument must be >= 0."))
    }
    return Result.flatMap(
      streamOf("XADD", key, now),
      (existing) =>
        Result.map(nextId(key, entry.id, existing?.lastId ?? EntryId.zero, now), (id) => {
          const stream: StreamValue = existing ?? { type: "stream", entries: [], head: 0, lastId: EntryId.zero }
          if (existing === undefined) slots.set(key, { value: stream, expiresAt: undefined })
          const formatted = EntryId.format(id)
          stream.entries.push({
            key: id,
            entry: { id: formatted, fields: fields.map(([f, v]) => [f, v] as const) }
          })
          stream.lastId = id
          if (maxLen !== undefined) trim(stream, maxLen)
          wake(key)
          return formatted
        })
    )
  }

  const trim = (stream: StreamValue, maxLen: number): void => {
    const length = stream.entries.length - stream.head
    if (length > maxLen) stream.head += length - maxLen
    if (stream.head > 1024 && stream.head * 2 > stream.entries.length) {
      stream.entries = stream.entries.slice(stream.head)
      stream.head = 0
    }
  }

  // The index of the first entry whose id is at least `id`.
  const lowerBound = (stream: StreamValue, id: EntryId.EntryId): number => {
    let low = stream.head
    let high = stream.entries.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (EntryId.order(stream.entries[middle]!.key, id) < 0) low = middle + 1
      else high = middle
    }
    return low
  }

  const read = (
    stream: StreamValue | undefined,
    from: EntryId.EntryId,
    to: EntryId.EntryId,
    count: number
  ): Array<StreamEntry> => {
    const out: Array<StreamEntry> = []
    if (stream === undefined || EntryId.order(from, to) > 0) return out
    for (let i = lowerBound(stream, from); i < stream.entries.length && out.length < count; i++) {
      const stored = stream.entries[i]!
      if (EntryId.order(stored.key, to) > 0) break
      out.push(stored.entry)
    }
    return out
  }

  const bound = (key: string, text: string, side: "start" | "end") =>
    Option.match(EntryId.parseBound(text, side), {
      onNone: () => Result.fail(reject("XRANGE", key, invalidId)),
      onSome: Result.succeed
    })

  const xrange = (key: string, start: string, end: string, count?: number) =>
    withNow((now) =>
      Result.gen(function*() {
        const from = yield* bound(key, start, "start")
        const to = yield* bound(key, end, "end")
        if (count !== undefined && !Number.isSafeInteger(count)) {
          return yield* Result.fail(reject("XRANGE", key, notInteger))
        }
        const stream = yield* streamOf("XRANGE", key, now)
        if (Option.isNone(from) || Option.isNone(to)) return []
        return read(stream, from.value, to.value, count === undefined ? Number.MAX_SAFE_INTEGER : Math.max(count, 0))
      })
    )

  const xdel = (key: string, ids: ReadonlyArray<string>) =>
    withNow((now) =>
      Result.gen(function*() {
        const targets: Array<EntryId.EntryId> = []
        for (const text of ids) {
          const id = EntryId.parse(text.includes("-") ? text : `${text}-0`)
          if (Option.isNone(id)) return yield* Result.fail(reject("XDEL", key, invalidId))
          targets.push(id.value)
        }
        const stream = yield* streamOf("XDEL", key, now)
        if (stream === undefined) return 0
        let deleted = 0
        for (const id of targets) {
          const at = lowerBound(stream, id)
          const found = stream.entries[at]
          if (found !== undefined && EntryId.order(found.key, id) === 0) {
            stream.entries.splice(at, 1)
            deleted++
          }
        }
        return deleted
      })
    )

  const tail: RedisStreamsService["tail"] = (key, options) => {
    const pages = ReadBudget.pager({
      maxCount: options?.count ?? tailDefaults.count,
      maxBytes: options?.maxBytes ?? tailDefaults.maxBytes
    })
    const until = options?.until
    const start = options?.after ?? tailDefaults.after
    // As XREAD: a bare millisecond means its first id.
    const after = EntryId.parse(start.includes("-") ? start : `${start}-0`)
    if (Option.isNone(after)) return Stream.fail(reject("XREAD", key, invalidId))
    // Reads the entries after `from`, or waits for the next append to the key.
    const readOrWait = (from: EntryId.EntryId): Effect.Effect<Array<StreamEntry>, RedisError> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.suspend(() => {
          const stream = streamOf("XREAD", key, now)
          if (Result.isFailure(stream)) return Effect.fail(stream.failure)
          const start = EntryId.next(from)
          const entries = Option.isSome(start) ? read(stream.success, start.value, EntryId.max, pages.count()) : []
          if (entries.length > 0) {
            pages.seen(entries)
            return Effect.succeed(entries)
          }
          let signal = signals.get(key)
          if (signal === undefined) {
            signal = Deferred.makeUnsafe<void>()
            signals.set(key, signal)
          }
          return Effect.andThen(Deferred.await(signal), readOrWait(from))
        }))
    return Stream.paginate(after.value, (from) =>
      Effect.map(readOrWait(from), (entries) => {
        const stop = until === undefined ? -1 : entries.findIndex(until)
        const taken = stop < 0 ? entries : entries.slice(0, stop + 1)
        const last = EntryId.parse(taken[taken.length - 1]!.id)
        return [taken, stop < 0 ? Option.some(Option.getOrElse(last, () => from)) : Option.none()] as const
      }))
  }

  const sortedMembers = (zset: SortedSetValue | undefined, min: number, max: number): Array<ScoredMember> => {
    if (zset === undefined) return []
    const members: Array<ScoredMember> = []
    for (const [member, score] of zset.members) {
      if (score >= min && score <= max) members.push({ member, score })
    }
    return members.sort((a, b) => a.score - b.score || (a.member < b.member ? -1 : a.member > b.member ? 1 : 0))
  }

  const checkScore = (command: string, key: string, ...scores: Array<number>): Result.Result<void, RedisError> =>
    scores.some(Number.isNaN) ? Result.fail(reject(command, key, "ERR min or max is not a float")) : Result.void

  const service: RedisStreamsService = {
    xadd: (key, entry, options) => withNow((now) => append(key, entry, options, now)),
    xaddAfter: (key, after, entries) =>
      withNow((now) =>
        Result.gen(function*() {
          const stream = yield* streamOf("XREVRANGE", key, now)
          const last = stream === undefined || stream.entries.length === stream.head
            ? undefined
            : stream.entries[stream.entries.length - 1]!.entry.id
          if (last !== after) return false
          // Checked first, so that the entries are written all or none (their fields
          // read once, here).
          const fixed = entries.map((entry): XAddEntry => ({ id: entry.id, fields: entry.fields }))
          let top = stream!.lastId
          for (const entry of fixed) {
            if (entry.fields.length === 0) {
              return yield* Result.fail(reject("XADD", key, "ERR wrong number of arguments for 'xadd' command"))
            }
            top = yield* nextId(key, entry.id, top, now)
          }
          for (const entry of fixed) yield* append(key, entry, undefined, now)
          return true
        })
      ),
    xaddAll: (key, entries, options) =>
      withNow((now) => Result.succeed(entries.map((entry) => append(key, entry, options, now)))),
    xrange,
    xdel,
    xlen: (key) =>
      withNow((now) =>
        Result.map(
          streamOf("XLEN", key, now),
          (stream) => stream === undefined ? 0 : stream.entries.length - stream.head
        )
      ),
    xlast: (key) =>
      withNow((now) =>
        Result.map(
          streamOf("XREVRANGE", key, now),
          (stream) =>
            stream === undefined || stream.entries.length === stream.head
              ? Option.none()
              : Option.some(stream.entries[stream.entries.length - 1]!.entry)
        )
      ),
    setPx: (key, value, ms) =>
      withNow((now) => {
        if (!Number.isSafeInteger(ms) || ms <= 0) {
          return Result.fail(reject("SET", key, "ERR invalid expire time in 'set' command"))
        }
        slots.set(key, { value: { type: "string", value }, expiresAt: now + ms })
        return Result.void
      }),
    get: (key) =>
      withNow((now) => {
        const slot = live(key, now)
        if (slot === undefined) return Result.succeed(Option.none())
        return slot.value.type === "string"
          ? Result.succeed(Option.some(slot.value.value))
          : Result.fail(reject("GET", key, wrongType))
      }),
    tail,
    pexpire: (key, ms) =>
      withNow((now) => {
        if (!Number.isSafeInteger(ms)) return Result.fail(reject("PEXPIRE", key, notInteger))
        const slot = live(key, now)
        if (slot === undefined) return Result.succeed(false)
        if (ms <= 0) slots.delete(key)
        else slot.expiresAt = now + ms
        return Result.succeed(true)
      }),
    pttl: (key) =>
      withNow((now) => {
        const slot = live(key, now)
        return Result.succeed(slot === undefined ? -2 : slot.expiresAt === undefined ? -1 : slot.expiresAt - now)
      }),
    zadd: (key, score, member, options) =>
      withNow((now) =>
        Result.gen(function*() {
          if (Number.isNaN(score)) return yield* Result.fail(reject("ZADD", key, "ERR value is not a valid float"))
          const existing = yield* zsetOf("ZADD", key, now)
          const zset: SortedSetValue = existing ?? { type: "zset", members: new Map() }
          if (existing === undefined) slots.set(key, { value: zset, expiresAt: undefined })
          const had = zset.members.has(member)
          if (!(had && options?.onlyNew === true)) zset.members.set(member, score)
          return !had
        })
      ),
    zrangeByScore: (key, min, max, options?: ZRangeOptions) =>
      withNow((now) =>
        Result.gen(function*() {
          yield* checkScore("ZRANGE", key, min, max)
          const members = sortedMembers(yield* zsetOf("ZRANGE", key, now), min, max)
          if (options?.reverse === true) members.reverse()
          const offset = Math.max(0, options?.offset ?? 0)
          const count = options?.count
          return count === undefined || count < 0 ? members.slice(offset) : members.slice(offset, offset + count)
        })
      ),
    zremRangeByScore: (key, min, max) =>
      withNow((now) =>
        Result.gen(function*() {
          yield* checkScore("ZREMRANGEBYSCORE", key, min, max)
          const zset = yield* zsetOf("ZREMRANGEBYSCORE", key, now)
          const removed = sortedMembers(zset, min, max)
          for (const { member } of removed) zset?.members.delete(member)
          if (zset !== undefined && zset.members.size === 0) slots.delete(key)
          return removed.length
        })
      )
  }
  return service
})

/**
 * A layer with a fresh in-memory store.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<RedisStreams> = Layer.effect(RedisStreams, make)

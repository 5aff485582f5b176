/**
 * One live tail per stream in the process, shared by every reader of that stream
 * (docs/http.md#readers-share-one-tail). The first reader of a stream opens its tail
 * (one blocking Redis connection); later readers of the same stream join it, so 2,000
 * readers of one turn cost one connection, not 2,000. Each reader:
 *
 * 1. joins the stream's tail, which from then on hands it every entry it reads;
 * 2. reads what it missed (the entries after its resume point) with paged `XRANGE`s on
 *    the shared command connection, bounded in bytes per page;
 * 3. then passes on the tail's entries, skipping any the catch-up already passed.
 *
 * Nothing is lost between 2 and 3: an entry appended after the reader joined reaches
 * it through the tail, and an entry appended before is in the catch-up. A reader keeps
 * at most `readerBuffer` entries and `readerBufferBytes` bytes the client has not taken
 * yet; one that falls further behind (a slow client, one that does not read) leaves the
 * tail at once, what it held dropped, and catches up from Redis once its client takes
 * what it was sent, so a slow reader never holds the others back nor holds more than
 * that bound. A tail closes `idleMs` after its last reader left; a tail that fails for
 * good (Redis away past `resumeSchedule`) fails its readers, and the next reader opens a
 * new one.
 *
 * Catch-up pages are shared too: a page read for one reader (the entries after an id,
 * at most `pageBytes`) serves every reader that reaches the same id within
 * `pageCacheMs`, at most `pageCacheBytes` of pages kept in the process, and readers
 * asking for a page being read wait for that read. So 2,000 readers catching up on one
 * turn read it from Redis about once, not 2,000 times, and its frames are made once
 * (`internal/entryFrames.ts`). A page that ended at the stream's end as it was then
 * serves only the readers that joined the tail before it was read (the tail has the
 * rest for them).
 *
 * @since 0.3.0
 */
import { EntryId, ReadBudget, type RedisError, RedisStreams, type StreamEntry } from "@sluice/redis"
import { TurnEnding } from "@sluice/turns"
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as RcMap from "effect/RcMap"
import type * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { share } from "./internal/entryFrames.js"
import { resumingTail } from "./internal/resumingTail.js"
import { Pending, waitFor, wakeAll } from "./internal/wakeGroups.js"

/**
 * The shared tails' options.
 *
 * - `blockMs`: the longest single blocking read of a tail.
 * - `readerBuffer`, `readerBufferBytes`: the most entries, and bytes of entries, a
 *   reader holds that its client has not taken; past either it leaves the tail and
 *   catches up from Redis later. A batch of the tail is always taken by a reader that
 *   holds nothing, whatever its size.
 * - `idleMs`: how long a tail stays open after its last reader left (a reader that
 *   reconnects at once finds it still open).
 * - `pageBytes`: the byte budget of one catch-up page.
 * - `pageCacheBytes`, `pageCacheMs`: how many bytes of catch-up pages the process keeps
 *   for the readers that come after the one they were read for, and for how long.
 *
 * @since 0.3.0
 * @category models
 */
export interface SharedTailOptions {
  readonly blockMs: number
  readonly readerBuffer: number
  readonly readerBufferBytes: number
  readonly idleMs: number
  readonly pageBytes: number
  readonly pageCacheBytes: number
  readonly pageCacheMs: number
  /** How a failed tail is resumed (TurnFeed's `resumeSchedule`). */
  readonly resume: Schedule.Schedule<unknown, RedisError.RedisError>
}

/**
 * The defaults: 5 s blocking reads; at most 1,024 entries and 1 MiB waiting per
 * reader; tails kept 1 s after their last reader; 1 MiB catch-up pages, 64 MiB of them
 * kept for 5 s.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaults: Omit<SharedTailOptions, "resume"> = {
  blockMs: 5_000,
  readerBuffer: 1_024,
  readerBufferBytes: 1024 * 1024,
  idleMs: 1_000,
  pageBytes: 1024 * 1024,
  pageCacheBytes: 64 * 1024 * 1024,
  pageCacheMs: 5_000
}

/**
 * What the shared tails offer.
 *
 * @since 0.3.0
 * @category models
 */
export interface SharedTailService {
  /**
   * The entries of `key` after `after` (exclusive), then every entry appended later,
   * until the turn's last entry (`TurnEnding.isLast`), which is passed on.
   */
  readonly follow: (key: string, after: string) => Stream.Stream<StreamEntry.StreamEntry, RedisError.RedisError>
  /**
   * The last entry of `key`, as read at most `pageCacheMs` ago: readers that ask at
   * once share one read. (An older look is never wrong for a reader that resumes: a
   * turn's last entry stays the last, and an entry before it only makes the reader
   * follow from further back.)
   */
  readonly last: (key: string) => Effect.Effect<Option.Option<StreamEntry.StreamEntry>, RedisError.RedisError>
  /** How many tails are open now (each holds one blocking connection). */
  readonly openTails: Effect.Effect<number>
}

/**
 * The shared tails of a process.
 *
 * @since 0.3.0
 * @category services
 */
export class SharedTail extends Context.Service<SharedTail, SharedTailService>()("@sluice/server/SharedTail") {}

// A reader that fell more than its bound behind: it leaves the tail and catches up
// from Redis.
class FellBehind extends Data.TaggedError("FellBehind")<{}> {}

const fellBehind = Metric.counter("sluice_shared_tail_fell_behind_total", {
  description: "Readers that fell more than their bound behind their stream's tail and left it, to catch up from Redis"
})

const catchUpPagesFrom = (from: "redis" | "shared") =>
  Metric.counter("sluice_catch_up_pages_total", {
    description: "Catch-up pages readers took, by where from: read from Redis, or shared (read for another reader)",
    attributes: { from }
  })

const catchUpPages = { redis: catchUpPagesFrom("redis"), shared: catchUpPagesFrom("shared") } as const

type Ending = { readonly _tag: "ended" } | {
  readonly _tag: "failed"
  readonly error: RedisError.RedisError | FellBehind
}

// What one reader holds of its tail's entries that its client has not taken.
class Inbox {
  entries: Array<StreamEntry.StreamEntry> = []
  bytes = 0
  ending: Ending | undefined = undefined
  waiter: Deferred.Deferred<void> | undefined = undefined

  // (the waiter is let go before it is woken: a reader may run on at once, and wait
  // again)
  // The waiter of a reader waiting for its next entries, to be woken (`wakeAll`), if it
  // waits; let go.
  waking(): Deferred.Deferred<void> | undefined {
    const waiter = this.waiter
    this.waiter = undefined
    return waiter
  }

  // Takes `batch` of `bytes`; false when that would pass a bound (the reader is then
  // ended with FellBehind, and what it held dropped). The reader is to be woken.
  offer(batch: ReadonlyArray<StreamEntry.StreamEntry>, bytes: number, options: SharedTailOptions): boolean {
    if (this.ending !== undefined) return true
    if (
      this.entries.length > 0 &&
      (this.entries.length + batch.length > options.readerBuffer || this.bytes + bytes > options.readerBufferBytes)
    ) {
      this.close({ _tag: "failed", error: new FellBehind() })
      return false
    }
    for (const entry of batch) this.entries.push(entry)
    this.bytes += bytes
    return true
  }

  // Ends the reader; it is to be woken. What it held is dropped when it fell behind (it
  // reads it from Redis again), and passed on before the ending otherwise (the entries
  // the tail read before it failed).
  close(ending: Ending) {
    if (this.ending !== undefined) return
    this.ending = ending
    if (ending._tag === "failed" && ending.error._tag === "FellBehind") {
      this.entries = []
      this.bytes = 0
    }
  }

  // The entries waiting, all of them, once there is one; then the ending.
  readonly pull: Effect.Effect<
    Arr.NonEmptyReadonlyArray<StreamEntry.StreamEntry>,
    RedisError.RedisError | FellBehind | Cause.Done
  > = Effect.suspend(() => {
    const taken = this.entries
    if (isNonEmpty(taken)) {
      this.entries = []
      this.bytes = 0
      return Effect.succeed(taken)
    }
    if (this.ending !== undefined) {
      return this.ending._tag === "ended" ? Cause.done() : Effect.fail(this.ending.error)
    }
    const waiter = Deferred.makeUnsafe<void>()
    this.waiter = waiter
    return Effect.andThen(waitFor(waiter), this.pull)
  })
}

const isNonEmpty = <A>(array: Array<A>): array is Arr.NonEmptyArray<A> => array.length > 0

const bytesOf = (entries: ReadonlyArray<StreamEntry.StreamEntry>): number => {
  let bytes = 0
  for (const entry of entries) bytes += ReadBudget.entryBytes(entry)
  return bytes
}

// One stream's tail and the readers that joined it.
interface Tail {
  readonly readers: Set<Inbox>
  status: { readonly _tag: "running" } | { readonly _tag: "ended" } | {
    readonly _tag: "failed"
    readonly error: RedisError.RedisError
  }
}

// Hands a batch to every reader, then wakes those waiting, a group at a time.
const publish = (tail: Tail, entries: ReadonlyArray<StreamEntry.StreamEntry>, options: SharedTailOptions) =>
  Effect.suspend(() => {
    share(entries)
    const bytes = bytesOf(entries)
    const waiting: Array<Deferred.Deferred<void>> = []
    let behind = 0
    for (const inbox of tail.readers) {
      if (!inbox.offer(entries, bytes, options)) {
        tail.readers.delete(inbox)
        behind++
      }
      const waiter = inbox.waking()
      if (waiter !== undefined) waiting.push(waiter)
    }
    return Effect.andThen(behind > 0 ? Metric.update(fellBehind, behind) : Effect.void, wakeAll(waiting))
  })

const finish = (tail: Tail, status: Tail["status"]) =>
  Effect.suspend(() => {
    tail.status = status
    const waiting: Array<Deferred.Deferred<void>> = []
    for (const inbox of tail.readers) {
      inbox.close(status._tag === "failed" ? { _tag: "failed", error: status.error } : { _tag: "ended" })
      const waiter = inbox.waking()
      if (waiter !== undefined) waiting.push(waiter)
    }
    tail.readers.clear()
    return wakeAll(waiting)
  })

// Opens the tail of `key` from its last entry now: every reader joins after this, and
// reads what came before from Redis.
const openTail = (redis: RedisStreams.RedisStreamsService, options: SharedTailOptions) => (key: string) =>
  Effect.gen(function*() {
    const tail: Tail = { readers: new Set(), status: { _tag: "running" } }
    // A failed look is a tail from the start: its readers skip what they passed.
    const last = yield* Effect.orElseSucceed(redis.xlast(key), () => Option.none<StreamEntry.StreamEntry>())
    if (Option.isSome(last) && TurnEnding.isLast(last.value)) {
      yield* finish(tail, { _tag: "ended" })
      return tail
    }
    const reads = resumingTail(redis, key, Option.isSome(last) ? last.value.id : "0-0", options)
    yield* Stream.runForEachArray(reads, (entries) => publish(tail, entries, options)).pipe(
      Effect.matchEffect({
        onFailure: (error) => finish(tail, { _tag: "failed", error }),
        onSuccess: () => finish(tail, { _tag: "ended" })
      }),
      Effect.forkScoped
    )
    return tail
  })

// A catch-up page: the entries after an id, whether it was full (as many entries as
// asked: the stream goes on past it), and whether any reader may take it (full, or
// ending with the turn's last entry).
// Made once for all the readers that take the page, so that a reader's catch-up does
// no work per entry: its entries up to the turn's last entry, if it has it (`ends`),
// and its largest entry (for the byte budget of the reader's next page).
interface Page {
  readonly entries: ReadonlyArray<StreamEntry.StreamEntry>
  readonly full: boolean
  readonly final: boolean
  readonly ends: boolean
  readonly largest: ReadonlyArray<StreamEntry.StreamEntry>
}

// The page of what `XRANGE` read, given the count it asked for.
const pageOf = (read: ReadonlyArray<StreamEntry.StreamEntry>, count: number): Page => {
  const full = read.length >= count
  const ending = read.findIndex(TurnEnding.isLast)
  const entries = ending === -1 || ending === read.length - 1 ? read : read.slice(0, ending + 1)
  let largest: StreamEntry.StreamEntry | undefined
  let largestBytes = -1
  for (const entry of entries) {
    const bytes = ReadBudget.entryBytes(entry)
    if (bytes > largestBytes) {
      largest = entry
      largestBytes = bytes
    }
  }
  return {
    entries,
    full,
    final: full || ending !== -1,
    ends: ending !== -1,
    largest: largest === undefined ? [] : [largest]
  }
}

// A page kept for the readers after the one it was read for: when its read started
// (the count of joins then) and when, its size once read.
interface Kept {
  readonly page: Pending<Page, RedisError.RedisError>
  readonly started: number
  readonly at: number
  bytes: number
}

/**
 * The shared tails on the `RedisStreams` in context, closed with the layer's scope.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (options: SharedTailOptions): Layer.Layer<SharedTail, never, RedisStreams.RedisStreams> =>
  Layer.effect(SharedTail, make(options))

/**
 * Makes the shared tails in the current scope.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (
  options: SharedTailOptions
): Effect.Effect<SharedTailService, never, RedisStreams.RedisStreams | Scope.Scope> =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const scope = yield* Effect.scope
    const tails = yield* RcMap.make({
      lookup: openTail(redis, options),
      idleTimeToLive: Duration.millis(options.idleMs)
    })
    // Every reader's join is counted: a page read after a reader joined holds every
    // entry that reader's tail will not bring.
    let joins = 0
    const kept = new Map<string, Kept>()
    let keptBytes = 0
    const forget = (id: string, page: Kept) => {
      if (kept.get(id) !== page) return
      kept.delete(id)
      keptBytes -= page.bytes
    }
    // Drops the pages older than `pageCacheMs`, then the oldest while over
    // `pageCacheBytes` (the map is in the order they were read).
    const prune = (now: number) => {
      for (const [id, page] of kept) {
        if (now - page.at < options.pageCacheMs && keptBytes <= options.pageCacheBytes) break
        forget(id, page)
      }
    }
    // Reads the page of `count` entries after `from` for every reader that comes for it.
    const read = (key: string, from: string, count: number, id: string, now: number) =>
      Effect.gen(function*() {
        const page: Kept = { page: new Pending(), started: joins, at: now, bytes: 0 }
        const before = kept.get(id)
        if (before !== undefined) forget(id, before)
        kept.set(id, page)
        yield* redis.xrange(key, `(${from}`, "+", count).pipe(
          Effect.map((entries): Page => {
            share(entries)
            return pageOf(entries, count)
          }),
          Effect.onExit((exit) =>
            Effect.suspend(() => {
              if (Exit.isFailure(exit)) {
                forget(id, page)
              } else if (kept.get(id) === page) {
                page.bytes = bytesOf(exit.value.entries)
                keptBytes += page.bytes
                prune(now)
              }
              return page.page.complete(exit)
            })
          ),
          Effect.forkIn(scope)
        )
        return page
      })
    // The page after `from` for a reader that joined `joined`-th: one kept, when it may
    // take it, else one read now (and kept).
    const pageAfter = (key: string, from: string, count: number, joined: number) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        prune(now)
        const id = `${key}\u0000${from}`
        const found = kept.get(id)
        if (found !== undefined) {
          const page = yield* found.page.await
          if (page.final || found.started >= joined) {
            yield* Metric.update(catchUpPages.shared, 1)
            return page
          }
        }
        yield* Metric.update(catchUpPages.redis, 1)
        return yield* (yield* read(key, from, count, id, now)).page.await
      })
    // The entries after `after`, in pages bounded in bytes, up to the stream's end as a
    // page read after the reader joined found it, or through the turn's last entry
    // (`ended` is then set).
    const catchUp = (key: string, after: string, joined: number, ended: { value: boolean }) => {
      const pages = ReadBudget.pager({ maxCount: RedisStreams.tailDefaults.count, maxBytes: options.pageBytes })
      return Stream.paginate(after, (from) =>
        Effect.map(pageAfter(key, from, pages.count(), joined), (page) => {
          pages.seen(page.largest)
          if (page.ends) ended.value = true
          const last = page.entries[page.entries.length - 1]
          // A short page reached the end of the stream as it was; the tail has the rest.
          const done = !page.full || last === undefined || page.ends
          return [page.entries, done || last === undefined ? Option.none() : Option.some(last.id)] as const
        }))
    }
    // Joins the tail of `key` with a fresh inbox, opening a new tail when the one there
    // failed.
    const join = (key: string) =>
      Effect.gen(function*() {
        let tail = yield* RcMap.get(tails, key)
        if (tail.status._tag === "failed") {
          yield* RcMap.invalidate(tails, key)
          tail = yield* RcMap.get(tails, key)
        }
        const inbox = new Inbox()
        if (tail.status._tag === "running") tail.readers.add(inbox)
        else if (tail.status._tag === "ended") inbox.close({ _tag: "ended" })
        else inbox.close({ _tag: "failed", error: tail.status.error })
        yield* Effect.addFinalizer(() => Effect.sync(() => tail.readers.delete(inbox)))
        joins++
        return { inbox, joined: joins }
      })
    // One pass: join, catch up from `after`, then the tail's entries past what was
    // passed on. `passed` is the last id this reader passed on, across passes.
    const pass = (key: string, passed: { id: string }): Stream.Stream<StreamEntry.StreamEntry, RedisError.RedisError> =>
      Stream.unwrap(Effect.map(join(key), ({ inbox, joined }) => {
        // (the catch-up's pages end at the turn's last entry: only the tail's entries
        // are looked at one by one, and not at all once the catch-up had that entry)
        const ended = { value: false }
        const live = Stream.suspend(() =>
          ended.value ? Stream.empty : Stream.fromPull(Effect.succeed(inbox.pull)).pipe(
            Stream.filter((entry) => EntryId.isAfter(entry.id, passed.id)),
            Stream.takeUntil(TurnEnding.isLast)
          )
        )
        return Stream.concat(catchUp(key, passed.id, joined, ended), live).pipe(
          Stream.mapArray((entries) => {
            passed.id = entries[entries.length - 1]!.id
            return entries
          }),
          Stream.catchTag("FellBehind", () => pass(key, passed))
        )
      }))
    // The last entries read lately, by stream, in the order they were read.
    const lasts = new Map<
      string,
      { readonly at: number; readonly entry: Pending<Option.Option<StreamEntry.StreamEntry>, RedisError.RedisError> }
    >()
    const last = (key: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        for (const [id, look] of lasts) {
          if (now - look.at < options.pageCacheMs) break
          lasts.delete(id)
        }
        const found = lasts.get(key)
        if (found !== undefined) return yield* found.entry.await
        const look = { at: now, entry: new Pending<Option.Option<StreamEntry.StreamEntry>, RedisError.RedisError>() }
        lasts.set(key, look)
        yield* redis.xlast(key).pipe(
          Effect.onExit((exit) =>
            Effect.suspend(() => {
              if (Exit.isFailure(exit) && lasts.get(key) === look) lasts.delete(key)
              return look.entry.complete(exit)
            })
          ),
          Effect.forkIn(scope)
        )
        return yield* look.entry.await
      })
    return SharedTail.of({
      follow: (key, after) => Stream.suspend(() => pass(key, { id: after })),
      last,
      openTails: Effect.map(RcMap.keys(tails), (keys) => Array.from(keys).length)
    })
  })

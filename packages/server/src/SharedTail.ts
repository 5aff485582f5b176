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
 * at most `readerBuffer` entries the client has not taken yet; one that falls further
 * behind (a slow client) leaves the tail and catches up from Redis again, so a slow
 * reader never holds the others back nor grows without bound. A tail closes
 * `idleMs` after its last reader left; a tail that fails for good (Redis away past
 * `resumeSchedule`) fails its readers, and the next reader opens a new one.
 *
 * @since 0.3.0
 */
import { EntryId, ReadBudget, type RedisError, RedisStreams, type StreamEntry } from "@sluice/redis"
import { TurnEnding } from "@sluice/turns"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as RcMap from "effect/RcMap"
import type * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { resumingTail } from "./internal/resumingTail.js"

/**
 * The shared tails' options.
 *
 * - `blockMs`: the longest single blocking read of a tail.
 * - `readerBuffer`: the most entries a reader holds that its client has not taken.
 * - `idleMs`: how long a tail stays open after its last reader left (a reader that
 *   reconnects at once finds it still open).
 * - `pageBytes`: the byte budget of one catch-up page.
 *
 * @since 0.3.0
 * @category models
 */
export interface SharedTailOptions {
  readonly blockMs: number
  readonly readerBuffer: number
  readonly idleMs: number
  readonly pageBytes: number
  /** How a failed tail is resumed (TurnFeed's `resumeSchedule`). */
  readonly resume: Schedule.Schedule<unknown, RedisError.RedisError>
}

/**
 * The defaults: 5 s blocking reads, 1,024 entries per reader, tails kept 1 s after
 * their last reader, 4 MiB catch-up pages.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaults: Omit<SharedTailOptions, "resume"> = {
  blockMs: 5_000,
  readerBuffer: 1_024,
  idleMs: 1_000,
  pageBytes: ReadBudget.defaultMaxBytes
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

// A reader that fell more than `readerBuffer` entries behind: it leaves the tail and
// catches up from Redis.
class FellBehind extends Data.TaggedError("FellBehind")<{}> {}

type Inbox = Queue.Queue<StreamEntry.StreamEntry, RedisError.RedisError | FellBehind | Cause.Done>

// One stream's tail and the readers that joined it.
interface Tail {
  readonly readers: Set<Inbox>
  status: { readonly _tag: "running" } | { readonly _tag: "ended" } | {
    readonly _tag: "failed"
    readonly error: RedisError.RedisError
  }
}

const publish = (tail: Tail, entries: ReadonlyArray<StreamEntry.StreamEntry>) => {
  for (const inbox of tail.readers) {
    if (Queue.offerAllUnsafe(inbox, entries).length > 0) {
      tail.readers.delete(inbox)
      Queue.failCauseUnsafe(inbox, Cause.fail(new FellBehind()))
    }
  }
}

const finish = (tail: Tail, status: Tail["status"]) => {
  tail.status = status
  for (const inbox of tail.readers) {
    if (status._tag === "failed") Queue.failCauseUnsafe(inbox, Cause.fail(status.error))
    else Queue.endUnsafe(inbox)
  }
  tail.readers.clear()
}

// Opens the tail of `key` from its last entry now: every reader joins after this, and
// reads what came before from Redis.
const openTail = (redis: RedisStreams.RedisStreamsService, options: SharedTailOptions) => (key: string) =>
  Effect.gen(function*() {
    const tail: Tail = { readers: new Set(), status: { _tag: "running" } }
    // A failed look is a tail from the start: its readers skip what they passed.
    const last = yield* Effect.orElseSucceed(redis.xlast(key), () => Option.none<StreamEntry.StreamEntry>())
    if (Option.isSome(last) && TurnEnding.isLast(last.value)) {
      finish(tail, { _tag: "ended" })
      return tail
    }
    const reads = resumingTail(redis, key, Option.isSome(last) ? last.value.id : "0-0", options)
    yield* Stream.runForEachArray(reads, (entries) => Effect.sync(() => publish(tail, entries))).pipe(
      Effect.matchEffect({
        onFailure: (error) => Effect.sync(() => finish(tail, { _tag: "failed", error })),
        onSuccess: () => Effect.sync(() => finish(tail, { _tag: "ended" }))
      }),
      Effect.forkScoped
    )
    return tail
  })

// The entries after `after`, read in pages bounded in bytes, up to the stream's end
// now (or its last entry).
const catchUp = (redis: RedisStreams.RedisStreamsService, key: string, after: string, pageBytes: number) => {
  const pages = ReadBudget.pager({ maxCount: RedisStreams.tailDefaults.count, maxBytes: pageBytes })
  return Stream.paginate(after, (from) => {
    const count = pages.count()
    return Effect.map(redis.xrange(key, `(${from}`, "+", count), (entries) => {
      pages.seen(entries)
      // A short page reached the end of the stream as it was; the tail has the rest.
      const done = entries.length < count || TurnEnding.isLast(entries[entries.length - 1]!)
      return [entries, done ? Option.none() : Option.some(entries[entries.length - 1]!.id)] as const
    })
  })
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
    const tails = yield* RcMap.make({
      lookup: openTail(redis, options),
      idleTimeToLive: Duration.millis(options.idleMs)
    })
    // Joins the tail of `key` with a fresh inbox, opening a new tail when the one there
    // failed.
    const join = (key: string) =>
      Effect.gen(function*() {
        let tail = yield* RcMap.get(tails, key)
        if (tail.status._tag === "failed") {
          yield* RcMap.invalidate(tails, key)
          tail = yield* RcMap.get(tails, key)
        }
        const inbox: Inbox = yield* Queue.bounded<
          StreamEntry.StreamEntry,
          RedisError.RedisError | FellBehind | Cause.Done
        >(
          options.readerBuffer
        )
        if (tail.status._tag === "running") tail.readers.add(inbox)
        else if (tail.status._tag === "ended") Queue.endUnsafe(inbox)
        else Queue.failCauseUnsafe(inbox, Cause.fail(tail.status.error))
        yield* Effect.addFinalizer(() => Effect.sync(() => tail.readers.delete(inbox)))
        return inbox
      })
    // One pass: join, catch up from `after`, then the tail's entries past what was
    // passed on. `passed` is the last id this reader passed on, across passes.
    const pass = (key: string, passed: { id: string }): Stream.Stream<StreamEntry.StreamEntry, RedisError.RedisError> =>
      Stream.unwrap(Effect.map(join(key), (inbox) => {
        const live = Stream.fromQueue(inbox).pipe(Stream.filter((entry) => EntryId.isAfter(entry.id, passed.id)))
        return Stream.concat(catchUp(redis, key, passed.id, options.pageBytes), live).pipe(
          Stream.takeUntil(TurnEnding.isLast),
          Stream.mapArray((entries) => {
            passed.id = entries[entries.length - 1]!.id
            return entries
          }),
          Stream.catchTag("FellBehind", () => pass(key, passed))
        )
      }))
    return SharedTail.of({
      follow: (key, after) => Stream.suspend(() => pass(key, { id: after })),
      openTails: Effect.map(RcMap.keys(tails), (keys) => Array.from(keys).length)
    })
  })

/**
 * Writes one stream of one turn, exactly once and in order: each element gets the
 * explicit id `0-<n>` (its 1-based position in the turn), batches of at most
 * `maxInFlight` entries go out in one pipeline, a batch is retried from its first
 * unconfirmed entry while Redis is unavailable, and an `IdTooSmall` reply for one of
 * our ids is checked against the entry Redis holds under it: the same fields mean the
 * entry landed on an earlier try whose reply was lost.
 *
 * A target may name the slot each value fills (`slotOf`: an upsert's item). A value
 * supersedes the one before it in its slot, and once both are confirmed the older
 * entry is deleted (`XDEL`), alongside the next batch and when the stream ends: the
 * stream keeps one entry per slot, and only entries of batches already confirmed are
 * ever deleted, and a deleted id, below the stream's top id, is never written again.
 * A refused id whose entry is absent is taken as landed when its value fills a slot:
 * only a publication of this very turn (a retry, or the turn published again) can
 * have deleted it, and a different turn under the same id is still told apart by the
 * entries that stay (its first entry, its ending, each item's last upsert).
 *
 * @internal
 */
import { Backoff } from "@sluice/core"
import * as EntryId from "@sluice/redis/EntryId"
import { RedisError } from "@sluice/redis/RedisError"
import type { RedisStreamsService, XAddEntry } from "@sluice/redis/RedisStreams"
import { type Fields, sameFields, type StreamEntry } from "@sluice/redis/StreamEntry"
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Pull from "effect/Pull"
import * as Result from "effect/Result"
import type * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { PublishError } from "../PublishError.js"
import * as TurnEnding from "../TurnEnding.js"
import * as TurnEntry from "../TurnEntry.js"
import * as TurnKeys from "../TurnKeys.js"

/** @internal */
export interface WriterOptions {
  readonly prefix: string
  readonly keyStyle?: TurnKeys.KeyStyle | undefined
  readonly retentionMs: number
  readonly maxLen: number
  readonly maxInFlight: number
  readonly indexTurns: boolean
  readonly retry: Backoff.RetryPolicy
}

/** @internal */
export interface WriterTarget<A> {
  readonly turnId: string
  readonly stream: TurnKeys.TurnStream
  readonly toFields: (value: A) => Result.Result<Fields, PublishError>
  /**
   * A value checked now whose fields are made when its entry is written (and again for
   * each attempt), so that a batch waiting for Redis's replies holds its values, not
   * their encoding; `undefined` for a value whose fields `toFields` makes now.
   */
  readonly fieldsLater?: ((value: A) => (() => Fields) | undefined) | undefined
  /**
   * The slot a value fills, if any: a later value of the same slot supersedes it.
   */
  readonly slotOf?: ((value: A) => string | undefined) | undefined
}

// A batch: values that passed `toFields`, the first of them under `0-<first>`. Only
// the values are kept while Redis answers; entries are made again for each attempt
// (and for the rare check of an entry refused as too small), which keeps what 1,000
// concurrent turns hold across a round trip small.
interface Batch<A> {
  readonly values: ReadonlyArray<A>
  readonly first: number
}

/**
 * What one batch came to: the values Redis confirmed, in order, and the failure that
 * stopped it, if any.
 *
 * @internal
 */
export interface Outcome<A> {
  readonly passed: ReadonlyArray<A>
  readonly error: PublishError | undefined
}

/** @internal */
export const entryIdAt = (position: number): string => `0-${position}`

// An entry whose fields are made each time they are read: when its pipeline is encoded.
class LaterEntry implements XAddEntry {
  constructor(readonly id: string, private readonly make: () => Fields) {}
  get fields(): Fields {
    return this.make()
  }
}

const allConfirmed = (results: ReadonlyArray<Result.Result<string, RedisError>>, count: number): boolean => {
  if (results.length !== count) return false
  for (const result of results) if (Result.isFailure(result)) return false
  return true
}

const isUnavailable = (error: RedisError | PublishError): boolean =>
  error instanceof RedisError && error.reason === "Unavailable"

/**
 * The writer of one stream of one turn, as effects: `writePiece` gives the values
 * `from` to `to` (at most `maxInFlight` of them) their ids and writes them, telling
 * what Redis confirmed and the failure that stopped it; `finish` deletes what is left
 * superseded and sets the retention once the stream has ended.
 *
 * @internal
 */
export interface WriterCore<A> {
  readonly writePiece: (values: ReadonlyArray<A>, from: number, to: number) => Effect.Effect<Outcome<A>>
  readonly finish: Effect.Effect<void, PublishError>
}

// One retry schedule per policy, shared by every writer that uses it (a schedule is a
// description: each retry runs its own steps), so a turn in flight holds none of its own.
const schedules = new WeakMap<Backoff.RetryPolicy, Schedule.Schedule<number>>()
const scheduleFor = (policy: Backoff.RetryPolicy): Schedule.Schedule<number> => {
  let schedule = schedules.get(policy)
  if (schedule === undefined) {
    schedule = Backoff.schedule(policy)
    schedules.set(policy, schedule)
  }
  return schedule
}

/** @internal */
export const core = <A>(redis: RedisStreamsService, options: WriterOptions, target: WriterTarget<A>): WriterCore<A> =>
  new Writer(redis, options, target)

// The writer's state and steps as a class: a turn in flight holds one object per
// stream, its methods shared by all turns (closures would be made per turn).
class Writer<A> implements WriterCore<A> {
  readonly key: string
  readonly schedule: Schedule.Schedule<number>
  readonly xaddOptions: { readonly maxLen: number }
  assigned = 0
  written = 0
  started = false
  // The id of each slot's latest confirmed entry, and the superseded ids not yet
  // deleted (made on the first slot).
  latest: Map<string, string> | undefined = undefined
  superseded: Array<string> = []

  constructor(
    readonly redis: RedisStreamsService,
    readonly options: WriterOptions,
    readonly target: WriterTarget<A>
  ) {
    this.key = TurnKeys.streamKey(options.prefix, target.turnId, target.stream, options.keyStyle)
    this.schedule = scheduleFor(options.retry)
    this.xaddOptions = { maxLen: options.maxLen }
  }

  failure(reason: PublishError["reason"], detail: string, extra: {
    readonly entryId?: string
    readonly attempts?: number
    readonly cause?: unknown
  } = {}): PublishError {
    return new PublishError({
      reason,
      turnId: this.target.turnId,
      key: this.key,
      written: this.written,
      detail,
      ...extra
    })
  }

  // Sets the retention, and on the first batch records the turn in the index.
  keep(first: boolean): Effect.Effect<void, RedisError> {
    const { key, options, redis, target } = this
    return Effect.gen(function*() {
      yield* redis.pexpire(key, options.retentionMs)
      if (!(first && options.indexTurns)) return
      const index = TurnKeys.turnsKey(options.prefix)
      const now = yield* Clock.currentTimeMillis
      yield* redis.zadd(index, now, target.turnId, { onlyNew: true })
      yield* redis.zremRangeByScore(index, -Infinity, now - options.retentionMs)
      yield* redis.pexpire(index, options.retentionMs)
    })
  }

  // The entry of the batch's `i`-th value, made again for a retry or a check. The value
  // passed `entryOf` once already, so it does again (an entry without fields would be
  // refused by Redis as `Rejected`).
  entryAt(batch: Batch<A>, i: number): XAddEntry {
    const entry = this.entryOf(entryIdAt(batch.first + i), batch.values[i]!)
    return entry instanceof PublishError ? { id: entryIdAt(batch.first + i), fields: [] } : entry
  }

  // The entry of a value under `id` (or why the value cannot be written): with its
  // fields made when written when the target can check the value now, else made now.
  // No wrapper per entry: this runs for every value written.
  entryOf(id: string, value: A): XAddEntry | PublishError {
    const later = this.target.fieldsLater?.(value)
    if (later !== undefined) return new LaterEntry(id, later)
    const fields = this.target.toFields(value)
    return Result.isSuccess(fields) ? { id, fields: fields.success } : fields.failure
  }

  // Whether the entry Redis refused as too small is ours, written on an earlier try.
  // When it is not, and the stream ends at a last entry under a sealed id, the turn was
  // ended by another writer (`TurnEnding`): `Ended`, and this writer writes no more.
  // An absent entry that fills a slot was superseded and deleted (by this writer, or
  // by an earlier publication of the same turn).
  landed(entry: XAddEntry, value: A): Effect.Effect<void, RedisError | PublishError> {
    const { key, redis } = this
    return Effect.flatMap(redis.xrange(key, entry.id, entry.id), (found) => {
      const held = found[0]
      if (held !== undefined && sameFields(held.fields, entry.fields)) return Effect.void
      return Effect.flatMap(
        redis.xlast(key),
        (top) =>
          Option.isSome(top) && TurnEnding.isSealed(top.value.id) && TurnEntry.isFinal(top.value)
            ? Effect.fail(
              this.failure("Ended", `${key} was ended by another writer at ${top.value.id}`, { entryId: entry.id })
            )
            : this.notLanded(entry, value, held)
      )
    })
  }

  // A refused entry of a stream that has not been ended by another writer.
  notLanded(entry: XAddEntry, value: A, held: StreamEntry | undefined): Effect.Effect<void, RedisError | PublishError> {
    const { key, redis } = this
    return Effect.suspend(() => {
      if (held !== undefined) {
        return Effect.fail(
          this.failure("Conflict", `${key} already holds a different entry ${entry.id}`, { entryId: entry.id })
        )
      }
      if (this.target.slotOf?.(value) !== undefined) return Effect.void
      // Absent: trimmed by MAXLEN after it landed, or never written under this id.
      return Effect.flatMap(redis.xrange(key, "-", "+", 1), (oldest) => {
        const first = oldest[0] === undefined ? undefined : EntryId.parse(oldest[0].id)
        const mine = EntryId.parse(entry.id)
        return first !== undefined && first._tag === "Some" && mine._tag === "Some" &&
            EntryId.order(first.value, mine.value) > 0
          ? Effect.void
          : Effect.fail(
            this.failure("Conflict", `${key} has a top entry beyond ${entry.id} but not ${entry.id}`, {
              entryId: entry.id
            })
          )
      })
    })
  }

  // Writes one batch, retrying it from its first unconfirmed entry while Redis is
  // unavailable: the values Redis confirmed, and the failure that stopped it, if any.
  writeBatch(batch: Batch<A>, entries: ReadonlyArray<XAddEntry>): Effect.Effect<Outcome<A>> {
    // Once the stream is set up, a batch that Redis confirms whole (nearly every one)
    // is done in one round trip and a few operations; anything else takes the full
    // path, which goes on from this first attempt's outcome.
    return this.started
      ? Effect.flatMap(Effect.result(this.redis.xaddAll(this.key, entries, this.xaddOptions)), (first) => {
        if (Result.isSuccess(first) && allConfirmed(first.success, entries.length)) {
          this.written += entries.length
          return Effect.succeed<Outcome<A>>({ passed: batch.values, error: undefined })
        }
        return this.writeBatchFully(batch, entries, first)
      })
      : this.writeBatchFully(batch, entries, undefined)
  }

  writeBatchFully(
    batch: Batch<A>,
    entries: ReadonlyArray<XAddEntry>,
    firstAttempt: Result.Result<ReadonlyArray<Result.Result<string, RedisError>>, RedisError> | undefined
  ): Effect.Effect<Outcome<A>> {
    const size = batch.values.length
    let fresh: ReadonlyArray<XAddEntry> | undefined = entries
    let made = firstAttempt
    let confirmed = 0
    let attempts = 0
    // Walks the replies in order: confirmed entries count, an entry refused as too
    // small is checked, anything else stops the walk.
    const settle = (
      results: ReadonlyArray<Result.Result<string, RedisError>>,
      offset: number,
      from: number
    ): Effect.Effect<void, RedisError | PublishError> => {
      for (let i = from; i < results.length; i++) {
        const result = results[i]!
        if (Result.isSuccess(result)) {
          confirmed++
          continue
        }
        const error = result.failure
        if (error.reason === "IdTooSmall") {
          return Effect.andThen(
            Effect.suspend(() => this.landed(this.entryAt(batch, offset + i), batch.values[offset + i]!)),
            Effect.suspend(() => {
              confirmed++
              return settle(results, offset, i + 1)
            })
          )
        }
        return Effect.fail(
          error.reason === "Unavailable"
            ? error
            : this.failure("Rejected", error.message, { entryId: entryIdAt(batch.first + offset + i), cause: error })
        )
      }
      return Effect.void
    }
    const attempt: Effect.Effect<void, RedisError | PublishError> = Effect.suspend(() => {
      const offset = confirmed
      const sent = fresh ?? Array.from({ length: size - offset }, (_, i) => this.entryAt(batch, offset + i))
      fresh = undefined
      attempts++
      const done = made
      made = undefined
      const call = done === undefined ? this.redis.xaddAll(this.key, sent, this.xaddOptions) : Effect.fromResult(done)
      return Effect.flatMap(call, (results) => settle(results, offset, 0))
    }).pipe(
      Effect.andThen(Effect.suspend(() => this.started ? Effect.void : this.keep(true))),
      Effect.tap(() =>
        Effect.sync(() => {
          this.started = true
        })
      )
    )
    // The retry schedule is only started once an attempt failed (starting it costs
    // more than a batch that goes through): it is handed that failure first, so it
    // waits and counts exactly as if it had run the first attempt itself.
    const retried = (failed: RedisError | PublishError) => {
      let replay = true
      const again = Effect.suspend(() => {
        if (!replay) return attempt
        replay = false
        return Effect.fail(failed)
      })
      return Effect.retry(again, { schedule: this.schedule, while: isUnavailable })
    }
    const outcome = Effect.result(Effect.catchIf(attempt, isUnavailable, retried))
    return Effect.map(outcome, (result): Outcome<A> => {
      const passed = confirmed === size ? batch.values : batch.values.slice(0, confirmed)
      this.written += confirmed
      if (Result.isSuccess(result)) return { passed, error: undefined }
      const error = result.failure
      const entryId = confirmed < size ? entryIdAt(batch.first + confirmed) : undefined
      const context = { attempts, cause: error, ...(entryId === undefined ? {} : { entryId }) }
      return {
        passed,
        error: error instanceof PublishError
          ? this.failure(error.reason, error.detail, { ...context, cause: error.cause })
          : error.reason === "Unavailable"
          ? this.failure("RetriesExhausted", `${error.message} (${attempts} attempts)`, context)
          : this.failure("Rejected", error.message, context)
      }
    })
  }

  // Gives the values `from` to `to` of an upstream chunk their ids and writes them; a
  // value that cannot be encoded ends the stream after the values before it are
  // written.
  writePiece(values: ReadonlyArray<A>, from: number, to: number): Effect.Effect<Outcome<A>> {
    const entries: Array<XAddEntry> = []
    const first = this.assigned + 1
    let invalid: PublishError | undefined
    for (let i = from; i < to; i++) {
      const entry = this.entryOf(entryIdAt(this.assigned + 1), values[i]!)
      if (entry instanceof PublishError) {
        invalid = entry
        break
      }
      this.assigned++
      entries.push(entry)
    }
    const rejected = (bad: PublishError) =>
      this.failure(bad.reason, bad.detail, bad.cause === undefined ? {} : { cause: bad.cause })
    if (entries.length === 0) {
      return Effect.sync(() => ({ passed: [], error: invalid === undefined ? undefined : rejected(invalid) }))
    }
    const batch: Batch<A> = {
      values: from === 0 && entries.length === values.length ? values : values.slice(from, from + entries.length),
      first
    }
    const write = this.target.slotOf === undefined
      ? this.writeBatch(batch, entries)
      : this.trimming(this.writeBatch(batch, entries), batch.first)
    return invalid === undefined
      ? write
      : Effect.map(write, (out) => out.error === undefined ? { passed: out.passed, error: rejected(invalid) } : out)
  }

  // Deletes the superseded entries; those a failed `XDEL` leaves are tried again.
  deleteSuperseded(): Effect.Effect<void, RedisError> {
    return Effect.suspend((): Effect.Effect<void, RedisError> => {
      if (this.superseded.length === 0) return Effect.void
      const ids = this.superseded
      this.superseded = []
      return Effect.asVoid(Effect.tapError(this.redis.xdel(this.key, ids), () =>
        Effect.sync(() => {
          this.superseded = ids.concat(this.superseded)
        })))
    })
  }

  // A batch written while the entries superseded so far are deleted; then the slots
  // of its confirmed values are recorded.
  trimming(write: Effect.Effect<Outcome<A>>, first: number): Effect.Effect<Outcome<A>> {
    const slotOf = this.target.slotOf!
    return Effect.map(
      Effect.suspend(() =>
        this.superseded.length === 0
          ? write
          : Effect.map(Effect.zip(write, Effect.ignore(this.deleteSuperseded()), { concurrent: true }), ([out]) => out)
      ),
      (out) => {
        const latest = this.latest ??= new Map()
        out.passed.forEach((value, i) => {
          const slot = slotOf(value)
          if (slot === undefined) return
          const previous = latest.get(slot)
          if (previous !== undefined) this.superseded.push(previous)
          latest.set(slot, entryIdAt(first + i))
        })
        return out
      }
    )
  }

  // made when the stream ends, so that a turn in flight does not hold it
  get finish(): Effect.Effect<void, PublishError> {
    return Effect.suspend(() =>
      this.started
        ? Effect.andThen(this.deleteSuperseded(), this.keep(false)).pipe(
          Effect.retry({ schedule: this.schedule, while: isUnavailable }),
          Effect.mapError((error) =>
            this.failure(
              "RetriesExhausted",
              `deleting superseded entries and setting the retention: ${error.message}`,
              {
                cause: error
              }
            )
          )
        )
        : Effect.void
    )
  }
}

/**
 * Writes values in pieces of at most `maxInFlight`, one at a time, telling `onPassed`
 * what each piece confirmed; the first failure stops it, and every later write fails
 * with the same failure (the ids after it were never written).
 *
 * @internal
 */
export const sequential = <A>(writer: WriterCore<A>, maxInFlight: number) => {
  let failed: PublishError | undefined
  return <E, R>(
    values: ReadonlyArray<A>,
    onPassed: (passed: Arr.NonEmptyReadonlyArray<A>) => Effect.Effect<void, E, R>
  ): Effect.Effect<void, E | PublishError, R> => {
    const piece = (from: number): Effect.Effect<void, E | PublishError, R> => {
      if (failed !== undefined) return Effect.fail(failed)
      if (from >= values.length) return Effect.void
      const to = Math.min(from + maxInFlight, values.length)
      return Effect.flatMap(writer.writePiece(values, from, to), (out) => {
        failed = out.error
        const next = piece(to)
        return isNonEmpty(out.passed) ? Effect.andThen(onPassed(out.passed), next) : next
      })
    }
    return piece(0)
  }
}

/** @internal */
export const writer =
  <A>(redis: RedisStreamsService, options: WriterOptions, target: WriterTarget<A>) =>
  <E, R>(self: Stream.Stream<A, E, R>): Stream.Stream<A, E | PublishError, R> =>
    Stream.suspend(() => {
      const writer = core(redis, options, target)
      // Upstream chunks, written in pieces of at most `maxInFlight` entries, one at a
      // time: each pull passes on what one piece confirmed, then the failure that stopped
      // it, if any, on the next pull; the end of upstream waits for `finish`.
      return Stream.transformPull(self, (upstream) =>
        Effect.sync(() => {
          let values: ReadonlyArray<A> = []
          let from = 0
          let failed: PublishError | undefined
          let ended = false
          const next = Effect.suspend(() =>
            Pull.catchDone(upstream, () =>
              Effect.andThen(
                writer.finish,
                Effect.sync(() => {
                  ended = true
                })
              ))
          )
          const pull: Pull.Pull<Arr.NonEmptyReadonlyArray<A>, E | PublishError> = Effect.suspend(() => {
            if (failed !== undefined) return Effect.fail(failed)
            if (ended) return Cause.done()
            if (from >= values.length) {
              return Effect.flatMap(next, (chunk) => {
                if (chunk !== undefined) {
                  values = chunk
                  from = 0
                }
                return pull
              })
            }
            const to = Math.min(from + options.maxInFlight, values.length)
            return Effect.flatMap(writer.writePiece(values, from, to), (out) => {
              from = to
              failed = out.error
              return isNonEmpty(out.passed) ? Effect.succeed(out.passed) : pull
            })
          })
          return pull
        }))
    })

const isNonEmpty = <A>(values: ReadonlyArray<A>): values is Arr.NonEmptyReadonlyArray<A> => values.length > 0

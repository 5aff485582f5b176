/**
 * The read operations over any `Source`: the head of a stream, and a read of the
 * entries after an offset (a catch-up read, or a long-poll waiting at the tail).
 *
 * @internal
 */
import type { RedisError } from "@sluice/redis"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Entry, ReadOutcome, ReadRequest } from "../DurableOperations.js"
import type * as Refusal from "../DurableRefusal.js"
import type { Source, View } from "../DurableSource.js"
import * as Wire from "./durableWire.js"
import { gone, notFound } from "./operationWrite.js"

/** The most entries one response carries. @internal */
export const pageSize = 1000

const entryNumber = (id: string): bigint => BigInt(id.slice(id.indexOf("-") + 1))
const entryMs = (id: string): bigint => BigInt(id.slice(0, id.indexOf("-")))
/** Whether the entry id `id` is not after `tail`. @internal */
export const notAfter = (id: string, tail: string): boolean =>
  entryMs(id) < entryMs(tail) || (entryMs(id) === entryMs(tail) && entryNumber(id) <= entryNumber(tail))

/** The entries after `after` that the view holds (a later append waits for the next read). @internal */
export const entriesOf = (source: Source, view: View, after: string) =>
  Effect.map(source.read(after, pageSize), (entries) => entries.filter((entry) => notAfter(entry.id, view.tail)))

/** The entry id a read starts after. @internal */
export const afterOf = (request: ReadRequest, view: View): string =>
  request.offset === undefined || request.offset === "-1"
    ? "0-0"
    : request.offset === "now"
    ? view.tail
    : Option.getOrElse(Wire.entryIdOf(request.offset), () => "0-0")

/** The cursor of a live response. @internal */
export const cursorFor = (request: ReadRequest) =>
  Effect.map(Clock.currentTimeMillis, (now) => Wire.responseCursor(now, request.cursor))

/** The stream's view as it is now: 404 none, 410 gone. @internal */
export const head = (source: Source): Effect.Effect<View, Refusal.DurableRefusal | RedisError.RedisError> =>
  Effect.flatMap(source.load, (loaded) =>
    Option.isNone(loaded)
      ? Effect.fail(notFound)
      : loaded.value.gone
      ? Effect.fail(gone)
      : Effect.succeed(loaded.value))

const timedOut = (view: View, after: string, request: ReadRequest) =>
  Effect.map(cursorFor(request), (cursor): ReadOutcome => ({
    _tag: "TimedOut",
    view,
    offset: Wire.offsetOf(after),
    cursor
  }))

// A long-poll at the tail: the next entries once they come, or none within `longPollMs`.
const awaitEntries = (source: Source, first: View, after: string, request: ReadRequest, longPollMs: number) =>
  Effect.gen(function*() {
    let view = first
    let entries: ReadonlyArray<Entry> = []
    const deadline = (yield* Clock.currentTimeMillis) + longPollMs
    while (entries.length === 0) {
      if (view.closed) return yield* timedOut(view, after, request)
      const left = deadline - (yield* Clock.currentTimeMillis)
      if (left <= 0) return yield* timedOut(view, after, request)
      yield* source.awaitChange(view, left)
      view = yield* head(source)
      entries = yield* entriesOf(source, view, after)
    }
    yield* source.touched(view)
    return { view, entries }
  })

/**
 * The entries after the offset (a catch-up read), or, for a long-poll at the tail,
 * the next entries once they come (`TimedOut` when none came within `longPollMs`, or
 * when the stream is closed).
 *
 * @internal
 */
export const read = (
  source: Source,
  first: View,
  request: ReadRequest,
  longPollMs: number
): Effect.Effect<ReadOutcome, RedisError.RedisError | Refusal.DurableRefusal> =>
  Effect.gen(function*() {
    if (request.offset === "now" && request.live === undefined) {
      yield* source.touched(first)
      return { _tag: "AtTail", view: first } satisfies ReadOutcome
    }
    const after = afterOf(request, first)
    let view = first
    let entries: ReadonlyArray<Entry> = yield* entriesOf(source, view, after)
    yield* source.touched(view)
    if (request.live === "long-poll" && entries.length === 0 && after === view.tail) {
      const waited = yield* awaitEntries(source, view, after, request, longPollMs)
      if ("_tag" in waited) return waited
      view = waited.view
      entries = waited.entries
    }
    const last = entries.length === 0 ? view.tail : entries[entries.length - 1]!.id
    const nextOffset = Wire.offsetOf(entries.length === 0 && notAfter(view.tail, after) ? after : last)
    const upToDate = entries.length === 0 || last === view.tail
    const closed = view.closed && nextOffset === Wire.offsetOf(view.tail) && upToDate
    return {
      _tag: "Entries",
      view,
      entries,
      nextOffset,
      upToDate,
      closed,
      cursor: request.live === "long-poll" ? yield* cursorFor(request) : undefined
    } satisfies ReadOutcome
  })

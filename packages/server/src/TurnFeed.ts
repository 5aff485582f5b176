/**
 * Following one stream of a turn as server-sent events: the entries after a given id,
 * then every entry appended later, until the entry that ends the turn. A live tail
 * that fails (Redis went away) is resumed from the last entry it passed on, with a
 * bounded retry, so a reader sees every entry once; heartbeat comments keep idle
 * connections open, on Effect's `Clock`.
 *
 * @since 0.1.0
 */
import { Backoff, Sse } from "@sluice/core"
import { EntryId, RedisError, RedisStreams, type StreamEntry } from "@sluice/redis"
import { TurnEnding, TurnLease, TurnMetrics } from "@sluice/turns"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { ApiErrorBody } from "./ApiError.js"
import * as EntryFrames from "./internal/entryFrames.js"
import { resumingTail } from "./internal/resumingTail.js"
import * as SharedTail from "./SharedTail.js"

/**
 * How to follow a stream.
 *
 * - `after`: the id to start after (exclusive); `0-0` reads the turn from its start.
 * - `blockMs`: the longest single blocking read of the live tail.
 * - `resumeAttempts`, `resumeBaseMs`, `resumeMaxMs`: a failed tail is resumed after
 *   waits of `resumeBaseMs * 2^n`, capped at `resumeMaxMs`, at most `resumeAttempts`
 *   times in a row (the count starts over once an entry arrives).
 *
 * @since 0.1.0
 * @category models
 */
export interface FollowOptions {
  readonly after: string
  readonly blockMs: number
  readonly resumeAttempts: number
  readonly resumeBaseMs: number
  readonly resumeMaxMs: number
  /**
   * The turn whose producer to watch while following (`watchProducer`), and how
   * often; not watched when absent.
   */
  readonly producer?: ProducerWatch | undefined
}

/**
 * A turn whose producer a reader watches: its key prefix and id, checked every
 * `everyMs`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProducerWatch {
  readonly prefix: string
  readonly turnId: string
  readonly everyMs: number
}

/**
 * The SSE stream's own options: `heartbeatMs` between `: ping` comments, and
 * `idleTimeoutMs`, after which a stream with no new entry is closed.
 *
 * @since 0.1.0
 * @category models
 */
export interface SseOptions {
  readonly heartbeatMs: number
  readonly idleTimeoutMs: number
}

/**
 * The schedule that resumes a failed tail: exponential from `resumeBaseMs`, capped at
 * `resumeMaxMs`, at most `resumeAttempts` retries (core's `Backoff.schedule`), and only
 * while Redis is unavailable (a refused command will not heal).
 *
 * @since 0.1.0
 * @category schedules
 */
export const resumeSchedule = (
  options: Pick<FollowOptions, "resumeAttempts" | "resumeBaseMs" | "resumeMaxMs">
): Schedule.Schedule<unknown, RedisError.RedisError> =>
  Backoff.schedule({
    retryAttempts: options.resumeAttempts,
    retryBaseMs: options.resumeBaseMs,
    retryMaxMs: options.resumeMaxMs
  })
    .pipe(Schedule.while(({ input }: Schedule.InputMetadata<RedisError.RedisError>) => RedisError.isRetryable(input)))

/**
 * Where a reader resuming after `after` starts, given the stream's last entry:
 *
 * - `ended`: the turn has ended and the reader has its last entry, or an id past it
 *   (an id kept from a longer turn): there is nothing to follow.
 * - `tail` from `from`, passing on only entries after `skipThrough` when that is set:
 *   a running turn whose last entry is before `after` is followed from that last entry
 *   (so the stream still closes when the turn ends), and the entries up to `after`,
 *   which the reader says it has, are not passed on.
 *
 * @since 0.1.0
 * @category models
 */
export type ResumeStart =
  | { readonly _tag: "ended" }
  | { readonly _tag: "tail"; readonly from: string; readonly skipThrough: Option.Option<EntryId.EntryId> }

/**
 * Decides where to resume after `after` (a valid entry id) on a stream whose last
 * entry is `last`.
 *
 * @since 0.1.0
 * @category streams
 */
export const resumeStart = (after: string, last: Option.Option<StreamEntry.StreamEntry>): ResumeStart => {
  const tailFrom: ResumeStart = { _tag: "tail", from: after, skipThrough: Option.none() }
  if (Option.isNone(last)) return tailFrom
  const resumeId = EntryId.parse(after)
  const lastId = EntryId.parse(last.value.id)
  if (Option.isNone(resumeId) || Option.isNone(lastId)) return tailFrom
  const atOrPast = EntryId.order(resumeId.value, lastId.value) >= 0
  if (!atOrPast) return tailFrom
  if (TurnEnding.isLast(last.value)) return { _tag: "ended" }
  return { _tag: "tail", from: last.value.id, skipThrough: Option.some(resumeId.value) }
}

/**
 * The entries of `key` after `options.after`, then each entry appended later, ending
 * after the turn's last entry (`TurnEnding.isLast`: `response_done`, `turn_completed`;
 * an error entry before it does not end the stream, so a failed turn's reader gets
 * its usage too). Nothing when the turn has
 * ended and `after` is its last entry or an id past it; on a running turn, an id past
 * its last entry waits for the entries after that id, and the stream still ends when
 * the turn does (see `resumeStart`). When the tail fails while Redis is unavailable it
 * is opened again after the last entry it read, following `resumeSchedule`; no entry
 * is passed on twice or skipped. With `options.producer`, the turn's producer is
 * watched while the stream runs (`watchProducer`): a turn whose producer died is ended
 * with `producer_lost`, and the stream passes that ending on and closes.
 *
 * @since 0.1.0
 * @category streams
 */
export const follow = (
  key: string,
  options: FollowOptions
): Stream.Stream<StreamEntry.StreamEntry, RedisError.RedisError, RedisStreams.RedisStreams> =>
  Stream.unwrap(Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const shared = yield* Effect.serviceOption(SharedTail.SharedTail)
    const last = Option.isSome(shared) ? shared.value.last(key) : redis.xlast(key)
    const start = resumeStart(options.after, yield* last)
    if (start._tag === "ended") return Stream.empty
    const resumed = Option.isSome(shared)
      ? shared.value.follow(key, start.from)
      : resumingTail(redis, key, start.from, { blockMs: options.blockMs, resume: resumeSchedule(options) })
    const entries = Option.match(start.skipThrough, {
      onNone: () => resumed,
      onSome: (through) => {
        const skipped = EntryId.format(through)
        return Stream.filter(resumed, (entry) => EntryId.isAfter(entry.id, skipped))
      }
    })
    const watch = options.producer
    return watch === undefined
      ? entries
      : Stream.drainFork(
        entries,
        Stream.fromEffect(Effect.provideService(watchProducer(watch), RedisStreams.RedisStreams, redis))
      )
  }))

/**
 * How often a reader waiting for a turn's stream to appear looks again
 * (`awaitStream`): 200 ms.
 *
 * @since 0.3.0
 * @category constants
 */
export const awaitPollMs = 200

/**
 * How to wait for a stream to appear: for up to `waitMs` (0: not at all), looking
 * every `pollMs` (`awaitPollMs` by default).
 *
 * @since 0.3.0
 * @category models
 */
export interface AwaitOptions {
  readonly waitMs: number
  readonly pollMs?: number | undefined
}

/**
 * Whether the stream `key` has an entry, waiting for its first for up to
 * `options.waitMs` on Effect's `Clock`: looked at at once, then every `pollMs` (one
 * `XRANGE` of one entry on the command connection each time, no blocking connection)
 * until it has one, `true`, or `waitMs` have passed, `false` (at once when `waitMs`
 * is 0). A turn that is started and followed at once races its first write; its
 * readers wait here rather than being told it does not exist.
 *
 * @since 0.3.0
 * @category streams
 */
export const awaitStream = (
  key: string,
  options: AwaitOptions
): Effect.Effect<boolean, RedisError.RedisError, RedisStreams.RedisStreams> =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    // (Redis's answer resumes the reader where it came, with the answers of other
    // readers: it goes on in a turn of the scheduler, not there)
    const exists = Effect.map(redis.xrange(key, "-", "+", 1), (entries) => entries.length > 0).pipe(
      Effect.tap(Effect.yieldNow)
    )
    if (yield* exists) return true
    if (!(options.waitMs > 0)) return false
    const pollMs = Math.max(1, options.pollMs ?? awaitPollMs)
    const deadline = (yield* Clock.currentTimeMillis) + options.waitMs
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      if (now >= deadline) return false
      yield* Effect.sleep(Duration.millis(Math.min(pollMs, deadline - now)))
      if (yield* exists) return true
    }
  })

/**
 * Ends the turn with `producer_lost` (`TurnEnding.producerLost`, in both streams)
 * when its producer's lease has lapsed and the turn has no last entry; `true` when
 * this call wrote the ending. A turn that never had a lease (`none`) is never ended
 * here, and whoever writes the ending first wins (another server, the producer itself
 * coming back): the others find it ended.
 *
 * @since 0.1.0
 * @category producers
 */
export const endIfProducerLost = (
  prefix: string,
  turnId: string
): Effect.Effect<boolean, RedisError.RedisError, RedisStreams.RedisStreams> =>
  Effect.gen(function*() {
    if ((yield* TurnLease.state(prefix, turnId)) !== "lapsed") return false
    const outcome = yield* TurnEnding.end(prefix, turnId, TurnEnding.producerLost)
    if (outcome === "ended") {
      yield* Metric.update(TurnMetrics.leaseExpiries("reader"), 1)
      yield* Effect.logWarning(`turn ${turnId}: its producer's lease lapsed; ended it with producer_lost`)
    }
    return outcome === "ended"
  })

/**
 * Checks the turn's producer every `everyMs` on Effect's `Clock` (`endIfProducerLost`),
 * for as long as it runs; a check that fails on a Redis error is logged and tried again
 * at the next one.
 *
 * @since 0.1.0
 * @category producers
 */
export const watchProducer = (watch: ProducerWatch): Effect.Effect<never, never, RedisStreams.RedisStreams> =>
  endIfProducerLost(watch.prefix, watch.turnId).pipe(
    Effect.catch((error) => Effect.logWarning(`checking the producer of turn ${watch.turnId}: ${error.message}`)),
    Effect.delay(Duration.millis(watch.everyMs)),
    Effect.forever
  )

/**
 * The SSE text of an entry: `id` is the entry id, `event` the entry's `payloadType`,
 * `data` its `payload` (the JSON text as stored). Fails, naming the field, when the
 * entry lacks one of the fields of docs/redis.md#entries or has a malformed one. Synchronous: it runs
 * once per entry on the hot path of every stream.
 *
 * @since 0.1.0
 * @category encoding
 */
export const frame = (entry: StreamEntry.StreamEntry): Result.Result<string, Schema.SchemaError> =>
  EntryFrames.frameText(entry)

/**
 * The `: ping` comment of a heartbeat.
 *
 * @since 0.1.0
 * @category constants
 */
export const ping = ": ping\n\n"

/**
 * The comment that opens every stream, so a client sees the response at once.
 *
 * @since 0.1.0
 * @category constants
 */
export const opening = ": connected\n\n"

/**
 * The event that ends a stream that failed after its response began: `event:
 * stream_error`, no id, `data` the error body `{"error": {"code", "message"}}`. A
 * client resumes from the last id it saw.
 *
 * @since 0.1.0
 * @category encoding
 */
export const errorFrame = (error: ApiErrorBody["error"]): string =>
  Sse.encodeEvent({ event: "stream_error", data: JSON.stringify({ error } satisfies ApiErrorBody) })

/**
 * The event that ends every open stream when the server shuts down: `event:
 * server_closing`, no id, `retry: 1000`, `data` `{"reconnect": true}`. The turn is not
 * over because of it: a client resumes from the last id it saw, on another server or
 * this one's replacement (an `EventSource` reconnects after `retry` milliseconds).
 *
 * @since 0.3.0
 * @category encoding
 */
export const closingFrame: string = Sse.encodeEvent({
  event: "server_closing",
  data: JSON.stringify({ reconnect: true }),
  retry: 1000
})

/**
 * A stream's frames until the server closes (`closing` completes), then
 * `closingFrame`; a stream that ended by itself before gets none.
 *
 * @since 0.3.0
 * @category streams
 */
export const untilClosing =
  (closing: Effect.Effect<void>) => <E, R>(self: Stream.Stream<string, E, R>): Stream.Stream<string, E, R> =>
    endWith(self, closing, closingFrame)

// A stream's elements until `closing` completes, then `last`; nothing more when it
// ended by itself before.
const endWith = <A, E, R>(
  self: Stream.Stream<A, E, R>,
  closing: Effect.Effect<void>,
  last: A
): Stream.Stream<A, E, R> =>
  Stream.suspend(() => {
    let closed = false
    const signal = Effect.tap(closing, () =>
      Effect.sync(() => {
        closed = true
      }))
    return Stream.concat(
      Stream.interruptWhen(self, signal),
      Stream.suspend(() => (closed ? Stream.make(last) : Stream.empty))
    )
  })

const describeFailure = (error: RedisError.RedisError | Schema.SchemaError): ApiErrorBody["error"] =>
  Schema.isSchemaError(error)
    ? {
      code: "invalid_entry",
      message: `an entry is not a turn entry: ${error.message}`
    }
    : error.reason === "Unavailable"
    ? { code: "redis_unavailable", message: `Redis is unavailable: ${error.message}` }
    : { code: "internal", message: `Redis refused a read: ${error.message}` }

// The frames of a chunk of entries as one piece of text; an entry that cannot be
// framed ends the stream after the entries before it.
const frameChunk = (chunk: ReadonlyArray<StreamEntry.StreamEntry>): Stream.Stream<string, Schema.SchemaError> => {
  let text = ""
  for (const entry of chunk) {
    const framed = frame(entry)
    if (Result.isFailure(framed)) {
      return Stream.concat(text === "" ? Stream.empty : Stream.make(text), Stream.fail(framed.failure))
    }
    text += framed.success
  }
  return text === "" ? Stream.empty : Stream.make(text)
}

/**
 * The SSE text of a followed stream: the opening comment, a frame per entry, `: ping`
 * every `heartbeatMs`, and, when following fails for good, a `stream_error` event.
 * Ends after the turn's last entry, or after `idleTimeoutMs` without an entry.
 *
 * @since 0.1.0
 * @category streams
 */
export const sse =
  (options: SseOptions) =>
  <R>(entries: Stream.Stream<StreamEntry.StreamEntry, RedisError.RedisError, R>): Stream.Stream<string, never, R> => {
    const frames = entries.pipe(
      Stream.chunks,
      Stream.flatMap(frameChunk),
      Stream.timeout(Duration.millis(options.idleTimeoutMs)),
      Stream.catch((error) =>
        Stream.unwrap(Effect.as(
          Effect.logWarning(`closing a turn stream: ${error.message}`),
          Stream.make(errorFrame(describeFailure(error)))
        ))
      )
    )
    const heartbeats = Stream.fromSchedule(Schedule.spaced(Duration.millis(options.heartbeatMs))).pipe(Stream.as(ping))
    return Stream.merge(frames, heartbeats, { haltStrategy: "left" }).pipe(Stream.prepend([opening]))
  }

const encoder = new TextEncoder()
const openingBytes = encoder.encode(opening)
const pingBytes = encoder.encode(ping)
const closingBytes = encoder.encode(closingFrame)

// The writes of a chunk of entries' frames; an entry that cannot be framed ends the
// stream after the entries before it.
const writeChunk = (chunk: ReadonlyArray<StreamEntry.StreamEntry>): Stream.Stream<Uint8Array, Schema.SchemaError> => {
  const { error, writes } = EntryFrames.writesOf(chunk)
  const framed = Stream.fromArrays(...writes.map((write) => [write] as const))
  return error === undefined ? framed : Stream.concat(framed, Stream.fail(error))
}

/**
 * The options of `sseBytes`: those of `sse`, and `closing`, which ends the stream with
 * `closingFrame` when it completes (the server shutting down).
 *
 * @since 0.3.0
 * @category models
 */
export interface SseBytesOptions extends SseOptions {
  readonly closing?: Effect.Effect<void> | undefined
}

/**
 * The same SSE as `sse`, as bytes, in writes of at most 64 KiB (each write one chunk of
 * the stream, so a response written with backpressure holds at most a write or two a
 * reader): the opening comment, a frame per entry, `: ping` every `heartbeatMs`, and a
 * `stream_error` event when following fails for good; ends after the turn's last
 * entry, after `idleTimeoutMs` without one, or with `closingFrame` when `closing`
 * completes. The frames of entries that a `SharedTail` hands to many readers are made
 * once for all of them (docs/http.md#readers-share-one-tail).
 *
 * @since 0.3.0
 * @category streams
 */
export const sseBytes = (options: SseBytesOptions) =>
<R>(
  entries: Stream.Stream<StreamEntry.StreamEntry, RedisError.RedisError, R>
): Stream.Stream<Uint8Array, never, R> => {
  const frames = entries.pipe(
    Stream.chunks,
    Stream.flatMap(writeChunk),
    Stream.timeout(Duration.millis(options.idleTimeoutMs)),
    Stream.catch((error) =>
      Stream.unwrap(Effect.as(
        Effect.logWarning(`closing a turn stream: ${error.message}`),
        Stream.make(encoder.encode(errorFrame(describeFailure(error))))
      ))
    )
  )
  const heartbeats = Stream.fromSchedule(Schedule.spaced(Duration.millis(options.heartbeatMs))).pipe(
    Stream.as(pingBytes)
  )
  const body = Stream.merge(frames, heartbeats, { haltStrategy: "left" }).pipe(Stream.prepend([openingBytes]))
  return options.closing === undefined ? body : endWith(body, options.closing, closingBytes)
}

/**
 * The headers of a turn's SSE streams, besides their content type (`text/event-stream;
 * charset=utf-8`): no caching, no transforming, no buffering by a proxy.
 *
 * @since 0.3.0
 * @category constants
 */
export const streamHeaders: Readonly<Record<string, string>> = {
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no"
}

/**
 * A response of SSE text (`text/event-stream; charset=utf-8`) with the given headers.
 *
 * @since 0.3.0
 * @category responses
 */
export const sseResponse = (
  body: Stream.Stream<string>,
  headers: Readonly<Record<string, string>>
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.stream(Stream.encodeText(body), { contentType: "text/event-stream; charset=utf-8", headers })

/**
 * A turn's entries as the SSE response `GET /v1/turns/:turnId/upserts` (or `/events`)
 * sends, for an application's own handler: `RunningTurn.upserts` of a turn started with
 * `TurnPipeline.start`, answered while the pipeline persists it. The same frames (`id`
 * the entry id, `event` its `payloadType`, `data` its payload), so a reader that loses
 * the response resumes on `/v1/turns/:turnId/upserts` with `Last-Event-ID`; `: ping`
 * every `heartbeatMs` (15 s); the response ends after the turn's last entry, or after
 * `idleTimeoutMs` (10 min) without one; a Redis failure past the entries' own retries
 * ends it with `event: stream_error` (`HttpServerResponse.toWeb` makes it a web
 * `Response`).
 *
 * @since 0.3.0
 * @category responses
 */
export const response = (
  entries: Stream.Stream<StreamEntry.StreamEntry, RedisError.RedisError>,
  options: Partial<SseOptions> = {}
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.stream(
    sseBytes({ heartbeatMs: options.heartbeatMs ?? 15_000, idleTimeoutMs: options.idleTimeoutMs ?? 600_000 })(entries),
    { contentType: "text/event-stream; charset=utf-8", headers: streamHeaders }
  )

/**
 * The route handlers of the turn API.
 *
 * @internal
 */
import { Ids } from "@sluice/core"
import { HttpCompression as Compression } from "@sluice/durable-streams"
import { EntryId, type RedisError, RedisStreams } from "@sluice/redis"
import { TurnControl, TurnEntry, TurnKeys } from "@sluice/turns"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import { ApiError } from "../ApiError.js"
import * as SharedTail from "../SharedTail.js"
import * as TurnFeed from "../TurnFeed.js"
import type { ResolvedOptions } from "../TurnServerOptions.js"
import * as TurnSnapshot from "../TurnSnapshot.js"
import type { TurnStarterService } from "../TurnStarter.js"
import * as UiMessageStream from "../UiMessageStream.js"
import type { Caller, Credentials } from "./access.js"
import { observeFeed } from "./serverMetrics.js"
import { summarize, TurnList } from "./turnSummary.js"
import { dropStalled } from "./writeGuard.js"

/**
 * The credentials of the request being handled, set once its token is checked.
 *
 * @internal
 */
export class CurrentCaller extends Context.Service<CurrentCaller, Credentials>()("@sluice/server/CurrentCaller") {}

/**
 * What the stream routes share: the slots of each caller, and the signal that the
 * server is closing (open streams end then).
 *
 * @internal
 */
export interface StreamContext {
  readonly slots: { readonly acquire: (caller: Caller) => Effect.Effect<void, ApiError, Scope.Scope> }
  readonly closing: Effect.Effect<void>
  /** The process's shared tails: every reader of a stream joins its one tail. */
  readonly tails: SharedTail.SharedTailService
  /**
   * Watches the producer of a turn (`TurnFeed.watchProducer`) for the length of the
   * scope: one watch per turn in the process, whatever the number of its readers.
   */
  readonly watchProducer: (turnId: string) => Effect.Effect<void, never, Scope.Scope>
}

const noStore = { "cache-control": "no-store" } as const

/**
 * The `ApiError` of a failed Redis command: 503 while Redis is unavailable, 500 when
 * it refused the command.
 *
 * @internal
 */
export const fromRedisError = (error: RedisError.RedisError): Effect.Effect<never, ApiError> =>
  Effect.andThen(
    Effect.logError(`Redis command failed: ${error.message}`),
    Effect.fail(
      error.reason === "Unavailable"
        ? new ApiError({ code: "redis_unavailable", message: "Redis is unavailable, try again later" })
        : new ApiError({ code: "internal", message: `Redis refused ${error.command}` })
    )
  )

const turnIdParam: Effect.Effect<string, ApiError, HttpRouter.RouteContext> = Effect.flatMap(
  HttpRouter.params,
  (params) => {
    const turnId = params.turnId ?? ""
    return Ids.isUuid(turnId)
      ? Effect.succeed(turnId)
      : Effect.fail(
        new ApiError({
          code: "invalid_turn_id",
          message: `turn id ${JSON.stringify(turnId.slice(0, 64))} is not a UUID`
        })
      )
  }
)

const single = (
  search: Readonly<Record<string, string | ReadonlyArray<string>>>,
  name: string
): Effect.Effect<Option.Option<string>, ApiError> => {
  const value = search[name]
  if (value === undefined) return Effect.succeed(Option.none())
  if (typeof value === "string") return Effect.succeed(Option.some(value))
  return Effect.fail(new ApiError({ code: "invalid_query", message: `?${name}= is given ${value.length} times` }))
}

// A stream's resume point as a request names it, read by `parse`: `Last-Event-ID` wins
// over `?after=` (a browser that reconnects sends the id it saw last, on the URL it
// first opened); `start` without either. Text that `parse` refuses is 400
// `invalid_last_event_id`, saying what was expected.
const resumeFrom = <A>(parse: (text: string) => Option.Option<A>, start: A, expected: string): Effect.Effect<
  A,
  ApiError,
  HttpServerRequest.HttpServerRequest | HttpServerRequest.ParsedSearchParams
> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const search = yield* HttpServerRequest.ParsedSearchParams
    const header = request.headers["last-event-id"]
    const [source, value] = header !== undefined
      ? ["Last-Event-ID", header] as const
      : ["?after=", Option.getOrUndefined(yield* single(search, "after"))] as const
    if (value === undefined) return start
    return yield* Option.match(parse(value), {
      onNone: () =>
        Effect.fail(
          new ApiError({
            code: "invalid_last_event_id",
            message: `${source} ${JSON.stringify(value.slice(0, 64))} is ${expected}`
          })
        ),
      onSome: Effect.succeed
    })
  })

/**
 * The resume point of a stream of entries (a turn's streams, a thread's events): an
 * entry id, from `Last-Event-ID` or `?after=`; `0-0` (the start) without either.
 *
 * @internal
 */
export const resumePoint = resumeFrom(
  (text) => Option.map(EntryId.parse(text), EntryId.format),
  "0-0",
  "not an entry id (<ms>-<seq>)"
)

// A stream of the turn followed from `after`, once the turn is known to have it and
// the caller has a slot, with its key and the turn's id. A stream not written yet is
// waited for, up to `awaitTurnMs` (`TurnFeed.awaitStream`), before the response's
// head: the reader then gets the whole turn, or 404 after the wait (at once when the
// server closes meanwhile). A waiting reader holds one of its caller's slots.
const followed = (options: ResolvedOptions, context: StreamContext, stream: TurnKeys.TurnStream, after: string) =>
  Effect.gen(function*() {
    const turnId = yield* turnIdParam
    const redis = yield* RedisStreams.RedisStreams
    const key = TurnKeys.streamKey(options.prefix, turnId, stream)
    const caller = (yield* CurrentCaller).caller
    const exists = TurnFeed.awaitStream(key, { waitMs: 0 })
    if (yield* Effect.catch(exists, fromRedisError)) {
      yield* context.slots.acquire(caller)
    } else {
      const notFound = (waited: string) =>
        new ApiError({ code: "turn_not_found", message: `turn ${turnId} has no ${stream} stream${waited}` })
      if (options.awaitTurnMs === 0) return yield* notFound("")
      yield* context.slots.acquire(caller)
      const appeared = yield* TurnFeed.awaitStream(key, { waitMs: options.awaitTurnMs }).pipe(
        Effect.catch(fromRedisError),
        Effect.raceFirst(Effect.as(context.closing, false))
      )
      if (!appeared) return yield* notFound(` (waited up to ${options.awaitTurnMs} ms)`)
    }
    const entries = TurnFeed.follow(key, {
      after,
      blockMs: options.tailBlockMs,
      resumeAttempts: options.resumeAttempts,
      resumeBaseMs: options.resumeBaseMs,
      resumeMaxMs: options.resumeMaxMs
    }).pipe(
      Stream.provideService(RedisStreams.RedisStreams, redis),
      Stream.provideService(SharedTail.SharedTail, context.tails)
    )
    // the turn's producer is watched while the stream runs (its readers share one watch)
    return Stream.unwrap(Effect.as(context.watchProducer(turnId), entries))
  })

// An SSE response of bytes, given up when its client takes no byte of a write for
// `writeTimeoutMs` (docs/http.md#slow-readers).
const sseResponse = (
  options: ResolvedOptions,
  body: Stream.Stream<Uint8Array>,
  headers: Readonly<Record<string, string>>
) =>
  HttpServerResponse.stream(
    body.pipe(dropStalled(options.writeTimeoutMs)),
    { contentType: "text/event-stream; charset=utf-8", headers }
  )

/**
 * `GET /v1/turns/:turnId/upserts` and `/events`: the stream as SSE, from the resume
 * point, live until the turn ends; a stream not written yet is waited for up to
 * `awaitTurnMs` before the answer (then 404 `turn_not_found`).
 *
 * @internal
 */
export const turnStream = (options: ResolvedOptions, context: StreamContext, stream: TurnKeys.TurnStream) =>
  Effect.gen(function*() {
    const turnId = yield* turnIdParam
    const after = yield* resumePoint
    const entries = yield* followed(options, context, stream, after)
    const body = entries.pipe(
      TurnFeed.sseBytes({
        heartbeatMs: options.heartbeatMs,
        idleTimeoutMs: options.idleTimeoutMs,
        closing: context.closing
      }),
      observeFeed(stream, turnId)
    )
    return sseResponse(options, body, TurnFeed.streamHeaders)
  })

// The UI message stream's resume point: an entry id as its frames carry or an event
// id (a UUID) as a started turn's response carries.
const uiResumePoint = resumeFrom(
  UiMessageStream.parseResumePoint,
  UiMessageStream.fromStart,
  "neither an entry id (<ms>-<seq>) nor an event id"
)

/**
 * `GET /v1/turns/:turnId/ui-message-stream`: the turn's Stream A as the AI SDK's UI
 * message stream (`UiMessageStream`), live until the turn ends, then `data: [DONE]`.
 * Each entry's last frame carries the entry's id; with a resume point (`Last-Event-ID`
 * or `?after=`: an entry id, or the event id of a started turn's response), only the
 * chunks after it are sent, valid for a message that holds the earlier ones; without
 * one, the turn from its start. Stream A is read from its start either way (the
 * mapping needs every event). A turn not written yet is waited for as on `/events`
 * (`awaitTurnMs`).
 *
 * @internal
 */
export const uiMessageStream = (options: ResolvedOptions, context: StreamContext) =>
  Effect.gen(function*() {
    yield* turnIdParam // checked before the resume point
    const resume = yield* uiResumePoint
    const entries = yield* followed(options, context, "events", "0-0")
    const body = UiMessageStream.uiMessageSse(entries, {
      heartbeatMs: options.heartbeatMs,
      idleTimeoutMs: options.idleTimeoutMs
    }, resume).pipe(Stream.interruptWhen(context.closing), Stream.encodeText)
    return sseResponse(options, body, UiMessageStream.headers)
  })

/**
 * How many snapshots one server loads at once. A snapshot's load is mostly work on
 * this process's one thread (its entries read whole, their payloads checked), so more
 * at once only queue their reads on the range-read connection, where the last could
 * outwait the command timeout, and hold more long payloads in memory together.
 *
 * @internal
 */
export const snapshotLoads = 2

// The snapshot's JSON text, gzipped for a client that accepts it.
const snapshotResponse = (options: ResolvedOptions, json: string) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Compression.respond({
      encoding: Compression.encodingFor(options.compression, request.headers["accept-encoding"]),
      headers: { ...noStore, "content-type": "application/json" }
    }, () => json))

/**
 * `GET /v1/turns/:turnId`: the turn's snapshot, as JSON text assembled from the items'
 * stored texts (`TurnSnapshot.loadJson`); at most `snapshotLoads` loading at once. A
 * turn not written yet is 404 `turn_not_found` at once, whatever `awaitTurnMs` (a
 * reader that waits opens the feed from its start: `@sluice/client` does).
 *
 * @internal
 */
export const turnSnapshot = (options: ResolvedOptions) => {
  const loading = Semaphore.makeUnsafe(snapshotLoads)
  return Effect.gen(function*() {
    const turnId = yield* turnIdParam
    const load = Semaphore.withPermits(loading, 1)(TurnSnapshot.loadJson(options.prefix, turnId))
    // a turn shown as running whose producer died is ended first, and shown ended
    const snapshot = yield* load.pipe(
      Effect.flatMap((loaded) =>
        Option.isSome(loaded) && loaded.value.status === "streaming"
          ? Effect.flatMap(TurnFeed.endIfProducerLost(options.prefix, turnId), (ended) =>
            ended ? load : Effect.succeed(loaded))
          : Effect.succeed(loaded)
      ),
      Effect.catchTags({
        RedisError: fromRedisError,
        InvalidEntry: (error) =>
          Effect.andThen(
            Effect.logError(error.message),
            Effect.fail(new ApiError({ code: "invalid_entry", message: error.message }))
          )
      })
    )
    return yield* Option.match(snapshot, {
      onNone: () =>
        Effect.fail(new ApiError({ code: "turn_not_found", message: `turn ${turnId} has no upserts stream` })),
      onSome: (found) => snapshotResponse(options, found.json)
    })
  })
}

/**
 * `POST /v1/turns/:turnId/cancel`: cancels the turn. A turn this process runs (its
 * `TurnStarter`'s `cancel` says so) is cancelled at once, without Redis; any other is
 * asked of the process running it (`TurnControl.requestCancel`). 202 for a running
 * turn, 409 `turn_finished` for one that has ended (a turn whose producer's lease
 * lapsed is ended with `producer_lost` here, and is then finished), 404 for an unknown
 * one, 403 for a caller that may not cancel (a `read` page token).
 *
 * @internal
 */
export const cancelTurn = (options: ResolvedOptions, starter: Option.Option<TurnStarterService>) =>
  Effect.gen(function*() {
    const turnId = yield* turnIdParam
    if (!(yield* CurrentCaller).mayCancel) {
      return yield* new ApiError({
        code: "forbidden",
        message: "this token may only read: cancelling needs a bearer token or a page token of the control scope"
      })
    }
    const requested = HttpServerResponse.jsonUnsafe({ turnId, cancel: "requested" }, { status: 202, headers: noStore })
    const cancelHere = Option.getOrUndefined(starter)?.cancel
    if (cancelHere !== undefined && (yield* cancelHere(turnId))) return requested
    const redis = yield* RedisStreams.RedisStreams
    const state = Effect.gen(function*() {
      const lastB = yield* redis.xlast(TurnKeys.upsertsKey(options.prefix, turnId))
      const lastA = yield* redis.xlast(TurnKeys.eventsKey(options.prefix, turnId))
      if (Option.isNone(lastA) && Option.isNone(lastB)) return "unknown" as const
      const ended = Option.exists(lastB, TurnEntry.isFinal)
      return ended || (yield* TurnFeed.endIfProducerLost(options.prefix, turnId))
        ? "finished" as const
        : "running" as const
    })
    const found = yield* Effect.catch(state, fromRedisError)
    if (found === "unknown") {
      return yield* new ApiError({ code: "turn_not_found", message: `turn ${turnId} has no streams` })
    }
    if (found === "finished") {
      return yield* new ApiError({ code: "turn_finished", message: `turn ${turnId} has ended` })
    }
    yield* Effect.catch(TurnControl.requestCancel(options.prefix, turnId), fromRedisError)
    return requested
  })

const limitPattern = /^[1-9]\d{0,5}$/

/**
 * `GET /v1/turns`: recent turns, newest first, each with its provider, model, status
 * and duration when its stream tells them (`turnSummary.ts`).
 *
 * @internal
 */
export const recentTurns = (options: ResolvedOptions) =>
  Effect.gen(function*() {
    const search = yield* HttpServerRequest.ParsedSearchParams
    const text = yield* single(search, "limit")
    const limit = Option.isNone(text) ? options.listLimit : limitPattern.test(text.value) ? Number(text.value) : NaN
    if (!(limit >= 1 && limit <= options.maxListLimit)) {
      return yield* new ApiError({
        code: "invalid_query",
        message: `?limit= must be an integer from 1 to ${options.maxListLimit}`
      })
    }
    const redis = yield* RedisStreams.RedisStreams
    const members = yield* Effect.catch(
      redis.zrangeByScore(TurnKeys.turnsKey(options.prefix), -Infinity, Infinity, { reverse: true, count: limit }),
      fromRedisError
    )
    const turns = yield* Effect.catch(
      Effect.forEach(members, (member) => summarize(options.prefix, member.member, member.score), { concurrency: 8 }),
      fromRedisError
    )
    return yield* HttpServerResponse.schemaJson(TurnList)({ turns }, { headers: noStore }).pipe(Effect.orDie)
  })

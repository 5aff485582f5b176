/**
 * The thread routes (docs/http.md#threads): a thread's next turn started from what is
 * new, the conversation as UI messages, the thread's events as SSE, its deletion; and
 * what a thread token may reach.
 *
 * @internal
 */
import { Backoff, Sse, ThreadInput } from "@sluice/core"
import type { RedisError } from "@sluice/redis"
import { type ThreadError, type ThreadLog, Threads, TurnControl } from "@sluice/turns"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ApiError } from "../ApiError.js"
import type * as ThreadStarter from "../ThreadStarter.js"
import * as TurnFeed from "../TurnFeed.js"
import type { ResolvedOptions } from "../TurnServerOptions.js"
import * as UiMessageStream from "../UiMessageStream.js"
import type { Caller, Credentials } from "./access.js"
import { CurrentCaller, fromRedisError, resumePoint } from "./handlers.js"
import * as RateWindow from "./rateWindow.js"
import { endedEvents, readJsonBody, turnIdHeader } from "./startTurn.js"
import { dropStalled } from "./writeGuard.js"

/**
 * The header that names the thread of a started turn.
 *
 * @internal
 */
export const threadIdHeader = "x-sluice-thread-id"

const noStore = { "cache-control": "no-store" } as const

/**
 * The `ApiError` of a failed thread operation (docs/http.md#threads).
 *
 * @internal
 */
export const fromThreadError = (
  error: ThreadError.ThreadError | RedisError.RedisError
): Effect.Effect<never, ApiError> => {
  switch (error._tag) {
    case "RedisError":
      return fromRedisError(error)
    case "ThreadNotFound":
    case "ThreadDeleted":
      return Effect.fail(new ApiError({ code: "thread_not_found", message: error.message }))
    case "ThreadTurnNotFound":
      return Effect.fail(new ApiError({ code: "turn_not_found", message: error.message, turnId: error.turnId }))
    case "TurnRunning":
      return Effect.fail(new ApiError({ code: "turn_running", message: error.message, turnId: error.turnId }))
    case "TurnNotRunning":
      return Effect.fail(new ApiError({ code: "turn_not_running", message: error.message, turnId: error.turnId }))
    case "InvalidThreadInput":
      return Effect.fail(
        new ApiError({ code: "invalid_request", message: `${error.field}: ${error.reason}`, field: error.field })
      )
    case "ThreadExists":
      return Effect.fail(new ApiError({ code: "thread_exists", message: error.message }))
    case "ThreadContended":
      return Effect.fail(new ApiError({ code: "thread_contended", message: error.message, retryAfterSeconds: 1 }))
  }
}

const threadIdParam: Effect.Effect<string, ApiError, HttpRouter.RouteContext> = Effect.flatMap(
  HttpRouter.params,
  (params) => {
    const threadId = params.threadId ?? ""
    return ThreadInput.isThreadId(threadId)
      ? Effect.succeed(threadId)
      : Effect.fail(
        new ApiError({
          code: "invalid_thread_id",
          message: `thread id ${JSON.stringify(threadId.slice(0, 64))}: ${ThreadInput.threadIdRule}`
        })
      )
  }
)

/**
 * What a request may do to a thread: `read` it (its conversation, its events, its
 * turns' streams), `write` it (start turns, cancel them), or `delete` it.
 *
 * @internal
 */
export type ThreadAccess = "read" | "write" | "delete"

/**
 * Checks that the caller may do `access` to the thread: a thread token only in its
 * own thread (`write` with a token of the write scope; never `delete`), a bearer token
 * by its scope.
 *
 * @internal
 */
export const allow = (
  credentials: Credentials,
  threadId: string,
  access: ThreadAccess
): Effect.Effect<void, ApiError> => {
  const thread = credentials.thread
  if (thread === undefined) {
    return access === "read" || credentials.mayWrite
      ? Effect.void
      : Effect.fail(new ApiError({ code: "forbidden", message: "this token may only read threads" }))
  }
  if (thread.threadId !== threadId) {
    return Effect.fail(new ApiError({ code: "forbidden", message: "this thread token is for another thread" }))
  }
  if (access === "delete") {
    return Effect.fail(new ApiError({ code: "forbidden", message: "a thread token cannot delete its thread" }))
  }
  return access === "write" && thread.scope !== "write"
    ? Effect.fail(new ApiError({ code: "forbidden", message: "this thread token may only read its thread" }))
    : Effect.void
}

/**
 * What the thread routes share.
 *
 * @internal
 */
export interface ThreadContext {
  readonly options: ResolvedOptions
  readonly threads: Option.Option<Threads.ThreadsService>
  readonly starter: Option.Option<ThreadStarter.ThreadStarterService>
  /** Takes a stream slot of the caller for the scope (a thread token's from its own limit). */
  readonly slot: (credentials: Credentials) => Effect.Effect<void, ApiError, Scope.Scope>
  readonly closing: Effect.Effect<void>
}

const required = <A>(service: Option.Option<A>, what: string): Effect.Effect<A, ApiError> =>
  Option.match(service, {
    onNone: () => Effect.fail(new ApiError({ code: "not_implemented", message: `this server ${what}` })),
    onSome: Effect.succeed
  })

const threadsOf = (context: ThreadContext) => required(context.threads, "keeps no threads")

// 4 retries, 100 ms doubling to 1.6 s: a Redis blip or a busy log.
const recordEndRetries = Backoff.schedule({ retryAttempts: 4, retryBaseMs: 100, retryMaxMs: 1_600 })

/**
 * A turn's end recorded in its thread, so that the thread's running slot is freed
 * whatever the ending; a few attempts, then logged: the thread then records the end
 * from the turn's streams at its next `get` or `beginTurn` (docs/threads.md#faults).
 * A turn ended already, or a thread deleted meanwhile, is as expected.
 *
 * @internal
 */
export const recordEnd = (
  threads: Threads.ThreadsService,
  threadId: string,
  turnId: string,
  end: ThreadLog.TurnEnd
) =>
  threads.endTurn(threadId, turnId, end).pipe(
    Effect.retry({
      schedule: recordEndRetries,
      while: (error) => error._tag === "RedisError" || error._tag === "ThreadContended"
    }),
    Effect.catch((error) => {
      switch (error._tag) {
        case "TurnNotRunning": // ended already (by a delete, or by hand)
          return Effect.void
        case "ThreadNotFound": // deleted meanwhile
          return Effect.logDebug(`thread ${threadId} was deleted before the end of turn ${turnId} was recorded`)
        default:
          return Effect.logError(`thread ${threadId}: could not record the end of turn ${turnId}: ${error.message}`)
      }
    })
  )

const turnPaths = (turnId: string) => ({
  turnId,
  uiMessageStream: `/v1/turns/${turnId}/ui-message-stream`,
  events: `/v1/turns/${turnId}/events`,
  cancel: `/v1/turns/${turnId}/cancel`
})

/**
 * `POST /v1/threads/:threadId/turns`: begins the thread's next turn from what is new
 * (created with its first turn), has the `ThreadStarter` run it on the thread's
 * history, and answers with the UI message stream as `POST /v1/turns` does. The
 * turn's end is recorded in the thread whatever it is (`endings` waits for it when the
 * server closes); a turn the starter did not start is ended `failed` at once.
 *
 * @internal
 */
export const startThreadTurn = (
  context: ThreadContext,
  endings: FiberSet.FiberSet<void, never>,
  turnsWindow: { readonly take: (key: string) => Effect.Effect<RateWindow.Taken> }
) =>
  Effect.gen(function*() {
    const threadId = yield* threadIdParam
    const credentials = yield* CurrentCaller
    yield* allow(credentials, threadId, "write")
    const threads = yield* threadsOf(context)
    const starter = yield* required(context.starter, "starts no thread turns")
    const body = yield* readJsonBody(context.options.maxBodyBytes)
    const request = yield* Result.match(ThreadInput.decodeTurnRequest(body), {
      onFailure: (error) =>
        Effect.fail(new ApiError({ code: "invalid_request", message: error.message, field: error.field })),
      onSuccess: Effect.succeed
    })
    const choice = yield* starter.check({ model: request.model, provider: request.provider, tools: request.tools })
    if (credentials.thread !== undefined) {
      // keyed by the thread: a token minted again shares its window
      const taken = yield* turnsWindow.take(threadId)
      if (taken._tag === "Refused") {
        return yield* new ApiError({
          code: "rate_limited",
          message: `at most ${context.options.threadTurnsPerMinute} turns a minute per thread with thread tokens`,
          retryAfterSeconds: taken.retryAfterSeconds
        })
      }
    }
    const input: ThreadInput.TurnInput = {
      ...(request.message === undefined ? {} : { message: request.message }),
      ...(request.toolResults === undefined ? {} : { toolResults: request.toolResults }),
      ...(request.approvals === undefined ? {} : { approvals: request.approvals })
    }
    const failed = (turnId: string, code: string, message: string) =>
      recordEnd(threads, threadId, turnId, { status: "failed", items: [], error: { code, message } })
    // From the turn begun to its ending watched, nothing interrupts: a request
    // interrupted while the turn starts records it failed; never a slot held for good.
    const started = yield* Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const begun = yield* Effect.catch(
          request.regenerate === true
            ? threads.regenerate(threadId)
            : threads.beginTurn(threadId, input, {
              create: true,
              ...(request.replaces === undefined ? {} : { replaces: request.replaces })
            }),
          fromThreadError
        )
        const started = yield* restore(starter.start({
          threadId,
          turnId: begun.turnId,
          prefix: begun.prefix,
          messages: begun.messages,
          choice
        })).pipe(
          Effect.tapError((error) => failed(begun.turnId, error.code, error.message)),
          Effect.onInterrupt(() =>
            failed(begun.turnId, "aborted", "the request was interrupted before the turn started")
          )
        )
        yield* FiberSet.run(
          endings,
          Effect.flatMap(started.ended, (end) => recordEnd(threads, threadId, begun.turnId, end))
        )
        return started
      })
    )
    return HttpServerResponse.setHeaders(UiMessageStream.response(endedEvents(started.events)), {
      [turnIdHeader]: started.turnId,
      [threadIdHeader]: threadId,
      location: `/v1/turns/${started.turnId}`
    })
  })

/**
 * The JSON of `GET /v1/threads/:threadId` (docs/http.md#threads).
 *
 * @internal
 */
export const threadJson = (info: Threads.ThreadInfo, messages: ReadonlyArray<unknown>) => ({
  threadId: info.threadId,
  createdAt: info.createdAt,
  updatedAt: info.updatedAt,
  head: info.head,
  turnCount: info.turnCount,
  lastEventId: info.lastEventId,
  running: Option.match(info.running, { onNone: () => null, onSome: (running) => turnPaths(running.turnId) }),
  messages
})

/**
 * `GET /v1/threads/:threadId`: the thread, its current path as UI messages, and its
 * running turn (with its streams' paths), if any.
 *
 * @internal
 */
export const getThread = (context: ThreadContext) =>
  Effect.gen(function*() {
    const threadId = yield* threadIdParam
    yield* allow(yield* CurrentCaller, threadId, "read")
    const threads = yield* threadsOf(context)
    const { info, messages } = yield* Effect.catch(threads.snapshot(threadId), fromThreadError)
    return HttpServerResponse.jsonUnsafe(threadJson(info, messages), { headers: noStore })
  })

/**
 * `DELETE /v1/threads/:threadId`: the running turn (if any) is asked to cancel, then the
 * thread and every turn's streams are deleted. 200 `{threadId, deleted: true}`.
 *
 * @internal
 */
export const deleteThread = (context: ThreadContext) =>
  Effect.gen(function*() {
    const threadId = yield* threadIdParam
    yield* allow(yield* CurrentCaller, threadId, "delete")
    const threads = yield* threadsOf(context)
    const info = yield* Effect.catch(threads.get(threadId), fromThreadError)
    if (Option.isSome(info.running)) {
      yield* Effect.catch(
        TurnControl.requestCancel(info.running.value.prefix, info.running.value.turnId),
        fromRedisError
      )
    }
    yield* Effect.catch(threads.delete(threadId), fromThreadError)
    return HttpServerResponse.jsonUnsafe({ threadId, deleted: true }, { headers: noStore })
  })

const encoder = new TextEncoder()

/**
 * A thread's events as SSE text: `: connected`, a frame per event (`id` its log entry
 * id, `event` its `type`, `data` the event's JSON), `: ping` every `heartbeatMs`; ends
 * after `thread_deleted`, after `idleTimeoutMs` without an event (the client resumes
 * with `Last-Event-ID`), with `server_closing` when `closing` completes, or with a
 * `stream_error` frame when following fails.
 *
 * @internal
 */
export const eventsSse = (
  events: Stream.Stream<ThreadLog.ThreadEventEntry, ThreadError.ThreadError | RedisError.RedisError>,
  options: { readonly heartbeatMs: number; readonly idleTimeoutMs: number; readonly closing: Effect.Effect<void> }
): Stream.Stream<string> => {
  const frames = events.pipe(
    Stream.map(({ event, id }) => Sse.encodeEvent({ id, event: event.type, data: JSON.stringify(event) })),
    Stream.timeout(Duration.millis(options.idleTimeoutMs)),
    Stream.catch((error) =>
      Stream.unwrap(Effect.as(
        Effect.logWarning(`closing a thread's events: ${error.message}`),
        Stream.make(TurnFeed.errorFrame({ code: "internal", message: error.message }))
      ))
    )
  )
  const heartbeats = Stream.fromSchedule(Schedule.spaced(Duration.millis(options.heartbeatMs))).pipe(
    Stream.as(TurnFeed.ping)
  )
  const closed = Stream.fromEffect(options.closing).pipe(Stream.as(TurnFeed.closingFrame))
  return Stream.merge(frames, heartbeats, { haltStrategy: "left" }).pipe(
    Stream.prepend([TurnFeed.opening]),
    Stream.merge(closed, { haltStrategy: "either" })
  )
}

/**
 * `GET /v1/threads/:threadId/events`: the thread's events as SSE from the resume point
 * (`Last-Event-ID` or `?after=`, a log entry id; the start without one), live until the
 * thread is deleted. Takes one of the caller's stream slots.
 *
 * @internal
 */
export const threadEvents = (context: ThreadContext) =>
  Effect.gen(function*() {
    const threadId = yield* threadIdParam
    const credentials = yield* CurrentCaller
    yield* allow(credentials, threadId, "read")
    const threads = yield* threadsOf(context)
    const after = yield* resumePoint
    yield* Effect.catch(threads.get(threadId), fromThreadError)
    yield* context.slot(credentials)
    const body = eventsSse(threads.events(threadId, after), {
      heartbeatMs: context.options.heartbeatMs,
      idleTimeoutMs: context.options.idleTimeoutMs,
      closing: context.closing
    }).pipe(Stream.map((text) => encoder.encode(text)), dropStalled(context.options.writeTimeoutMs))
    return HttpServerResponse.stream(body, {
      contentType: "text/event-stream; charset=utf-8",
      headers: TurnFeed.streamHeaders
    })
  })

/**
 * Checks that a thread token may reach a turn: the turn is one of its thread's
 * (403 otherwise). Bearer tokens and page tokens pass.
 *
 * @internal
 */
export const allowTurn = (context: ThreadContext, credentials: Credentials, turnId: string, access: ThreadAccess) =>
  Effect.gen(function*() {
    const thread = credentials.thread
    if (thread === undefined) return
    yield* allow(credentials, thread.threadId, access)
    const threads = yield* threadsOf(context)
    yield* threads.turn(thread.threadId, turnId).pipe(
      Effect.catchTags({
        ThreadTurnNotFound: () =>
          Effect.fail(new ApiError({ code: "forbidden", message: "this thread token is for another thread's turns" })),
        ThreadNotFound: () =>
          Effect.fail(new ApiError({ code: "forbidden", message: "this thread token is for another thread's turns" }))
      }),
      Effect.catch((error) => error instanceof ApiError ? Effect.fail(error) : fromThreadError(error))
    )
  })

/**
 * The handlers of the routes, and the set of the endings they wait for (closed with the
 * scope: the endings in flight are waited for, at most `shutdownTimeoutMs`).
 *
 * @internal
 */
export const makeThreadHandlers = (context: ThreadContext) =>
  Effect.gen(function*() {
    const endings = yield* FiberSet.make<void, never>()
    // runs before the set's own finalizer (which interrupts what is left)
    yield* Effect.addFinalizer(() =>
      FiberSet.awaitEmpty(endings).pipe(
        Effect.timeout(Duration.millis(context.options.shutdownTimeoutMs)),
        Effect.ignore
      )
    )
    const turnsWindow = yield* RateWindow.make(context.options.threadTurnsPerMinute, 60_000)
    return {
      start: startThreadTurn(context, endings, turnsWindow),
      get: getThread(context),
      events: threadEvents(context),
      delete: deleteThread(context)
    }
  })

/**
 * The caller key of a thread token's limits.
 *
 * @internal
 */
export const isThreadCaller = (caller: Caller): boolean => typeof caller === "string" && caller.startsWith("thread:")

/**
 * Conversations as first-class records on Redis (docs/threads.md). A thread holds its
 * turns as a tree (each turn has a parent; a regeneration or an edited message starts a
 * new branch), the input each turn started from, the final items it ended with, and its
 * current path, the branch last written. It runs at most one turn at a time: every
 * write to the thread's log is appended only after the entry its writer read last
 * (`RedisStreams.xaddAfter`, one atomic step on Redis), so two turns begun at once
 * cannot both start; the second fails with `TurnRunning`.
 *
 * `history` gives the provider messages of the current path, as `RoundTrip` makes
 * them (reasoning signatures, encrypted content, tool calls and results, compaction,
 * provider metadata all kept); `uiMessages` gives the same path as AI SDK `UIMessage`s;
 * `events` follows the thread's log.
 *
 * @since 0.3.0
 */
import { Turn } from "@sluice/accumulator"
import { Ids, ThreadInput, ToolCallId, type UIMessage } from "@sluice/core"
import type { Message } from "@sluice/providers/LlmRequest"
import * as RoundTrip from "@sluice/providers/RoundTrip"
import * as EntryId from "@sluice/redis/EntryId"
import type { RedisError } from "@sluice/redis/RedisError"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as RedisStreamsCluster from "@sluice/redis/RedisStreamsCluster"
import * as RedisStreamsLive from "@sluice/redis/RedisStreamsLive"
import * as RedisStreamsMemory from "@sluice/redis/RedisStreamsMemory"
import type { StreamEntry } from "@sluice/redis/StreamEntry"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Filter from "effect/Filter"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import {
  InvalidThreadInput,
  InvalidThreadsOptions,
  ThreadContended,
  ThreadDeleted,
  type ThreadError,
  ThreadExists,
  ThreadNotFound,
  ThreadTurnNotFound,
  TurnNotRunning,
  TurnRunning
} from "./ThreadError.js"
import * as ThreadKeys from "./ThreadKeys.js"
import * as ThreadLog from "./ThreadLog.js"
import * as TurnEnding from "./TurnEnding.js"
import * as TurnEntry from "./TurnEntry.js"
import * as TurnKeys from "./TurnKeys.js"
import * as TurnLease from "./TurnLease.js"

/**
 * How long a thread lives after its last write, by default: 30 days.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultRetentionMs = 30 * 24 * 60 * 60 * 1000

/**
 * The most turns a thread holds, by default: 1000.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultMaxTurns = 1000

/**
 * How long a running turn may show nothing in Redis (no Stream A entry, no lease) after
 * it started before the thread ends it `failed` (`not_started`), by default: 60 s. A
 * server that crashed between beginning a turn and starting its pipeline never writes
 * either (docs/threads.md#faults).
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultStartGraceMs = 60_000

/**
 * How long a deleted thread's id is kept from being created again, by default: 24
 * hours. Thread tokens minted for it must live no longer, or they would reach a new
 * thread of the same id (docs/threads.md#deleting-a-thread).
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultTombstoneMs = 24 * 60 * 60 * 1000

/**
 * How long a deleted thread's log (ending in `thread_deleted`) stays readable, so that
 * a follower between two reads still reads the deletion: 60 s.
 *
 * @since 0.3.0
 * @category constants
 */
export const deletedLogGraceMs = 60_000

/**
 * The options: `prefix` of every key (default `TurnKeys.defaultPrefix`; a turn's
 * streams are under it too), `retentionMs` a thread lives after its last write,
 * `maxTurns` a thread may hold, `startGraceMs` (`defaultStartGraceMs`) and
 * `tombstoneMs` (`defaultTombstoneMs`).
 *
 * @since 0.3.0
 * @category schemas
 */
export const ThreadsOptions = Schema.Struct({
  prefix: Schema.optionalKey(Schema.NonEmptyString),
  retentionMs: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0))),
  maxTurns: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0))),
  startGraceMs: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0))),
  tombstoneMs: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0)))
}).annotate({ identifier: "ThreadsOptions" })

/**
 * @since 0.3.0
 * @category models
 */
export type ThreadsOptions = typeof ThreadsOptions.Type

/**
 * Where the next turn goes: `parent` is the turn it follows (`null`: a new branch from
 * the thread's start; absent: the head of the current path); `replaces` names a turn
 * this one replaces (an edited message: the new turn follows that turn's parent);
 * `create` creates the thread when it does not exist, once the turn's input is found
 * good (a refused first turn leaves no thread behind).
 *
 * @since 0.3.0
 * @category models
 */
export interface BeginOptions {
  readonly parent?: string | null | undefined
  readonly replaces?: string | undefined
  readonly create?: boolean | undefined
}

/**
 * A turn begun: the ids the pipeline runs it under (its streams are
 * `TurnKeys.eventsKey(prefix, turnId)` and `upsertsKey`), its parent, and the
 * provider messages of its request (the path's history, then its own input).
 *
 * @since 0.3.0
 * @category models
 */
export interface BegunTurn {
  readonly threadId: string
  readonly turnId: string
  readonly parentId: string | null
  readonly prefix: string
  readonly messages: ReadonlyArray<Message>
  /** The ids of the turns the new branch left off the current path. */
  readonly superseded: ReadonlyArray<string>
}

/**
 * A thread as `get` gives it.
 *
 * @since 0.3.0
 * @category models
 */
export interface ThreadInfo {
  readonly threadId: string
  readonly createdAt: number
  readonly updatedAt: number
  /** The last turn of the current path. */
  readonly head: string | null
  /** The running turn and where its streams are. */
  readonly running: Option.Option<{ readonly turnId: string; readonly prefix: string }>
  readonly turnCount: number
  /** The log's last entry id: `events` after it gives what happens next. */
  readonly lastEventId: string
}

/**
 * A turn as `turns` lists it: whether it is on the current path, and its children
 * (the branches that start after it).
 *
 * @since 0.3.0
 * @category models
 */
export interface TurnInfo extends ThreadLog.ThreadTurn {
  readonly onPath: boolean
  readonly children: ReadonlyArray<string>
}

/**
 * The operations of threads.
 *
 * @since 0.3.0
 * @category models
 */
export interface ThreadsService {
  readonly prefix: string
  /**
   * Creates a thread (a new id when none is given); `ThreadDeleted` for the id of a
   * thread deleted less than `tombstoneMs` ago.
   */
  readonly create: (
    threadId?: string
  ) => Effect.Effect<ThreadInfo, ThreadExists | ThreadDeleted | InvalidThreadInput | RedisError>
  /**
   * The thread. A running turn whose streams ended (its producer died and the turn was
   * ended `producer_lost`, or its end could not be recorded) is ended in the thread first.
   */
  readonly get: (
    threadId: string
  ) => Effect.Effect<ThreadInfo, ThreadNotFound | InvalidThreadInput | ThreadContended | RedisError>
  /**
   * Begins a turn: reserves the thread's running slot, records the input (its tool
   * results checked against the parent turn's calls) and gives what the pipeline runs.
   * A running turn whose streams ended is ended in the thread first, as `get` does.
   */
  readonly beginTurn: (
    threadId: string,
    input: ThreadInput.TurnInput,
    options?: BeginOptions
  ) => Effect.Effect<BegunTurn, ThreadError | RedisError>
  /** Runs a turn again (default: the head) from its own input, as a new branch. */
  readonly regenerate: (
    threadId: string,
    turnId?: string
  ) => Effect.Effect<BegunTurn, ThreadError | RedisError>
  /** Ends the running turn with its outcome and final items. */
  readonly endTurn: (
    threadId: string,
    turnId: string,
    end: ThreadLog.TurnEnd
  ) => Effect.Effect<void, ThreadError | RedisError>
  /** The provider messages of the ended turns of the current path. */
  readonly history: (threadId: string) => Effect.Effect<ReadonlyArray<Message>, ThreadError | RedisError>
  /** The thread as `get` gives it and its current path as `uiMessages` does, from one read. */
  readonly snapshot: (
    threadId: string
  ) => Effect.Effect<
    { readonly info: ThreadInfo; readonly messages: ReadonlyArray<UIMessage.UIMessage> },
    ThreadNotFound | InvalidThreadInput | ThreadContended | RedisError
  >
  /** The current path as `UIMessage`s (a running turn's user message included). */
  readonly uiMessages: (
    threadId: string
  ) => Effect.Effect<ReadonlyArray<UIMessage.UIMessage>, ThreadNotFound | InvalidThreadInput | RedisError>
  /** Every turn of every branch, in the order they started. */
  readonly turns: (
    threadId: string
  ) => Effect.Effect<ReadonlyArray<TurnInfo>, ThreadNotFound | InvalidThreadInput | RedisError>
  /** One turn, on the current path or not. */
  readonly turn: (
    threadId: string,
    turnId: string
  ) => Effect.Effect<TurnInfo, ThreadNotFound | ThreadTurnNotFound | InvalidThreadInput | RedisError>
  /**
   * Deletes the thread: one write after the entry read last ends its running turn (if
   * any) `cancelled` (`thread_deleted`) and appends `thread_deleted`; the log stays
   * `deletedLogGraceMs` for its followers, the ended turns' streams go at once, the
   * running turn's after the same grace, and the id is not created again for
   * `tombstoneMs`.
   */
  readonly delete: (
    threadId: string
  ) => Effect.Effect<void, ThreadNotFound | InvalidThreadInput | ThreadContended | RedisError>
  /**
   * The thread's events after `after` (default: from its start), following the log
   * until the thread is deleted. Holds a connection while it runs.
   */
  readonly events: (
    threadId: string,
    after?: string
  ) => Stream.Stream<ThreadLog.ThreadEventEntry, ThreadNotFound | InvalidThreadInput | RedisError>
}

/**
 * The threads service.
 *
 * @since 0.3.0
 * @category tags
 */
export class Threads extends Context.Service<Threads, ThreadsService>()("@sluice/turns/Threads") {}

/**
 * The longest thread id: 128 characters.
 *
 * @since 0.3.0
 * @category constants
 */
export const maxThreadIdLength: number = ThreadInput.maxThreadIdLength

const checkId = (threadId: string): Effect.Effect<string, InvalidThreadInput> =>
  ThreadInput.isThreadId(threadId)
    ? Effect.succeed(threadId)
    : Effect.fail(new InvalidThreadInput({ threadId, field: "threadId", reason: ThreadInput.threadIdRule }))

const attempts = 8

// A new turn's input: as the caller gave it, or as a turn run again kept it.
type NewInput =
  | { readonly _tag: "fresh"; readonly input: ThreadInput.TurnInput }
  | { readonly _tag: "stored"; readonly input: ThreadLog.StoredInput }

/** The next explicit entry id after `lastId` (an id Redis gave), at `now` or later. */
const nextId = (lastId: string, now: number): string => {
  const last = Option.getOrElse(EntryId.parse(lastId), () => EntryId.zero)
  return BigInt(now) > last.ms ? `${now}-0` : `${last.ms}-${last.seq + 1n}`
}

const createdEntry = (threadId: string, at: number) => ({
  id: "0-1",
  fields: ThreadLog.fields({ type: "thread_created", threadId, at })
})

const decodeOptions = Schema.decodeUnknownEffect(ThreadsOptions)

// The end of a running turn that never reached Redis within `startGraceMs`.
const notStarted: ThreadLog.TurnEnd = {
  status: "failed",
  items: [],
  error: { code: "not_started", message: "the turn showed nothing in Redis within its start grace (its server died)" }
}

// The end of the turn running when its thread was deleted.
const deletedWhileRunning: ThreadLog.TurnEnd = {
  status: "cancelled",
  items: [],
  error: { code: "thread_deleted", message: "the thread was deleted while the turn ran" }
}

/**
 * Builds the service on the `RedisStreams` in context. Fails with
 * `InvalidThreadsOptions` when the options are not valid.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (
  options: ThreadsOptions = {}
): Effect.Effect<ThreadsService, InvalidThreadsOptions, RedisStreams> =>
  Effect.gen(function*() {
    const resolved = yield* Effect.mapError(
      decodeOptions(options, { onExcessProperty: "error" }),
      (error) => new InvalidThreadsOptions({ detail: error.message })
    )
    const redis = yield* RedisStreams
    const prefix = resolved.prefix ?? TurnKeys.defaultPrefix
    const retentionMs = resolved.retentionMs ?? defaultRetentionMs
    const maxTurns = resolved.maxTurns ?? defaultMaxTurns
    const startGraceMs = resolved.startGraceMs ?? defaultStartGraceMs
    const tombstoneMs = resolved.tombstoneMs ?? defaultTombstoneMs
    const key = (threadId: string) => ThreadKeys.logKey(prefix, threadId)
    const tombstone = (threadId: string) => ThreadKeys.tombstoneKey(prefix, threadId)

    const load = Effect.fn("Threads.load")(function*(threadId: string) {
      yield* checkId(threadId)
      const state = ThreadLog.fold(threadId, yield* redis.xrange(key(threadId), "-", "+"))
      if (Option.isNone(state) || state.value.deleted) return yield* new ThreadNotFound({ threadId })
      return state.value
    })

    const info = (state: ThreadLog.ThreadState): ThreadInfo => ({
      threadId: state.threadId,
      createdAt: state.createdAt,
      updatedAt: state.updatedAt,
      head: state.head,
      running: Option.flatMap(
        Option.fromNullishOr(state.running),
        (turnId) =>
          Option.map(Option.fromNullishOr(state.turns.get(turnId)), (turn) => ({ turnId, prefix: turn.prefix }))
      ),
      turnCount: state.turns.size,
      lastEventId: state.lastId
    })

    // Appends the events after the log's last entry as `state` read it; false when
    // another write came in between (nothing is appended).
    const appendAfter = (
      state: ThreadLog.ThreadState,
      events: ReadonlyArray<ThreadLog.ThreadEvent>,
      now: number
    ): Effect.Effect<boolean, RedisError> =>
      Effect.gen(function*() {
        let id = state.lastId
        const entries = events.map((event) => {
          id = nextId(id, now)
          return { id, fields: ThreadLog.fields(event) }
        })
        const added = yield* redis.xaddAfter(key(state.threadId), state.lastId, entries)
        if (added) yield* redis.pexpire(key(state.threadId), retentionMs)
        return added
      })

    // Reads the log, decides what to append, and appends it only after the entry read
    // last: a write between the read and the append makes the append fail, and the
    // whole step runs again on the log as it is now.
    const writeAfter = <A, E>(
      threadId: string,
      decide: (
        state: ThreadLog.ThreadState,
        now: number
      ) => Effect.Effect<readonly [ReadonlyArray<ThreadLog.ThreadEvent>, A], E>
    ): Effect.Effect<A, E | ThreadNotFound | InvalidThreadInput | ThreadContended | RedisError> =>
      Effect.gen(function*() {
        for (let attempt = 1; attempt <= attempts; attempt++) {
          const state = yield* load(threadId)
          const now = yield* Clock.currentTimeMillis
          const [events, result] = yield* decide(state, now)
          if (yield* appendAfter(state, events, now)) return result
        }
        return yield* new ThreadContended({ threadId, attempts })
      })

    // The turn's end as its streams hold it, when they ended: Stream A's last entry is
    // there (its producer ended it, or `TurnEnding` did), or its lease lapsed and the
    // ending is written here (as the lease sweeper would). A turn with neither an entry
    // nor a lease `startGraceMs` after it started never reached its pipeline: `failed`
    // (`not_started`). `None` while it runs, or while it is not in Redis yet.
    const streamEnd = (turn: ThreadLog.ThreadTurn): Effect.Effect<Option.Option<ThreadLog.TurnEnd>, RedisError> =>
      Effect.gen(function*() {
        const eventsKey = TurnKeys.eventsKey(turn.prefix, turn.turnId)
        const last = yield* redis.xlast(eventsKey)
        const ended = Option.isSome(last) && TurnEntry.isFinal(last.value)
        if (!ended) {
          const lease = yield* TurnLease.state(turn.prefix, turn.turnId)
          if (lease === "none" && Option.isNone(last)) {
            const now = yield* Clock.currentTimeMillis
            return now - turn.startedAt < startGraceMs ? Option.none() : Option.some(notStarted)
          }
          if (lease !== "lapsed") return Option.none()
          yield* TurnEnding.end(turn.prefix, turn.turnId, TurnEnding.producerLost)
        }
        let folded = Turn.empty
        for (const entry of yield* redis.xrange(eventsKey, "-", "+")) {
          const event = yield* Effect.option(TurnEntry.toStreamEvent(entry))
          // an entry the fold refuses is left out; the rest still tell the turn
          if (Option.isSome(event)) folded = Result.getOrElse(Turn.step(folded, event.value), () => folded)
        }
        return Option.some(ThreadLog.endOf(folded, "unknown"))
      }).pipe(Effect.provideService(RedisStreams, redis))

    // The thread with its running turn ended in it when the turn's streams ended
    // (docs/threads.md#faults): a producer that died, or an end that could not be
    // recorded, never keeps the running slot. Appended after the entry read last, as
    // every write is; a turn that still runs is left alone.
    const settle = Effect.fn("Threads.settle")(function*(threadId: string) {
      for (let attempt = 1; attempt <= attempts; attempt++) {
        const state = yield* load(threadId)
        const turn = state.running === null ? undefined : state.turns.get(state.running)
        if (turn === undefined) return state
        const end = yield* streamEnd(turn)
        if (Option.isNone(end)) return state
        const now = yield* Clock.currentTimeMillis
        yield* appendAfter(state, [{ type: "turn_ended", turnId: turn.turnId, end: end.value, at: now }], now)
      }
      return yield* new ThreadContended({ threadId, attempts })
    })

    // A thread as it is when just created.
    const createdState = (threadId: string, at: number): ThreadLog.ThreadState =>
      Option.getOrThrow(ThreadLog.fold(threadId, [createdEntry(threadId, at)]))

    const create = Effect.fn("Threads.create")(function*(requested?: string) {
      const threadId = yield* checkId(requested ?? Ids.generateEventId())
      if ((yield* redis.xlen(tombstone(threadId))) > 0) return yield* new ThreadDeleted({ threadId })
      const at = yield* Clock.currentTimeMillis
      // `0-1` is the first id of any stream: on a thread that exists the append fails.
      const added = yield* Effect.result(redis.xadd(key(threadId), createdEntry(threadId, at)))
      if (Result.isFailure(added)) {
        return yield* added.failure.reason === "IdTooSmall" ? new ThreadExists({ threadId }) : added.failure
      }
      yield* redis.pexpire(key(threadId), retentionMs)
      return info(createdState(threadId, at))
    })

    const invalid = (threadId: string, field: string, reason: string) =>
      new InvalidThreadInput({ threadId, field, reason })

    // The input as the thread keeps it: the message a UIMessage, each tool result
    // named after the parent's call it answers (by the call's item id or call id).
    const storedInput = (
      threadId: string,
      input: ThreadInput.TurnInput,
      parent: ThreadLog.ThreadTurn | undefined,
      turnId: string
    ): Effect.Effect<ThreadLog.StoredInput, InvalidThreadInput> =>
      Effect.gen(function*() {
        const checked = ThreadInput.checkInput(input)
        if (Result.isFailure(checked)) return yield* invalid(threadId, checked.failure.field, checked.failure.reason)
        const results = input.toolResults ?? []
        const approvals = input.approvals ?? []
        const ended = parent === undefined ? Option.none() : parent.end
        if ((results.length > 0 || approvals.length > 0) && Option.isNone(ended)) {
          return yield* invalid(threadId, "toolResults", "tool results and approvals answer an ended parent turn")
        }
        const finished = Option.map(ended, ThreadLog.finishedTurn)
        const callIds = new Map<string, string>()
        for (const item of Option.match(finished, { onNone: () => [], onSome: (turn) => turn.items })) {
          if (item.type === "function_call") {
            callIds.set(item.id, item.call_id)
            callIds.set(ToolCallId.fromHistory(item.call_id), item.call_id)
          }
        }
        const outputs = results.map((result) => ({
          callId: callIds.get(result.toolCallId) ?? callIds.get(ToolCallId.fromHistory(result.toolCallId)) ??
            result.toolCallId,
          output: ThreadInput.outputText(result.output),
          ...(result.isError === true ? { isError: true } : {})
        }))
        const toolResults = Option.match(finished, {
          onNone: () => Result.succeed([]),
          onSome: (turn) => RoundTrip.toolResults(turn, outputs)
        })
        if (Result.isFailure(toolResults)) {
          return yield* invalid(
            threadId,
            "toolResults",
            `the parent turn made no tool call ${toolResults.failure.callId}`
          )
        }
        return {
          ...(input.message === undefined ? {} : { message: ThreadInput.toUIMessage(input.message, `${turnId}-user`) }),
          toolResults: toolResults.success,
          approvals,
          ...(results.length === 0 ? {} : { toolCallIds: results.map((result) => result.toolCallId) })
        }
      })

    // What beginning a turn appends to the thread, and the turn begun.
    const decideBegin = (
      threadId: string,
      choose: (state: ThreadLog.ThreadState) => Effect.Effect<
        { readonly parentId: string | null; readonly input: NewInput },
        ThreadTurnNotFound | InvalidThreadInput
      >
    ) =>
    (state: ThreadLog.ThreadState, now: number) =>
      Effect.gen(function*() {
        if (state.running !== null) return yield* new TurnRunning({ threadId, turnId: state.running })
        if (state.turns.size >= maxTurns) {
          return yield* invalid(threadId, "turns", `the thread holds its most turns (${maxTurns})`)
        }
        const { input, parentId } = yield* choose(state)
        const parent = parentId === null ? undefined : state.turns.get(parentId)
        const turnId = Ids.generateEventId()
        const stored = input._tag === "stored"
          ? input.input
          : yield* storedInput(threadId, input.input, parent, turnId)
        const path = ThreadLog.pathTo(state, parentId)
        const request = ThreadLog.messages(path, stored)
        if (Result.isFailure(request)) {
          return yield* invalid(threadId, "approvals", request.failure.message)
        }
        const onPath = new Set(path.map((turn) => turn.turnId))
        const superseded = ThreadLog.pathTo(state, state.head).map((turn) => turn.turnId).filter((id) =>
          !onPath.has(id)
        )
        const started: ThreadLog.ThreadEvent = {
          type: "turn_started",
          turnId,
          parentId,
          prefix,
          input: stored,
          at: now
        }
        const events: Array<ThreadLog.ThreadEvent> = superseded.length === 0
          ? [started]
          : [started, { type: "turns_superseded", turnIds: superseded, by: turnId, at: now }]
        const begun: BegunTurn = { threadId, turnId, parentId, prefix, messages: request.success, superseded }
        return [events, begun] as const
      })

    // The thread created for its first turn, when it does not exist: only once the turn
    // is found good on a thread just created (`decide` run on it, nothing written), so a
    // refused first turn leaves no thread behind.
    const createFor = <E>(
      threadId: string,
      decide: (state: ThreadLog.ThreadState, now: number) => Effect.Effect<unknown, E>
    ) =>
      Effect.gen(function*() {
        if (Option.isSome(yield* redis.xlast(key(yield* checkId(threadId))))) return
        const now = yield* Clock.currentTimeMillis
        yield* decide(createdState(threadId, now), now)
        yield* Effect.catchTag(create(threadId), "ThreadExists", () => Effect.void)
      })

    const begin = (
      threadId: string,
      choose: Parameters<typeof decideBegin>[1],
      create = false
    ) => {
      const decide = decideBegin(threadId, choose)
      return Effect.gen(function*() {
        if (create) yield* createFor(threadId, decide)
        yield* settle(threadId)
        return yield* writeAfter(threadId, decide)
      })
    }

    const turnOf = (state: ThreadLog.ThreadState, turnId: string) =>
      Option.match(Option.fromNullishOr(state.turns.get(turnId)), {
        onNone: () => Effect.fail(new ThreadTurnNotFound({ threadId: state.threadId, turnId })),
        onSome: Effect.succeed
      })

    const beginTurn = (threadId: string, input: ThreadInput.TurnInput, options: BeginOptions = {}) =>
      begin(threadId, (state) =>
        Effect.gen(function*() {
          const fresh: NewInput = { _tag: "fresh", input }
          if (options.replaces !== undefined) {
            const replaced = yield* turnOf(state, options.replaces)
            return { parentId: replaced.parentId, input: fresh }
          }
          if (options.parent === undefined || options.parent === null) {
            return { parentId: options.parent === null ? null : state.head, input: fresh }
          }
          return { parentId: (yield* turnOf(state, options.parent)).turnId, input: fresh }
        }), options.create === true)

    const regenerate = (threadId: string, turnId?: string) =>
      begin(threadId, (state) =>
        Effect.gen(function*() {
          const target = turnId ?? state.head
          if (target === null) return yield* invalid(threadId, "regenerate", "the thread has no turn to run again")
          const again = yield* turnOf(state, target)
          return { parentId: again.parentId, input: { _tag: "stored", input: again.input } satisfies NewInput }
        }))

    const endTurn = (threadId: string, turnId: string, end: ThreadLog.TurnEnd) =>
      writeAfter(threadId, (state, now) =>
        state.running === turnId
          ? Effect.succeed([[{ type: "turn_ended", turnId, end, at: now }], undefined] as const)
          : Effect.fail(
            state.turns.has(turnId)
              ? new TurnNotRunning({ threadId, turnId })
              : new ThreadTurnNotFound({ threadId, turnId })
          ))

    const history = Effect.fn("Threads.history")(function*(threadId: string) {
      const state = yield* load(threadId)
      const messages = ThreadLog.messages(ThreadLog.pathTo(state, state.head))
      return Result.isFailure(messages)
        ? yield* invalid(threadId, "approvals", messages.failure.message)
        : messages.success
    })

    const turnInfos = (state: ThreadLog.ThreadState): ReadonlyArray<TurnInfo> => {
      const onPath = new Set(ThreadLog.pathTo(state, state.head).map((turn) => turn.turnId))
      const children = new Map<string, Array<string>>()
      for (const turn of state.turns.values()) {
        if (turn.parentId !== null) children.set(turn.parentId, [...(children.get(turn.parentId) ?? []), turn.turnId])
      }
      return Array.from(
        state.turns.values(),
        (turn) => ({ ...turn, onPath: onPath.has(turn.turnId), children: children.get(turn.turnId) ?? [] })
      )
    }

    const service: ThreadsService = {
      prefix,
      create,
      get: (threadId) => Effect.map(settle(threadId), info),
      snapshot: (threadId) =>
        Effect.map(settle(threadId), (state) => ({
          info: info(state),
          messages: ThreadLog.uiMessages(ThreadLog.pathTo(state, state.head))
        })),
      beginTurn,
      regenerate,
      endTurn,
      history,
      uiMessages: (threadId) =>
        Effect.map(load(threadId), (state) => ThreadLog.uiMessages(ThreadLog.pathTo(state, state.head))),
      turns: (threadId) => Effect.map(load(threadId), turnInfos),
      turn: (threadId, turnId) =>
        Effect.flatMap(
          load(threadId),
          (state) =>
            Effect.flatMap(
              turnOf(state, turnId),
              () => Effect.succeed(turnInfos(state).find((turn) => turn.turnId === turnId)!)
            )
        ),
      delete: Effect.fn("Threads.delete")(function*(threadId: string) {
        const state = yield* writeAfter(threadId, (state, now) => {
          const ending: ReadonlyArray<ThreadLog.ThreadEvent> = state.running === null ? [] : [{
            type: "turn_ended",
            turnId: state.running,
            end: deletedWhileRunning,
            at: now
          }]
          return Effect.succeed([[...ending, { type: "thread_deleted", at: now }], state] as const)
        })
        const at = yield* Clock.currentTimeMillis
        yield* redis.xadd(tombstone(threadId), { id: "*", fields: ThreadLog.fields({ type: "thread_deleted", at }) })
        yield* redis.pexpire(tombstone(threadId), tombstoneMs)
        // followers read the deletion for a while, then the log is gone
        yield* redis.pexpire(key(threadId), deletedLogGraceMs)
        for (const turn of state.turns.values()) {
          // a turn still running may write a little more: its streams go after the grace
          const ttl = turn.turnId === state.running ? deletedLogGraceMs : 0
          for (
            const turnKey of [
              TurnKeys.eventsKey(turn.prefix, turn.turnId),
              TurnKeys.upsertsKey(turn.prefix, turn.turnId),
              TurnKeys.leaseKey(turn.prefix, turn.turnId),
              TurnKeys.leasedKey(turn.prefix, turn.turnId)
            ]
          ) yield* redis.pexpire(turnKey, ttl)
        }
      }),
      events: (threadId, after) =>
        Stream.unwrap(Effect.as(
          load(threadId),
          Stream.filterMap(
            redis.tail(key(threadId), { after: after ?? "0-0", until: ThreadLog.isDeletion }),
            Filter.fromPredicateOption((entry: StreamEntry) =>
              Option.map(ThreadLog.toEvent(entry), (event): ThreadLog.ThreadEventEntry => ({ id: entry.id, event }))
            )
          )
        ))
    }
    return service
  })

/**
 * The service on the `RedisStreams` layer it is given.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (options: ThreadsOptions = {}): Layer.Layer<Threads, InvalidThreadsOptions, RedisStreams> =>
  Layer.effect(Threads, make(options))

/**
 * The service on one Redis (`RedisStreamsLive`).
 *
 * @since 0.3.0
 * @category layers
 */
export const layerLive = (
  redis: RedisStreamsLive.LiveOptions,
  options: ThreadsOptions = {}
): Layer.Layer<Threads, InvalidThreadsOptions | RedisError> =>
  Layer.provide(layer(options), RedisStreamsLive.layer(redis))

/**
 * The service on a Redis Cluster (`RedisStreamsCluster`): a thread's keys share its
 * slot (the thread id is their hash tag).
 *
 * @since 0.3.0
 * @category layers
 */
export const layerCluster = (
  redis: RedisStreamsCluster.ClusterOptions,
  options: ThreadsOptions = {}
): Layer.Layer<Threads, InvalidThreadsOptions | RedisError> =>
  Layer.provide(layer(options), RedisStreamsCluster.layer(redis))

/**
 * The service on the in-process store (`RedisStreamsMemory`, what `pnpm demo` runs on),
 * a store of its own. To share one store with the pipeline and the server, give `layer`
 * the `RedisStreams` layer they use.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerMemory = (options: ThreadsOptions = {}): Layer.Layer<Threads, InvalidThreadsOptions> =>
  Layer.provide(layer(options), RedisStreamsMemory.layer)

/**
 * The pipeline of a turn, Sluice's main job as one library call: a provider's events
 * (normalized from its bytes with the turn's ids) -> the turn folded
 * (`Accumulator.foldEvents`) -> Stream A -> upserts -> Stream B, returning the final turn.
 *
 * Every turn ends, in both streams, with a terminal entry:
 *
 * - the provider ended it: its own terminal events (`complete`, `error`, a body cut
 *   short ends it with `stream_truncated`);
 * - the input ended without ending the turn: `aborted`;
 * - the input failed (bytes that are not the wire format, events out of order): the
 *   turn ends `error` with the failure's message, and the failure is passed on;
 * - `stop` completed, or the running fiber was interrupted (SIGINT, SIGTERM): the
 *   input stops, open items are closed (text kept, a partial tool call cancelled), and
 *   the turn ends `aborted`;
 * - `cancel(turnId)` here, or a cancel request from any process through Redis: the
 *   same, ending `cancelled`;
 * - the producer's lease was found lapsed (the process was paused past it): the turn
 *   ends with `producer_lost`, unless someone else ended it first;
 * - someone else ended it (a server that found the lease lapsed): its ending takes
 *   sealed ids, so Redis refuses this producer's later writes (`PublishError`
 *   `Ended`); the producer stops at once, writes nothing more, completes the other
 *   writer's ending (`TurnEnding.end`) and the run ends `producer_lost`
 *   (docs/redis.md#leases-and-endings).
 *
 * While a turn runs, the pipeline holds its liveness lease in Redis (see
 * `TurnLease`), so that a reader can end the turn of a producer that died.
 *
 * Each turn runs in a span `sluice.turn` (a child of the context's `traceparent` when
 * it has one), with a span per stage: `sluice.normalize` (the source),
 * `sluice.publish.events` (Stream A), `sluice.upserts` and `sluice.publish.upserts`
 * (Stream B). Every event then carries the context's trace context, and the turn
 * updates `TurnMetrics` (started, active, ended by status, events by type).
 *
 * @since 0.1.0
 */
import { Turn } from "@sluice/accumulator"
import { type StreamBMessage, StreamEvent, TimerWheel } from "@sluice/core"
import { type RedisError, RedisStreams, type StreamEntry } from "@sluice/redis"
import { LeaseKeeper, TurnControl, TurnEntry, TurnKeys, TurnLease, TurnMetrics, TurnPublisher } from "@sluice/turns"
import { UpsertOptions } from "@sluice/upserts"
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Admission from "./internal/admission.js"
import * as Lifecycle from "./internal/lifecycle.js"
import * as StopSignal from "./internal/stopSignal.js"
import { runTurn, type TurnEnv } from "./internal/turn.js"
import * as PipelineErrors from "./PipelineError.js"
import type { StopReason } from "./StopReason.js"
import * as TurnAdmission from "./TurnAdmission.js"
import type { TurnContext } from "./TurnContext.js"
import type { TurnSource } from "./TurnSource.js"

/**
 * The pipeline's options, with their defaults:
 *
 * - `publisher`: the `TurnPublisher`'s (key prefix `codex`, retention, retries).
 * - `upserts`: the upsert stage's (gradient, batch timeout).
 * - `lease`: the liveness lease (`leaseMs` 6000, renewed every 2000 ms); `false` for
 *   none.
 * - `followCancels` (true): follow the control stream for cancel requests.
 * - `drainMs` (10000): how long an interrupted turn may take to write its ending.
 * - `graceMs` (10000): when the pipeline shuts down (`shutdown`, or its scope closing),
 *   how long its running turns (`run` and `start`) may run on to their own end before
 *   they are stopped (and end `aborted`, `drainMs` given to write it). An application
 *   with one shutdown budget keeps `graceMs + drainMs` inside it (`sluice serve` gives
 *   half of `--shutdown-timeout-ms` to the grace and a quarter to the drain).
 * - `maxTurns` (none): how many turns may run at once (`run` and `start` together);
 *   one more is refused with `TurnAdmission.AtCapacity` before anything of it runs.
 * - `maxLagMs` (none): while the process runs later than this (its timers fire late:
 *   it has more to do than it can), a new turn is refused the same way. See
 *   `TurnAdmission`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly publisher?: TurnPublisher.Options | undefined
  readonly upserts?: UpsertOptions.UpsertOptionsInput | undefined
  readonly lease?: TurnLease.LeaseOptions | false | undefined
  readonly followCancels?: boolean | undefined
  readonly drainMs?: number | undefined
  readonly graceMs?: number | undefined
  readonly maxTurns?: number | undefined
  readonly maxLagMs?: number | undefined
}

/**
 * What one turn's run may do besides publishing.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions<R = never> {
  /** Called with each Stream B message once Redis confirmed it. */
  readonly onMessage?: ((message: StreamBMessage.StreamBMessage) => Effect.Effect<void, never, R>) | undefined
  /** Called with each chunk of StreamEvents once Redis confirmed it in Stream A, in order. */
  readonly onEvents?:
    | ((events: Arr.NonEmptyReadonlyArray<StreamEvent.StreamEvent>) => Effect.Effect<void, never, R>)
    | undefined
  /** When this completes, the turn stops and ends with the reason it gives. */
  readonly stop?: Effect.Effect<StopReason> | undefined
  /**
   * The turn's opening, written before its source is read (see `Opening`): the turn is
   * in Redis before anything of its source runs, and `start` returns only once it is.
   */
  readonly opening?: Opening | undefined
}

/**
 * A turn's opening: its `response_start` (`model_id`, `provider_id`, with the
 * context's ids), written to Stream A (and Stream B's `turn_started`, and the turn's
 * place in the index of turns) before its source is read, so that the turn exists in
 * Redis from the moment its id is known (it can be followed, listed and cancelled
 * before a provider has answered anything). A `response_start` of the source itself
 * is then not written again (the source's own model and provider ids are not kept).
 *
 * @since 0.3.0
 * @category models
 */
export interface Opening {
  readonly modelId: string
  readonly providerId: string
  readonly agentId?: string | undefined
}

/**
 * A turn's run: the final turn, how many Stream B messages were published, and why it
 * stopped early, if it did.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnResult {
  readonly context: TurnContext
  readonly turn: Turn.Turn
  readonly messages: number
  readonly stopped: Option.Option<StopReason>
}

/**
 * A turn started in the pipeline's scope (`start`): its context; its StreamEvents as
 * Stream A confirms them, from the first, for one reader (a reader that goes away
 * leaves the turn running); its Stream B entries as Redis holds them; its result once
 * it ends; and its cancel.
 *
 * @since 0.3.0
 * @category models
 */
export interface RunningTurn<E> {
  readonly context: TurnContext
  readonly events: Stream.Stream<StreamEvent.StreamEvent>
  /**
   * Stream B followed in Redis from the turn's first entry to its last
   * (`turn_completed`), each entry with its id (`TurnFeed.response` in
   * `@sluice/server` makes it the SSE of upserts that `/v1/turns/:turnId/upserts`
   * sends, resumable there). Each read follows Redis anew: it may be read by several
   * readers, or again, and holds nothing in process while nobody reads it.
   */
  readonly upserts: Stream.Stream<StreamEntry.StreamEntry, RedisError.RedisError>
  readonly result: Effect.Effect<TurnResult, E | PipelineError | RedisError.RedisError>
  readonly cancel: Effect.Effect<void>
}

/**
 * The failures a run passes on, after ending the turn, besides the source's own and
 * Redis's. Defined, with the classification of every failure a turn can end with, in
 * `PipelineError`.
 *
 * @since 0.1.0
 * @category models
 */
export type PipelineError = PipelineErrors.PipelineError

/**
 * The pipeline.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnPipelineService {
  /** The key prefix turns are published under (unless their context names another). */
  readonly prefix: string
  /**
   * Runs one turn to its end; see the module's documentation. Refused with
   * `AtCapacity` past `maxTurns` or `maxLagMs`.
   */
  readonly run: <E, R, R2 = never>(
    context: TurnContext,
    source: TurnSource<E, R>,
    options?: RunOptions<R2>
  ) => Effect.Effect<TurnResult, E | PipelineError | RedisError.RedisError | TurnAdmission.AtCapacity, R | R2>
  /**
   * Starts one turn in the pipeline's scope and returns at once: the turn runs on
   * whoever reads its events or not (when the pipeline shuts down, it has `graceMs` to
   * end by itself, then is ended `aborted`), so an HTTP handler can answer with its
   * events while the turn is persisted. Refused at once with `AtCapacity` past
   * `maxTurns` or `maxLagMs`, or while the pipeline shuts down. With an `opening`, it
   * returns once the opening is in Redis, and fails with the turn's failure when it
   * could not be written (Redis unavailable: nothing of the source was asked for);
   * interrupted while it waits, it stops the turn (`aborted`).
   */
  readonly start: <E, R, R2 = never>(
    context: TurnContext,
    source: TurnSource<E, R>,
    options?: RunOptions<R2>
  ) => Effect.Effect<
    RunningTurn<E>,
    TurnAdmission.AtCapacity | E | PipelineError | RedisError.RedisError,
    R | R2
  >
  /**
   * Cancels a turn: at once when it runs in this process, else through the control
   * stream, to whichever process runs it.
   */
  readonly cancel: (turnId: string, prefix?: string) => Effect.Effect<void, RedisError.RedisError>
  /**
   * Cancels a turn when it runs in this process (`true`), at once and without Redis;
   * `false` when no turn of that id runs here.
   */
  readonly cancelHere: (turnId: string) => Effect.Effect<boolean>
  /**
   * Shuts the pipeline down: from now on every turn asked for is refused
   * (`AtCapacity`, `shuttingDown`); the running turns (`run` and `start`) get `graceMs`
   * to end by themselves, then each is stopped (`aborted`) and given `drainMs` to write
   * its ending; a turn still running after that is interrupted. Runs once: a second
   * call waits for the first. The pipeline's scope closing runs it.
   */
  readonly shutdown: Effect.Effect<void>
  /**
   * The pipeline's load now (`TurnAdmission.Load`): the turns it runs, how late the
   * process runs (with `maxLagMs`), and the limit a turn asked for now would meet.
   */
  readonly load: Effect.Effect<TurnAdmission.Load>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class TurnPipeline
  extends Context.Service<TurnPipeline, TurnPipelineService>()("@sluice/pipeline/TurnPipeline")
{}

/**
 * What a started turn's opening wait ends with once the turn's fiber has ended: its
 * failure; an interruption (the pipeline shut down before the turn could open) as the
 * refusal it amounts to.
 */
const openedExit = <E>(
  exit: Exit.Exit<unknown, E>,
  turnId: string
): Exit.Exit<void, E | TurnAdmission.AtCapacity> =>
  Exit.isSuccess(exit)
    ? Exit.void
    : Cause.hasInterruptsOnly(exit.cause)
    ? Exit.fail(new TurnAdmission.AtCapacity({ turnId, limit: "shuttingDown", value: 0, measured: 0 }))
    : Exit.failCause(exit.cause)

/**
 * Builds the pipeline on the `RedisStreams` in context; the control stream follower
 * (when on) and the lag probe (with `maxLagMs`) run in the scope. Fails with
 * `TurnAdmission.InvalidLimit` for a limit that is not a positive integer.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}) =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const publisher = yield* TurnPublisher.make(options.publisher ?? {})
    // checked once here; each turn adds its ids
    yield* Effect.fromResult(UpsertOptions.make(options.upserts))
    const invalidLimit = Admission.check(options)
    if (invalidLimit !== undefined) return yield* invalidLimit
    const clock = yield* Clock.Clock
    const admission = Admission.make(options, clock.currentTimeMillisUnsafe())
    if (admission.probe !== undefined) yield* Effect.forkScoped(admission.probe)
    const prefix = publisher.options.prefix
    const drainMs = options.drainMs ?? 10_000
    const running: Lifecycle.Running = new Map()
    // one fiber renews the leases of every turn this pipeline runs
    const keeper = yield* LeaseKeeper.make
    // turns started (`start`) run in a scope of their own, closed with the pipeline's
    // once the pipeline has shut down (`shutdown`: every turn, `run` or `start`, has had
    // `graceMs` to end by itself, then `drainMs` to write its `aborted` ending)
    const graceMs = options.graceMs ?? 10_000
    const startedScope = yield* Scope.fork(yield* Effect.scope, "parallel")
    const started = new Map<object, Fiber.Fiber<unknown, unknown>>()
    // every running turn's own fiber (`runTurn`), `run` and `start` alike
    const turnFibers = new Set<Fiber.Fiber<unknown, unknown>>()
    const shutdown = yield* Effect.cached(Lifecycle.shutdownTurns({ admission, turnFibers, running, graceMs, drainMs }))
    yield* Effect.addFinalizer(() => shutdown)
    // and one wheel holds the timers of all of them: the upsert stage's fallbacks, the
    // idle timeouts of live sources
    const wheel = yield* TimerWheel.make

    const publisherFor = Lifecycle.publishers(publisher, options.publisher ?? {}, redis)

    const env: TurnEnv = {
      prefix,
      redis,
      keeper,
      wheel,
      lease: options.lease,
      upserts: options.upserts,
      publisherFor
    }

    if (options.followCancels !== false) yield* Lifecycle.followCancels(prefix, running, redis)

    // Before anything of it runs, a turn takes a place and is known by its id (so that
    // a cancel right after `start` finds it); once it has ended, it gives both back.
    const enter = (turnId: string) =>
      Effect.suspend(() => {
        // the probe's clock, whichever clock the caller has
        const refused = admission.admit(turnId, clock.currentTimeMillisUnsafe())
        if (refused !== undefined) {
          return Effect.andThen(Metric.update(TurnMetrics.turnsRefused(refused.limit), 1), Effect.fail(refused))
        }
        return Effect.tap(StopSignal.make<StopReason>(), (stop) => Effect.sync(() => running.set(turnId, stop)))
      })
    const leaveUnsafe = (turnId: string, stop: StopSignal.StopSignal<StopReason>) => {
      if (running.get(turnId) === stop) running.delete(turnId)
      admission.release()
    }
    const leave = (turnId: string, stop: StopSignal.StopSignal<StopReason>) =>
      Effect.sync(() => leaveUnsafe(turnId, stop))

    // a turn that entered, run to its end in a fiber of its own (`restore`: the
    // caller's interruptibility, so an interrupt stops the turn and lets it end)
    const runEntered = <E, R, R2>(
      restore: <A, E1, R1>(effect: Effect.Effect<A, E1, R1>) => Effect.Effect<A, E1, R1>,
      context: TurnContext,
      source: TurnSource<E, R>,
      runOptions: RunOptions<R2>,
      stop: StopSignal.StopSignal<StopReason>,
      onOpened: () => void = () => {}
    ) =>
      Effect.gen(function*() {
        yield* Metric.update(TurnMetrics.turnsStarted, 1)
        yield* Metric.modify(TurnMetrics.turnsActive, 1)
        const fiber = yield* Effect.forkDetach(restore(runTurn(env, context, source, stop, runOptions, onOpened)))
        turnFibers.add(fiber)
        fiber.addObserver(() => turnFibers.delete(fiber))
        const watch = runOptions.stop === undefined
          ? undefined
          : yield* Effect.forkDetach(
            restore(Effect.flatMap(runOptions.stop, stop.stop))
          )
        // interrupted: stop the input and let the turn write its ending, for a while
        const exit = yield* restore(Fiber.await(fiber)).pipe(
          Effect.onInterrupt(() =>
            stop.stop("aborted").pipe(
              Effect.andThen(Fiber.await(fiber).pipe(Effect.timeout(Duration.millis(drainMs)), Effect.ignore)),
              Effect.andThen(Fiber.interrupt(fiber))
            )
          ),
          Effect.ensuring(
            Metric.modify(TurnMetrics.turnsActive, -1).pipe(
              Effect.andThen(watch === undefined ? Effect.void : Fiber.interrupt(watch))
            )
          )
        )
        return yield* exit
      })

    const service: TurnPipelineService = {
      prefix,
      run: (context, source, runOptions = {}) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.flatMap(
            enter(context.turnId),
            (stop) =>
              Effect.ensuring(runEntered(restore, context, source, runOptions, stop), leave(context.turnId, stop))
          )
        ),
      start: <E, R, R2 = never>(context: TurnContext, source: TurnSource<E, R>, runOptions: RunOptions<R2> = {}) =>
        Effect.uninterruptibleMask((restoreCaller) =>
          Effect.gen(function*() {
            const stop = yield* enter(context.turnId)
            const events = yield* Queue.unbounded<StreamEvent.StreamEvent, Cause.Done>()
            const opened = yield* Deferred.make<
              void,
              TurnAdmission.AtCapacity | E | PipelineError | RedisError.RedisError
            >()
            const given = runOptions.onEvents
            const key = {}
            // forked interruptible, as every fork is: the turn's own mask restores that
            const fiber = yield* Effect.uninterruptibleMask((restore) =>
              runEntered(
                restore,
                context,
                source,
                {
                  ...runOptions,
                  onEvents: (chunk) =>
                    Effect.andThen(Queue.offerAll(events, chunk), given === undefined ? Effect.void : given(chunk))
                },
                stop,
                () => Deferred.doneUnsafe(opened, Exit.void)
              )
            ).pipe(Effect.forkIn(startedScope))
            // once the fiber ends, however (even interrupted before it ran: a pipeline whose
            // scope has closed), the turn gives its place back and its events end
            started.set(key, fiber)
            fiber.addObserver((exit) => {
              if (started.delete(key)) leaveUnsafe(context.turnId, stop)
              Queue.endUnsafe(events)
              Deferred.doneUnsafe(opened, openedExit(exit, context.turnId))
            })
            const running: RunningTurn<E> = {
              context,
              events: Stream.fromQueue(events),
              upserts: redis.tail(TurnKeys.upsertsKey(context.prefix ?? prefix, context.turnId), {
                until: TurnEntry.isFinal
              }),
              result: Fiber.join(fiber),
              // this turn's own stop: another turn under the same id is not this one
              cancel: stop.stop("cancelled")
            }
            // with an opening, the turn is given out once it is in Redis; a caller that
            // goes away before then never learnt of it, and the turn stops
            if (runOptions.opening !== undefined) {
              yield* restoreCaller(Deferred.await(opened)).pipe(Effect.onInterrupt(() => stop.stop("aborted")))
            }
            return running
          })
        ),
      cancel: (turnId, turnPrefix) => {
        const stop = running.get(turnId)
        return stop !== undefined
          ? stop.stop("cancelled")
          : Effect.provideService(
            TurnControl.requestCancel(turnPrefix ?? prefix, turnId),
            RedisStreams.RedisStreams,
            redis
          )
      },
      cancelHere: (turnId) =>
        Effect.suspend(() => {
          const stop = running.get(turnId)
          return stop === undefined ? Effect.succeed(false) : Effect.as(stop.stop("cancelled"), true)
        }),
      shutdown,
      load: Effect.sync(() => admission.load(clock.currentTimeMillisUnsafe()))
    }
    return service
  })

/**
 * The pipeline as a layer on the `RedisStreams` layer it is given
 * (`RedisStreamsLive.layerConfig()` for Redis, `RedisStreamsMemory.layer` in process).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}) => Layer.effect(TurnPipeline, make(options))

/**
 * Runs one turn with the `TurnPipeline` in context.
 *
 * @since 0.1.0
 * @category running
 */
export const run = <E, R, R2 = never>(context: TurnContext, source: TurnSource<E, R>, options?: RunOptions<R2>) =>
  TurnPipeline.use((pipeline) => pipeline.run(context, source, options))

/**
 * Starts one turn with the `TurnPipeline` in context (see `TurnPipelineService.start`).
 *
 * @since 0.3.0
 * @category running
 */
export const start = <E, R, R2 = never>(context: TurnContext, source: TurnSource<E, R>, options?: RunOptions<R2>) =>
  TurnPipeline.use((pipeline) => pipeline.start(context, source, options))

/**
 * Cancels a turn with the `TurnPipeline` in context.
 *
 * @since 0.1.0
 * @category running
 */
export const cancel = (turnId: string, prefix?: string) =>
  TurnPipeline.use((pipeline) => pipeline.cancel(turnId, prefix))

/**
 * The load of the `TurnPipeline` in context (see `TurnPipelineService.load`).
 *
 * @since 0.3.0
 * @category running
 */
export const load: Effect.Effect<TurnAdmission.Load, never, TurnPipeline> = TurnPipeline.use((pipeline) =>
  pipeline.load
)

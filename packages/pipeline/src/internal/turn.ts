/**
 * One turn's run, from its source to both streams and its result: the lease held, the
 * stage spans, the input folded (with the opening first, when there is one), the
 * stages past the fold run as one chain (`Engine`), and the turn's ending, whoever
 * wrote it. The pipeline (`TurnPipeline.make`) gives it what all its turns share
 * (`TurnEnv`) and runs it in a fiber of the turn's own.
 *
 * @internal
 */
import { Turn } from "@sluice/accumulator"
import { type StreamBMessage, StreamEvent, TimerWheel } from "@sluice/core"
import { RedisStreams } from "@sluice/redis"
import { LeaseKeeper, type PublishError, TurnEnding, TurnLease, TurnMetrics, type TurnPublisher } from "@sluice/turns"
import type { UpsertOptions } from "@sluice/upserts"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as PipelineErrors from "../PipelineError.js"
import type { StopReason } from "../StopReason.js"
import * as TraceParent from "../TraceParent.js"
import type { TurnContext } from "../TurnContext.js"
import type { Opening, RunOptions, TurnResult } from "../TurnPipeline.js"
import type { TurnSource } from "../TurnSource.js"
import { closingPayloads, type Ending } from "./closing.js"
import * as Engine from "./engine.js"
import { countEvents } from "./observed.js"
import type * as StopSignal from "./stopSignal.js"
import * as TurnFold from "./turnFold.js"
import { untilStopped } from "./untilStopped.js"

/**
 * What every turn of one pipeline shares: its default key prefix, Redis, the lease
 * keeper and timer wheel, the lease and upsert options, and a publisher per prefix.
 *
 * @internal
 */
export interface TurnEnv {
  readonly prefix: string
  readonly redis: RedisStreams.RedisStreamsService
  readonly keeper: LeaseKeeper.LeaseKeeperService
  readonly wheel: TimerWheel.TimerWheelService
  readonly lease: TurnLease.LeaseOptions | false | undefined
  readonly upserts: UpsertOptions.UpsertOptionsInput | undefined
  readonly publisherFor: (
    prefix: string
  ) => Effect.Effect<TurnPublisher.TurnPublisherService, PublishError.InvalidPublisherOptions>
}

/** The `response_start` of a turn's opening, with the context's ids. */
const openingEvent = (context: TurnContext, opening: Opening) =>
  Effect.flatMap(
    Clock.currentTimeMillis,
    (now) =>
      StreamEvent.make({ runId: context.runId, traceContext: context.traceContext }, {
        type: "response_start",
        response_id: context.runId,
        turn_id: context.turnId,
        thread_id: context.threadId,
        ...(opening.agentId === undefined ? {} : { agent_id: opening.agentId }),
        model_id: opening.modelId,
        provider_id: opening.providerId,
        created_at: now
      })
  )

/** The code (from `PipelineError.classify`) and message a failure ends the turn with. */
const failedEnding = (cause: Cause.Cause<unknown>): Ending => {
  const failure = Cause.squash(cause)
  const message = failure instanceof Error ? failure.message : String(failure)
  return { _tag: "Failed", code: PipelineErrors.errorCode(PipelineErrors.classify(failure)), message }
}

/** Ends a stage's span with an exit (once: the turn's scope ends it with the turn's otherwise). */
type EndSpan = (exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>

// One span per stage, siblings under the turn's span. Each is made when the turn
// starts and ended with its stage's exit: the source's when its stream ends, the fused
// stages' with the turn (one finalizer ends them all). A span is not provided to its
// stage as the current span: that would wrap every effect the stage runs, chunk after
// chunk, in a change of context (at live pace about a tenth of the pipeline's CPU).
// Spans a source makes of its own are children of the turn's span. No stack trace
// (`makeSpan` captures none): it would point into this module.
const stageNames = ["sluice.normalize", "sluice.publish.events", "sluice.upserts", "sluice.publish.upserts"] as const

/** The stage spans of a turn, ended with the turn's scope; gives the ender of the source's. */
const stageSpans: Effect.Effect<EndSpan, never, Scope.Scope> = Effect.flatMap(
  Effect.option(Effect.currentSpan),
  (parent) => {
    const options = Option.isSome(parent) ? { parent: parent.value } : {}
    return Effect.flatMap(Effect.forEach(stageNames, (name) => Effect.makeSpan(name, options)), (spans) => {
      let sourceEnded = false
      const endAll = (exit: Exit.Exit<unknown, unknown>) =>
        Effect.flatMap(Clock.currentTimeNanos, (now) =>
          Effect.sync(() => {
            spans.forEach((span, i) => {
              if (i > 0 || !sourceEnded) span.end(now, exit)
            })
            sourceEnded = true
          }))
      const endSource: EndSpan = (exit) =>
        Effect.suspend(() => {
          if (sourceEnded) return Effect.void
          sourceEnded = true
          return Effect.flatMap(Clock.currentTimeNanos, (now) => Effect.sync(() => spans[0]!.end(now, exit)))
        })
      return Effect.as(Effect.addFinalizer(endAll), endSource)
    })
  }
)

/**
 * Runs one turn to its end; see `TurnPipeline`'s documentation.
 *
 * @internal
 */
export const runTurn = <E, R, R2>(
  env: TurnEnv,
  context: TurnContext,
  source: TurnSource<E, R>,
  stop: StopSignal.StopSignal<StopReason>,
  runOptions: RunOptions<R2>,
  onOpened: () => void
) =>
  Effect.gen(function*() {
    const turnPrefix = context.prefix ?? env.prefix
    const turnPublisher = yield* env.publisherFor(turnPrefix)
    if (env.lease !== false) {
      yield* TurnLease.hold(turnPrefix, context.turnId, {
        ...env.lease,
        retentionMs: turnPublisher.options.retentionMs,
        onLost: Metric.update(TurnMetrics.leaseExpiries("producer"), 1).pipe(
          Effect.andThen(stop.stop("producer_lost")),
          Effect.asVoid
        )
      }).pipe(
        Effect.provideService(RedisStreams.RedisStreams, env.redis),
        Effect.provideService(LeaseKeeper.LeaseKeeper, env.keeper)
      )
    }
    const endSource = yield* stageSpans
    const last = TurnFold.makeFolding()
    // the events that end the turn the input left open, folded into the turn too
    const closing = (ending: Ending) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const turn = last.turn
        const payloads = closingPayloads(turn, ending, context, now)
        const events: Array<StreamEvent.StreamEvent> = []
        let folded = turn
        for (const payload of payloads) {
          const event = yield* StreamEvent.make({
            runId: turn.runId ?? context.runId,
            traceContext: context.traceContext
          }, payload)
          folded = Result.getOrElse(Turn.step(folded, event), () => folded)
          events.push(event)
        }
        last.turn = folded
        return events
      })
    // with an opening, its `response_start` first, alone in its chunk, before the
    // source is read
    const opening = runOptions.opening
    const input = opening === undefined
      ? untilStopped(source(context), stop)
      : Stream.concat(Stream.fromEffect(openingEvent(context, opening)), untilStopped(source(context), stop))
    const events = TurnFold.fold(input, context.traceContext, last, {
      dropStarts: opening !== undefined,
      onInputEnd: endSource,
      closing: (failure) =>
        failure !== undefined
          ? closing(failedEnding(failure))
          : Effect.flatMap(
            Deferred.poll(stop.reason),
            Option.match({
              onNone: () => closing({ _tag: "Ended" }),
              onSome: (reason) =>
                Effect.flatMap(reason, (stopReason) => closing({ _tag: "Stopped", reason: stopReason }))
            })
          )
    })
    // Past the fold, the stages run fused, as one chain of calls in this fiber (see
    // `Engine`): Stream A, then what this run does with each confirmed chunk, the
    // upsert stage, Stream B (from a fallback timer's fiber too, under the stage's
    // lock), then `onMessage`.
    let messages = 0
    const callerContext = yield* Effect.context<R2>()
    const writers = yield* turnPublisher.writers(context.turnId)
    const onMessage = runOptions.onMessage
    const told = Engine.sink<StreamBMessage.StreamBMessage, E | Engine.Failure>((passed) => {
      messages += passed.length
      return onMessage === undefined
        ? Effect.void
        : Effect.provideContext(Effect.forEach(passed, onMessage, { discard: true }), callerContext)
    })
    const upserts = yield* Engine.upserts(
      { ...env.upserts, turnId: context.turnId, threadId: context.threadId },
      Engine.upsertsWriter(writers, told)
    )
    const onEvents = runOptions.onEvents
    // the first chunk confirmed is the opening, when there is one: the turn is then
    // in both streams and the index
    let opened = false
    const confirmed = Engine.tap(
      // each chunk Redis confirmed also nudges the lease keeper, whose timer a
      // process busy with I/O may run seconds late (see `LeaseKeeper`)
      (chunk) => Effect.andThen(countEvents(chunk), env.keeper.nudge),
      (chunk) => {
        const then = onEvents === undefined ? undefined : onEvents(chunk)
        if (opened) return then
        opened = true
        return then === undefined ? Effect.sync(onOpened) : Effect.andThen(then, Effect.sync(onOpened))
      },
      upserts
    )
    const written = yield* Effect.exit(Engine.run(events, Engine.eventsWriter(writers, confirmed)))
    // A write refused because another writer ended the turn (a server that found
    // the lease lapsed while this process was paused): nothing more of this turn was
    // written, not even Stream B's ending the upsert stage would make; the ending the
    // other writer began is completed instead (`TurnEnding.end` writes only what is
    // missing), and the turn is taken as ended `producer_lost`.
    if (Engine.endedElsewhere(written)) {
      yield* stop.stop("producer_lost")
      yield* closing({ _tag: "Stopped", reason: "producer_lost" })
      yield* TurnEnding.end(turnPrefix, context.turnId, TurnEnding.producerLost).pipe(
        Effect.provideService(RedisStreams.RedisStreams, env.redis),
        Effect.catch((error) =>
          Effect.logWarning(`turn ${context.turnId}: completing the ending another writer began: ${error.message}`)
        )
      )
    } else {
      yield* written
    }
    const reason = yield* Deferred.poll(stop.reason)
    const stoppedBy = Option.isSome(reason) ? Option.some(yield* reason.value) : Option.none<StopReason>()
    const turn = last.turn
    yield* Effect.annotateCurrentSpan({ "sluice.status": turn.status, "sluice.messages": messages })
    return { context, turn, messages, stopped: stoppedBy } satisfies TurnResult
  }).pipe(
    Effect.scoped,
    // the upsert stage's fallback timers, and a live source's idle timer, on the one wheel
    Effect.provideService(TimerWheel.TimerWheel, env.wheel),
    Effect.withSpan("sluice.turn", {
      kind: "producer",
      attributes: {
        "sluice.turn_id": context.turnId,
        "sluice.thread_id": context.threadId,
        "sluice.run_id": context.runId,
        "sluice.prefix": context.prefix ?? env.prefix
      },
      ...(context.traceContext?.traceparent === undefined
        ? {}
        : { parent: TraceParent.toExternalSpan(context.traceContext.traceparent) })
    }, { captureStackTrace: false })
  )

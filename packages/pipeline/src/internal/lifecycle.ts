/**
 * What a pipeline (`TurnPipeline.make`) keeps around its turns: a publisher per key
 * prefix, the follower of cancel requests, and the shutdown of its running turns.
 *
 * @internal
 */
import { RedisStreams } from "@sluice/redis"
import { type PublishError, TurnControl, TurnPublisher } from "@sluice/turns"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { StopReason } from "../StopReason.js"
import type * as Admission from "./admission.js"
import type * as StopSignal from "./stopSignal.js"

/**
 * The turns running in this process, by id, each with its stop.
 *
 * @internal
 */
export type Running = Map<string, StopSignal.StopSignal<StopReason>>

/**
 * The publisher of each key prefix, made on first use with the pipeline's publisher
 * options (the pipeline's own prefix: its publisher).
 *
 * @internal
 */
export const publishers = (
  publisher: TurnPublisher.TurnPublisherService,
  options: TurnPublisher.Options,
  redis: RedisStreams.RedisStreamsService
) => {
  const made = new Map<string, TurnPublisher.TurnPublisherService>([[publisher.options.prefix, publisher]])
  return (
    turnPrefix: string
  ): Effect.Effect<TurnPublisher.TurnPublisherService, PublishError.InvalidPublisherOptions> => {
    const known = made.get(turnPrefix)
    return known !== undefined
      ? Effect.succeed(known)
      : Effect.tap(
        Effect.provideService(
          TurnPublisher.make({ ...options, prefix: turnPrefix }),
          RedisStreams.RedisStreams,
          redis
        ),
        (publisher) => Effect.sync(() => made.set(turnPrefix, publisher))
      )
  }
}

/**
 * Follows the control stream of `prefix` in the scope: a cancel request for a turn
 * running here stops it `cancelled`. A failure to read is logged and retried.
 *
 * @internal
 */
export const followCancels = (
  prefix: string,
  running: Running,
  redis: RedisStreams.RedisStreamsService
): Effect.Effect<void, never, Scope.Scope> =>
  TurnControl.requests(prefix).pipe(
    Stream.runForEach((request) => {
      const stop = running.get(request.turnId)
      return stop === undefined ? Effect.void : stop.stop("cancelled")
    }),
    Effect.tapError((error) => Effect.logWarning(`following cancel requests: ${error.message}`)),
    Effect.retry(Schedule.min([Schedule.exponential("500 millis"), Schedule.spaced("10 seconds")])),
    Effect.provideService(RedisStreams.RedisStreams, redis),
    Effect.forkScoped,
    Effect.asVoid
  )

/**
 * What a shutdown works on.
 *
 * @internal
 */
export interface Turns {
  readonly admission: Admission.Admission
  /** every running turn's own fiber, `run` and `start` alike */
  readonly turnFibers: Set<Fiber.Fiber<unknown, unknown>>
  readonly running: Running
  readonly graceMs: number
  readonly drainMs: number
}

/**
 * Shuts the running turns down (`TurnPipelineService.shutdown`): new turns are refused,
 * the running ones get `graceMs` to end by themselves, then are stopped `aborted` with
 * `drainMs` to write it; a turn still running after that is interrupted.
 *
 * @internal
 */
export const shutdownTurns = (turns: Turns): Effect.Effect<void> =>
  Effect.suspend(() => {
    const { admission, drainMs, graceMs, running, turnFibers } = turns
    admission.close()
    const fibers = Array.from(turnFibers)
    if (fibers.length === 0) return Effect.void
    return Effect.gen(function*() {
      const ended = yield* Fiber.awaitAll(fibers).pipe(Effect.timeoutOption(Duration.millis(graceMs)))
      if (Option.isSome(ended)) {
        return yield* Effect.logInfo(`shutting down: the ${fibers.length} running turns ended`)
      }
      yield* Effect.logInfo(
        `shutting down: ${turnFibers.size} of ${fibers.length} running turns still running after ${graceMs} ms, ending them aborted`
      )
      yield* Effect.forEach(Array.from(running.values()), (stop) => stop.stop("aborted"), { discard: true })
      const left = Array.from(turnFibers)
      const drained = yield* Fiber.awaitAll(left).pipe(Effect.timeoutOption(Duration.millis(drainMs)))
      if (Option.isNone(drained)) {
        yield* Effect.logWarning(
          `shutting down: ${turnFibers.size} turns did not write their ending within ${drainMs} ms; interrupting them`
        )
        yield* Fiber.interruptAll(Array.from(turnFibers))
      }
    })
  })

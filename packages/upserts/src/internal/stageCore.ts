/**
 * The effectful half of the stage, shared by the Stream transformer and the Promise
 * facade: the turn state, a lock so that every transition delivers its payloads in the
 * order the state changed, and one fallback timer per item on the `TimerWheel` in
 * context (a wheel of the stage's own without one): a timer costs no fiber while it
 * waits; when it is due, its look at the item runs in a fiber of a `FiberMap` that the
 * scope cleans up. The state is a plain variable: it
 * changes only inside a transition under the lock, or in `processQuiet` while no
 * transition is under way (JavaScript runs one of them at a time).
 */
import { type StreamEvent, TimerWheel } from "@sluice/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import type * as ItemBuffer from "../ItemBuffer.js"
import type { UnexpectedEvent } from "../UpsertErrors.js"
import type { ResolvedOptions } from "../UpsertOptions.js"
import type { UIPayload } from "./payloads.js"
import * as TurnState from "./turnState.js"

/** @internal */
export interface StageCore<E> {
  /** Applies events in order; payloads before a bad event are delivered, then it fails. */
  readonly process: (events: Iterable<StreamEvent.StreamEvent>) => Effect.Effect<void, E | UnexpectedEvent>
  /** Emits every item's unemitted content. */
  readonly flush: Effect.Effect<void, E>
  /** Flushes and ends an open turn as `aborted`, stopping every timer. */
  readonly abort: Effect.Effect<void, E>
  /** The open items' buffers, in start order. */
  readonly buffers: Effect.Effect<Array<ItemBuffer.ItemBuffer>>
  /**
   * Applies one event synchronously when that is all it does: no transition is under
   * way or waiting, and the event is in order, emits nothing and arms or disarms no
   * timer. Returns `false`, with the state untouched, otherwise (`process` then does
   * the work).
   */
  readonly processQuiet: (event: StreamEvent.StreamEvent) => boolean
}

/**
 * Builds the core. `deliver` receives each transition's payloads, in order, while the
 * lock is held; a transition's new state is committed only once `deliver` succeeded,
 * so a failed delivery leaves the state as it was.
 *
 * @internal
 */
export const make = <E>(
  options: ResolvedOptions,
  deliver: (payloads: ReadonlyArray<UIPayload>) => Effect.Effect<void, E>
): Effect.Effect<StageCore<E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    let state = TurnState.initial
    // transitions started and not yet over (waiting for the lock, delivering, ...)
    let inFlight = 0
    const clock = yield* Clock.Clock
    const lock = yield* Semaphore.make(1)
    const wheel = yield* Effect.flatMap(
      Effect.serviceOption(TimerWheel.TimerWheel),
      (given) => given._tag === "Some" ? Effect.succeed(given.value) : TimerWheel.make
    )
    // each armed item's timer on the wheel, and the look at its item once it is due
    const scheduled = new Map<string, TimerWheel.Timer>()
    const looks = yield* FiberMap.make<string>()
    yield* Effect.addFinalizer(() => Effect.forEach(scheduled.values(), (timer) => timer.cancel, { discard: true }))

    const transact = <A, X>(
      f: (
        before: TurnState.TurnState,
        now: number,
        fx: TurnState.Effects
      ) => readonly [TurnState.TurnState, Result.Result<A, X>]
    ): Effect.Effect<A, E | X> =>
      Effect.suspend(() => {
        inFlight++
        return lock.withPermits(1)(Effect.uninterruptibleMask((restore) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            const fx = TurnState.makeEffects()
            const [after, result] = f(state, now, fx)
            if (fx.out.length > 0) yield* restore(deliver(fx.out))
            state = after
            for (const itemId of fx.disarm) yield* disarm(itemId)
            for (const itemId of fx.arm) yield* arm(itemId, now + options.batchTimeoutMs)
            return yield* Effect.fromResult(result)
          })
        )).pipe(Effect.ensuring(Effect.sync(() => inFlight--)))
      })

    // the timeout fallback: at its deadline the timer looks at its item, and as long as
    // the item still has time left (deltas moved its deadline) it is due again that much later
    const schedule = (itemId: string, at: number): Effect.Effect<void> =>
      Effect.map(wheel.schedule(at, Effect.asVoid(FiberMap.run(looks, itemId, look(itemId)))), (timer) => {
        scheduled.set(itemId, timer)
      })

    const arm = (itemId: string, at: number): Effect.Effect<void> =>
      Effect.andThen(disarm(itemId), schedule(itemId, at))

    const disarm = (itemId: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        const timer = scheduled.get(itemId)
        scheduled.delete(itemId)
        return Effect.andThen(timer === undefined ? Effect.void : timer.cancel, FiberMap.remove(looks, itemId))
      })

    const look = (itemId: string): Effect.Effect<void> =>
      transact((before, now, fx) => {
        const tick = TurnState.tick(before, itemId, now, options, fx)
        return [tick.state, Result.succeed(tick.remaining)] as const
      }).pipe(
        Effect.flatMap((remaining) =>
          remaining > 0
            ? Effect.flatMap(Clock.currentTimeMillis, (now) => schedule(itemId, now + remaining))
            : Effect.sync(() => {
              scheduled.delete(itemId)
            })
        ),
        Effect.catchCause((cause) =>
          Effect.sync(() => {
            state = TurnState.disarmed(state, itemId)
          }).pipe(
            lock.withPermits(1),
            Effect.andThen(Effect.logWarning(`upsert timer of item "${itemId}" could not emit`, cause))
          )
        )
      )

    const process = (events: Iterable<StreamEvent.StreamEvent>) =>
      transact<void, UnexpectedEvent>((before, now, fx) => {
        let current = before
        for (const event of events) {
          const next = TurnState.step(current, event, now, options, fx)
          if (Result.isFailure(next)) return [current, Result.fail(next.failure)] as const
          current = next.success
        }
        return [current, Result.void] as const
      })

    return {
      process,
      flush: transact<void, never>((before, _now, fx) => [TurnState.flush(before, options, fx), Result.void]),
      abort: transact<void, never>((before, _now, fx) => [TurnState.abort(before, options, fx), Result.void]),
      buffers: Effect.sync(() => TurnState.buffers(state)),
      processQuiet: (event) => {
        if (inFlight > 0) return false
        const fx = TurnState.makeEffects()
        const next = TurnState.step(state, event, clock.currentTimeMillisUnsafe(), options, fx)
        if (Result.isFailure(next) || fx.out.length > 0 || fx.arm.length > 0 || fx.disarm.length > 0) return false
        state = next.success
        return true
      }
    }
  })

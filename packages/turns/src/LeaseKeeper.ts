/**
 * One keeper renews every lease a process holds: one fiber, whatever the number of
 * running turns. Each period it renews the leases that are due, all at once (the
 * commands of one tick leave in one pipeline on the live layer), and tells a lease
 * whose key it found gone (`lost`, and the `onLost` effect it was taken with). A
 * renewal that fails on a Redis error is logged and tried again at the next period.
 * It sleeps on Effect's `Clock` until the next lease is due, so `TestClock` drives it.
 *
 * A process busy with I/O may run its timers late: Node runs them between rounds of
 * I/O, and with more than about a thousand sockets ready at once, one round can last
 * seconds, and every task deferred to the next turn of the loop (`setImmediate`, where
 * Effect starts a forked fiber) waits as long. A keeper asleep on a timer would then let
 * its leases lapse (and its turns end `producer_lost`) while the process is working. So
 * the code that does the work calls `nudge` as it goes (the pipeline, once per chunk
 * Redis confirmed): when a lease is due and the keeper still sleeps, it wakes the keeper
 * at once, and the keeper's fiber runs its tasks as microtasks, which wait for no turn
 * of the loop.
 *
 * @since 0.3.0
 */
import type { RedisError } from "@sluice/redis/RedisError"
import { RedisStreams } from "@sluice/redis/RedisStreams"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scheduler from "effect/Scheduler"
import type * as Scope from "effect/Scope"

/**
 * A lease to keep: its key, how long it lives without renewal, how often it is
 * renewed, and what to do if a renewal finds it gone.
 *
 * @since 0.3.0
 * @category models
 */
export interface Kept {
  readonly key: string
  readonly leaseMs: number
  readonly renewEveryMs: number
  readonly lost: Deferred.Deferred<void>
  readonly onLost?: Effect.Effect<void> | undefined
}

/**
 * The keeper: `keep` renews a lease (already set) until the scope closes.
 *
 * @since 0.3.0
 * @category models
 */
export interface LeaseKeeperService {
  readonly keep: (kept: Kept) => Effect.Effect<void, never, Scope.Scope>
  /**
   * Wakes the keeper when a lease is due and it still sleeps; otherwise a look at the
   * clock. For the code that does a process's work, so that renewals go on while the
   * event loop runs its timers late.
   */
  readonly nudge: Effect.Effect<void>
  /** How many leases it keeps now. */
  readonly size: Effect.Effect<number>
}

/**
 * The process's lease keeper.
 *
 * @since 0.3.0
 * @category services
 */
export class LeaseKeeper extends Context.Service<LeaseKeeper, LeaseKeeperService>()("@sluice/turns/LeaseKeeper") {}

interface Entry {
  readonly kept: Kept
  dueAt: number
}

/**
 * A keeper whose fiber runs in the scope, renewing leases on the `RedisStreams` in
 * context.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make: Effect.Effect<LeaseKeeperService, never, RedisStreams | Scope.Scope> = Effect.gen(function*() {
  const redis = yield* RedisStreams
  const clock = yield* Clock.Clock
  const entries = new Set<Entry>()
  // The keeper is woken when a lease is added (it may be due before the keeper's next
  // wake), or by a nudge: by a callback resumed where the wake happens (a `Queue` would
  // resume its taker on the next turn of the loop). A wake while it is awake makes its
  // next wait return at once.
  let waiting: ((effect: Effect.Effect<void>) => void) | undefined
  let wokenAwake = false
  const wakeUp = (): void => {
    const resume = waiting
    waiting = undefined
    if (resume !== undefined) resume(Effect.void)
    else wokenAwake = true
  }
  const woken = Effect.callback<void>((resume) => {
    if (wokenAwake) {
      wokenAwake = false
      return resume(Effect.void)
    }
    waiting = resume
    return Effect.sync(() => {
      if (waiting === resume) waiting = undefined
    })
  })
  // when the keeper, asleep, next has a lease due; infinite while it is awake or woken
  let sleepsUntil = Number.POSITIVE_INFINITY

  const renew = (entry: Entry): Effect.Effect<void> =>
    redis.pexpire(entry.kept.key, entry.kept.leaseMs).pipe(
      Effect.flatMap((alive) => {
        if (alive) return Effect.void
        entries.delete(entry)
        return Effect.andThen(Deferred.succeed(entry.kept.lost, undefined), entry.kept.onLost ?? Effect.void)
      }),
      Effect.catch((error: RedisError) => Effect.logWarning(`renewing the lease ${entry.kept.key}: ${error.message}`))
    )

  // Its own loop rather than timers on a `TimerWheel`: a round waits for the renewals
  // it sent before it sleeps again (a wheel's task must not wait), so a renewal is never
  // overtaken by the next period's.
  const round = Effect.gen(function*() {
    sleepsUntil = Number.POSITIVE_INFINITY
    const now = yield* Clock.currentTimeMillis
    const due: Array<Entry> = []
    let next = Number.POSITIVE_INFINITY
    for (const entry of entries) {
      if (entry.dueAt <= now) {
        entry.dueAt = now + entry.kept.renewEveryMs
        due.push(entry)
      }
      next = Math.min(next, entry.dueAt)
    }
    if (due.length > 0) yield* Effect.forEach(due, renew, { concurrency: "unbounded", discard: true })
    sleepsUntil = next
    yield* next === Number.POSITIVE_INFINITY
      ? woken
      : Effect.raceFirst(Effect.sleep(Math.max(0, next - now)), woken)
  })
  // its tasks (the renewals it forks) as microtasks, not on the next turn of the loop
  yield* Effect.forkScoped(
    Effect.provideService(Effect.forever(round), Scheduler.Scheduler, new Scheduler.MixedScheduler("sync"))
  )

  return {
    keep: (kept) =>
      Effect.gen(function*() {
        const entry: Entry = { kept, dueAt: (yield* Clock.currentTimeMillis) + kept.renewEveryMs }
        entries.add(entry)
        yield* Effect.sync(wakeUp)
        yield* Effect.addFinalizer(() => Effect.sync(() => entries.delete(entry)))
      }),
    nudge: Effect.sync(() => {
      if (clock.currentTimeMillisUnsafe() < sleepsUntil) return
      sleepsUntil = Number.POSITIVE_INFINITY
      wakeUp()
    }),
    size: Effect.sync(() => entries.size)
  }
})

/**
 * The keeper as a layer, for an application that holds leases from several places.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer: Layer.Layer<LeaseKeeper, never, RedisStreams> = Layer.effect(LeaseKeeper, make)

/**
 * The lease sweep: a lease that ends (the worker or the posting server gone) ends its
 * wake, and a new one is issued if work is pending. It runs every `sweepMs` on every
 * server; the saves against the record's version make one server's end of a wake the
 * only one. It finds the leases that ended from the subscriptions' summaries (a version
 * probe each, `subscriptionIndex`) and loads only those records.
 *
 * @internal
 */
import type { RedisError } from "@sluice/redis"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { DurableRefusal } from "../DurableRefusal.js"
import { type Core, type Decision, type Failure, unchanged } from "./subscriptionCore.js"
import type { Wakes } from "./wakeIssuing.js"

/**
 * Ends the wakes whose lease has run out (and issues new ones for pending work).
 *
 * @internal
 */
export const sweep = (core: Core, wakes: Pick<Wakes, "endWake">): Effect.Effect<void, RedisError.RedisError> =>
  Effect.flatMap(
    Effect.all([core.index.current, Clock.currentTimeMillis]),
    ([summaries, at]) =>
      Effect.forEach(
        summaries.flatMap((summary) =>
          summary.leaseUntil !== undefined && summary.leaseUntil <= at ? [summary.id] : []
        ),
        (id) =>
          core.update(id, (subscription, now): Effect.Effect<Decision<void>, Failure> =>
            subscription.wake === undefined || subscription.wake.leaseUntil > now
              ? Effect.succeed(unchanged)
              : Effect.map(wakes.endWake(subscription, subscription.links, now), (decision) => ({
                ...decision,
                result: undefined
              }))).pipe(
              Effect.catchIf((error): error is DurableRefusal => error instanceof DurableRefusal, () => Effect.void)
            ),
        { discard: true }
      )
  )

/**
 * Runs `sweep` every `sweepMs` in the scope (a failed sweep is logged; the next runs).
 *
 * @internal
 */
export const run = (sweeping: Effect.Effect<void, RedisError.RedisError>, sweepMs: number) =>
  Effect.forkScoped(
    sweeping.pipe(
      Effect.catch((error) => Effect.logWarning(`subscription leases were not checked: ${error.message}`)),
      Effect.repeat(Schedule.spaced(sweepMs))
    )
  ) satisfies Effect.Effect<unknown, never, Scope.Scope>

/**
 * What the engine knows of every subscription without loading its record: a summary
 * (its pattern, the streams it links, whether a wake is in flight and its lease) kept
 * per record version in the process (docs/http.md#subscription-limits). `current`
 * reads the store's revision, which every save, insert and delete raises after the
 * record's change: unchanged since the summaries were read, they are current, for one
 * `GET`; else it reads the set of ids and every record's version (a round trip each)
 * and loads only the records whose version moved (saved by another server, or by this
 * one outside `saved`). So matching an append to the subscriptions, and the lease
 * sweep, cost one `GET` while no subscription changes, a version probe a subscription
 * when one did, never a load and decode of every record.
 *
 * A save's revision comes after its record, and a wake's end looks at the tails again
 * once saved (`wakeIssuing`): a batch that read the revision before it, and so took a
 * subscription for woken still, wrote before that look, which sees its append.
 *
 * @internal
 */
import type { RedisError } from "@sluice/redis"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Semaphore from "effect/Semaphore"
import type * as DurableSubscriptions from "../DurableSubscriptions.js"

type Subscription = DurableSubscriptions.Subscription

/**
 * A subscription as the engine matches it: its record's version, pattern, the paths
 * it links, and its wake in flight (the lease's end; none when idle).
 *
 * @internal
 */
export interface Summary {
  readonly id: string
  readonly version: number
  readonly pattern: string | undefined
  readonly linked: ReadonlySet<string>
  readonly leaseUntil: number | undefined
}

/**
 * The summaries.
 *
 * @internal
 */
export interface Index {
  /** Every subscription's summary as stored now. */
  readonly current: Effect.Effect<ReadonlyArray<Summary>, RedisError.RedisError>
  /** A record this process saved, at its new version: kept without loading it again. */
  readonly saved: (subscription: Subscription, version: number) => void
}

/** The summary of a record. @internal */
export const summaryOf = (subscription: Subscription, version: number): Summary => ({
  id: subscription.id,
  version,
  pattern: subscription.pattern,
  linked: new Set(subscription.links.map((link) => link.path)),
  leaseUntil: subscription.wake?.leaseUntil
})

/**
 * The summaries of the records of `subscriptions`, kept in this process.
 *
 * @internal
 */
export const make = (subscriptions: DurableSubscriptions.DurableSubscriptionsService): Effect.Effect<Index> =>
  Effect.gen(function*() {
    let known = new Map<string, Summary>()
    // the revision the summaries were read at (none yet)
    let readAt: number | undefined
    const refreshing = yield* Semaphore.make(1)
    const current = refreshing.withPermit(Effect.gen(function*() {
      const revision = yield* subscriptions.revision
      if (revision === readAt) return [...known.values()]
      const ids = yield* subscriptions.ids
      const versions = yield* subscriptions.versions(ids)
      const next = new Map<string, Summary>()
      const moved: Array<string> = []
      ids.forEach((id, i) => {
        const version = versions[i] ?? 0
        // 0: counted but not written yet (or gone meanwhile)
        if (version === 0) return
        const summary = known.get(id)
        if (summary !== undefined && summary.version === version) next.set(id, summary)
        else moved.push(id)
      })
      const loaded = yield* Effect.forEach(moved, subscriptions.load, { concurrency: 16 })
      for (const record of loaded) {
        if (Option.isSome(record)) {
          next.set(record.value.subscription.id, summaryOf(record.value.subscription, record.value.version))
        }
      }
      known = next
      readAt = revision
      return [...next.values()]
    }))
    return {
      current,
      saved: (subscription, version) => {
        const summary = known.get(subscription.id)
        if (summary === undefined || summary.version < version) {
          known.set(subscription.id, summaryOf(subscription, version))
        }
      }
    }
  })

/**
 * Issuing wakes: a new generation and wake id over the tails as they are, announced
 * once saved (a webhook's post starts, or a pull-wake's event is appended to its wake
 * stream); ending a wake (and issuing the next when work is pending); and what appends
 * and deletions tell the subscriptions (links, and a wake for an idle subscription with
 * work pending), a batch of streams at a time.
 *
 * A batch is bounded work (docs/http.md#subscription-limits): the subscriptions it may
 * concern are found from their summaries (`subscriptionIndex`: a version probe each, a
 * pattern matched once a stream whatever the number of subscriptions with it), and only
 * those that must change are loaded and saved: one that does not link a stream it
 * matches, one that links a deleted stream, an idle one with an appended stream. A
 * subscription with a wake in flight that links the stream already is left alone (its
 * wake's end looks at every tail); an idle one looks at the tails of the streams of the
 * batch only, not of every stream it links. Each subscription concerned is decided once
 * for the whole batch, so a burst of appends makes one wake.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Struct from "effect/Struct"
import { randomBytes } from "node:crypto"
import * as DurableOperations from "../DurableOperations.js"
import { DurableRefusal } from "../DurableRefusal.js"
import * as Wire from "./durableWire.js"
import {
  type Core,
  type Decision,
  type Failure,
  firstPending,
  type Link,
  linkAt,
  pending,
  type Subscription,
  unchanged
} from "./subscriptionCore.js"
import { globMatches, isReserved } from "./subscriptionWire.js"

/**
 * A new wake over the tails: the next generation, held by `holder` when a worker
 * claims it; a webhook wake's lease starts now, an unclaimed pull-wake's at its claim.
 *
 * @internal
 */
export const issueWake = (
  subscription: Subscription,
  links: ReadonlyArray<Link>,
  tails: ReadonlyMap<string, string>,
  now: number,
  holder?: string
): Subscription => ({
  ...subscription,
  links,
  generation: subscription.generation + 1,
  wake: {
    id: `w_${randomBytes(12).toString("base64url")}`,
    snapshot: links.map((link) => ({ path: link.path, tail: tails.get(link.path) ?? link.acked })),
    leaseUntil: subscription.type === "webhook" || holder !== undefined
      ? now + subscription.leaseTtlMs
      : Number.MAX_SAFE_INTEGER,
    ...(holder === undefined ? {} : { holder })
  }
})

// A pull-wake's wake event, appended to its wake stream.
const wakeEvent = (core: Core, saved: Subscription, wakeStream: string, trigger: string) =>
  Effect.gen(function*() {
    const event = {
      type: "wake",
      subscription_id: saved.id,
      stream: trigger,
      generation: saved.generation,
      ts: yield* Clock.currentTimeMillis
    }
    yield* DurableOperations.append(core.store, wakeStream, {
      contentType: "application/json",
      seq: undefined,
      close: false,
      producer: undefined,
      body: new TextEncoder().encode(JSON.stringify(event))
    })
  }).pipe(
    Effect.catch((error) =>
      Effect.logWarning(`subscription ${saved.id}: the wake event was not written to ${wakeStream}: ${error.message}`)
    )
  )

/**
 * The wake operations; `deliver` starts the posts of a webhook's wake.
 *
 * @internal
 */
export interface Wakes {
  /** What follows a saved wake: the webhook post, or the wake stream's event. */
  readonly announce: (saved: Subscription, trigger: string) => Effect.Effect<void>
  /** Ends the current wake, and issues the next when work is pending (`true`). */
  readonly endWake: (
    subscription: Subscription,
    links: ReadonlyArray<Link>,
    now: number
  ) => Effect.Effect<Decision<boolean>, Failure>
  /**
   * After commits to streams (or their deletion, `true`): links them and issues wakes.
   * Never fails.
   */
  readonly changed: (streams: ReadonlyMap<string, boolean>) => Effect.Effect<void>
}

// The links once `name` is deleted: a glob link goes, an explicit one waits for the stream again.
const withoutDeleted = (links: ReadonlyArray<Link>, name: string): ReadonlyArray<Link> => {
  const linked = links.find((link) => link.path === name)
  if (linked === undefined) return links
  return linked.explicit
    ? links.map((link) => link === linked ? { ...link, glob: false, acked: Wire.startOffset } : link)
    : links.filter((link) => link !== linked)
}

/**
 * The wake operations over the shared parts.
 *
 * @internal
 */
export const make = (core: Core, deliver: (id: string, wakeId: string) => Effect.Effect<void>): Wakes => {
  const announce = (saved: Subscription, trigger: string): Effect.Effect<void> => {
    const wake = saved.wake
    if (wake === undefined || wake.holder !== undefined) return Effect.void
    if (saved.type === "webhook") return deliver(saved.id, wake.id)
    return saved.wakeStream === undefined ? Effect.void : wakeEvent(core, saved, saved.wakeStream, trigger)
  }

  // After a wake ended with nothing pending: an append that came while the tails were
  // read (its batch saw the wake still in flight) is found now, and woken for.
  const recheck = (id: string): Effect.Effect<void> =>
    core.update(id, (subscription, now): Effect.Effect<Decision<void>, Failure> =>
      subscription.wake !== undefined
        ? Effect.succeed(unchanged)
        : Effect.map(core.tailsOf(subscription.links), (tails) => {
          if (!pending(subscription.links, tails)) return unchanged
          const next = issueWake(subscription, subscription.links, tails, now)
          return { next, result: undefined, after: announce(next, firstPending(subscription.links, tails)) }
        })).pipe(Effect.catch(() => Effect.void))

  const endWake = (subscription: Subscription, links: ReadonlyArray<Link>, now: number) =>
    Effect.map(core.tailsOf(links), (tails): Decision<boolean> => {
      const idle: Subscription = { ...Struct.omit(subscription, ["wake"]), links }
      if (!pending(links, tails)) return { next: idle, result: false, after: recheck(subscription.id) }
      const next = issueWake(idle, links, tails, now)
      return { next, result: true, after: announce(next, firstPending(links, tails)) }
    })

  // A subscription told of a batch: the streams appended to it matches or links, and
  // those deleted it links. Links them, and wakes it when idle with work in them.
  const onBatch = (
    subscription: Subscription,
    appended: ReadonlyArray<string>,
    deleted: ReadonlyArray<string>,
    now: number
  ): Effect.Effect<Decision<void>, Failure> => {
    let links = subscription.links
    for (const name of deleted) links = withoutDeleted(links, name)
    const pattern = subscription.pattern
    for (const name of appended) {
      if (pattern !== undefined && globMatches(pattern, name)) links = linkAt(links, name, "glob", Wire.startOffset)
    }
    const relinked: Decision<void> = {
      next: links === subscription.links ? undefined : { ...subscription, links },
      result: undefined
    }
    const touched = links.filter((link) => appended.includes(link.path))
    if (subscription.wake !== undefined || touched.length === 0) return Effect.succeed(relinked)
    return Effect.map(core.tailsOf(touched), (tails): Decision<void> => {
      if (!pending(touched, tails)) return relinked
      const next = issueWake(subscription, links, tails, now)
      return { next, result: undefined, after: announce(next, firstPending(touched, tails)) }
    })
  }

  const changed = (told: ReadonlyMap<string, boolean>): Effect.Effect<void> =>
    Effect.gen(function*() {
      const streams = [...told.keys()].filter((name) => !isReserved(name))
      if (streams.length === 0) return
      yield* Effect.forEach(streams, (name) => core.subscriptions.observe(name, told.get(name) !== true), {
        discard: true
      })
      const summaries = yield* core.index.current
      if (summaries.length === 0) return
      // appended or deleted as the store has it now (a delete told may have been undone)
      const exists = yield* Effect.forEach(
        streams,
        (name) => Effect.map(core.store.load(name), Option.isSome),
        { concurrency: 8 }
      )
      const appended = streams.filter((_, i) => exists[i])
      const deleted = streams.filter((_, i) => !exists[i])
      // each pattern matched once a stream, whatever the number of subscriptions with it
      const matched = new Map<string, ReadonlyArray<string>>()
      const matching = (pattern: string) => {
        let names = matched.get(pattern)
        if (names === undefined) {
          names = appended.filter((name) => globMatches(pattern, name))
          matched.set(pattern, names)
        }
        return names
      }
      const concerned = summaries.flatMap((summary) => {
        const byPattern = summary.pattern === undefined ? [] : matching(summary.pattern)
        const ofIt = appended.filter((name) => summary.linked.has(name) || byPattern.includes(name))
        const gone = deleted.filter((name) => summary.linked.has(name))
        const acts = gone.length > 0 || ofIt.some((name) => !summary.linked.has(name)) ||
          (summary.leaseUntil === undefined && ofIt.length > 0)
        return acts ? [{ id: summary.id, appended: ofIt, deleted: gone }] : []
      })
      yield* Effect.forEach(
        concerned,
        (one) =>
          core.update(one.id, (subscription, now) => onBatch(subscription, one.appended, one.deleted, now)).pipe(
            Effect.catchIf((error) => error instanceof DurableRefusal, () => Effect.void)
          ),
        { concurrency: 8, discard: true }
      )
    }).pipe(
      Effect.catch((error) =>
        Effect.logWarning(`subscriptions were not told of ${[...told.keys()].join(", ")}: ${error.message}`)
      )
    )

  return { announce, endWake, changed }
}

/**
 * Issuing wakes: a new generation and wake id over the tails as they are, announced
 * once saved (a webhook's post starts, or a pull-wake's event is appended to its wake
 * stream); ending a wake (and issuing the next when work is pending); and what an
 * append or a deletion tells the subscriptions (links, and a wake for an idle
 * subscription with work pending).
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
  /** After a commit to a stream (or its deletion): links it and issues wakes. Never fails. */
  readonly notify: (name: string, deleted: boolean) => Effect.Effect<void>
}

// A subscription told of a deleted stream: a glob link goes, an explicit one waits for the stream again.
const onDeleted = (subscription: Subscription, name: string): Decision<void> => {
  const linked = subscription.links.find((link) => link.path === name)
  if (linked === undefined) return unchanged
  const links = linked.explicit
    ? subscription.links.map((link) => link === linked ? { ...link, glob: false, acked: Wire.startOffset } : link)
    : subscription.links.filter((link) => link !== linked)
  return { next: { ...subscription, links }, result: undefined }
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

  const endWake = (subscription: Subscription, links: ReadonlyArray<Link>, now: number) =>
    Effect.map(core.tailsOf(links), (tails): Decision<boolean> => {
      const idle: Subscription = { ...Struct.omit(subscription, ["wake"]), links }
      if (!pending(links, tails)) return { next: idle, result: false }
      const next = issueWake(idle, links, tails, now)
      return { next, result: true, after: announce(next, firstPending(links, tails)) }
    })

  // A subscription told of an append to `name`: links it, and wakes an idle subscription with work.
  const onAppended = (subscription: Subscription, name: string, now: number) => {
    const linked = subscription.links.find((link) => link.path === name)
    const matches = subscription.pattern !== undefined && globMatches(subscription.pattern, name)
    if (linked === undefined && !matches) return Effect.succeed(unchanged)
    const links = matches ? linkAt(subscription.links, name, "glob", Wire.startOffset) : subscription.links
    const relinked: Decision<void> = {
      next: links === subscription.links ? undefined : { ...subscription, links },
      result: undefined
    }
    if (subscription.wake !== undefined) return Effect.succeed(relinked)
    return Effect.map(core.tailsOf(links), (tails): Decision<void> => {
      if (!pending(links, tails)) return relinked
      const next = issueWake(subscription, links, tails, now)
      return { next, result: undefined, after: announce(next, name) }
    })
  }

  const notify = (name: string, deleted: boolean): Effect.Effect<void> =>
    Effect.gen(function*() {
      if (isReserved(name)) return
      yield* core.subscriptions.observe(name, !deleted)
      const ids = yield* core.subscriptions.ids
      if (ids.length === 0) return
      const state = yield* core.store.load(name)
      yield* Effect.forEach(ids, (id) =>
        core.update(id, (subscription, now): Effect.Effect<Decision<void>, Failure> =>
          Option.isNone(state)
            ? Effect.succeed(onDeleted(subscription, name))
            : onAppended(subscription, name, now)).pipe(
            Effect.catchIf((error) =>
              error instanceof DurableRefusal, () => Effect.void)
          ), { discard: true })
    }).pipe(
      Effect.catch((error) =>
        Effect.logWarning(`subscriptions were not told of ${name}: ${error.message}`)
      )
    )

  return { announce, endWake, notify }
}

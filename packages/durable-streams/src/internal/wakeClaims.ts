/**
 * The wake's own routes: a webhook's callback, a pull-wake worker's claim, and its
 * acks and release. A callback, an ack or a release carries the wake's token and
 * names the wake; a stale one (another generation or wake) is fenced off (409). An ack
 * moves the cursors and renews the lease, or (`done`) ends the wake; a claim takes a
 * pull-wake subscription's wake (issuing one when work is pending) for a lease.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Wire from "./durableWire.js"
import {
  type Core,
  type Decision,
  type Failure,
  infos,
  type Link,
  pending,
  type Subscription
} from "./subscriptionCore.js"
import { type AckBody, type ClaimBody, refuse } from "./subscriptionWire.js"
import { issueWake, type Wakes } from "./wakeIssuing.js"

/**
 * The answer of a callback or an ack.
 *
 * @internal
 */
export interface AckResult {
  readonly ok: true
  readonly next_wake: boolean
}

/**
 * The answer of a claim.
 *
 * @internal
 */
export interface ClaimResult {
  readonly wake_id: string
  readonly generation: number
  readonly token: string
  readonly streams: ReturnType<typeof infos>
  readonly lease_ttl_ms: number
}

type Ack = typeof AckBody.Type

/**
 * The wake routes' operations.
 *
 * @internal
 */
export interface Claims {
  readonly callback: (id: string, token: string, body: Ack) => Effect.Effect<AckResult, Failure>
  readonly ack: (id: string, token: string, body: Ack) => Effect.Effect<AckResult, Failure>
  readonly release: (id: string, token: string, body: Ack) => Effect.Effect<void, Failure>
  readonly claim: (id: string, body: typeof ClaimBody.Type) => Effect.Effect<ClaimResult, Failure>
}

// A wake that is not the current one is fenced off.
const fenced = (subscription: Subscription, gen: number, body: Ack) =>
  subscription.wake === undefined || gen !== subscription.generation ||
    body.generation !== subscription.generation || body.wake_id !== subscription.wake.id
    ? refuse(409, "FENCED", `wake ${body.wake_id} of generation ${body.generation} is not the current wake`)
    : Effect.void

const ofType = (subscription: Subscription, kind: Subscription["type"]) =>
  subscription.type === kind
    ? Effect.void
    : refuse(400, "INVALID_REQUEST", `subscription ${subscription.id} is not a ${kind} subscription`)

// The offset of an ack: an offset at or after the cursor, not past the tail.
const ackedOffset = (core: Core, link: Link, index: number, offset: string) =>
  Effect.gen(function*() {
    const id = Wire.entryIdOf(offset)
    if (Option.isNone(id)) {
      return yield* refuse(
        400,
        "INVALID_REQUEST",
        `acks.${index}.offset ${JSON.stringify(offset.slice(0, 64))} is not an offset`
      )
    }
    const acked = Wire.offsetOf(id.value)
    if (acked < link.acked) {
      return yield* refuse(409, "INVALID_OFFSET", `acks.${index}.offset is before the acknowledged offset`)
    }
    if (acked > (yield* core.tailOf(link.path))) {
      return yield* refuse(409, "INVALID_OFFSET", `acks.${index}.offset is past the tail of ${link.path}`)
    }
    return acked
  })

// The links with the acks' offsets.
const applyAcks = (core: Core, subscription: Subscription, body: Ack) =>
  Effect.gen(function*() {
    const links = [...subscription.links]
    for (const [index, ack] of (body.acks ?? []).entries()) {
      const path = ack.stream ?? ack.path
      if (path === undefined) return yield* refuse(400, "INVALID_REQUEST", `acks.${index}.stream is missing`)
      const at = links.findIndex((link) => link.path === path)
      if (at < 0) {
        return yield* refuse(409, "INVALID_OFFSET", `${path} is not a stream of subscription ${subscription.id}`)
      }
      links[at] = { ...links[at]!, acked: yield* ackedOffset(core, links[at]!, index, ack.offset) }
    }
    return links
  })

/**
 * The wake routes' operations over the shared parts and the wakes.
 *
 * @internal
 */
export const make = (core: Core, wakes: Pick<Wakes, "endWake">): Claims => {
  const tokenClaims = (id: string, token: string) =>
    Effect.flatMap(core.signer, (signing) => {
      const claims = signing.verify(token)
      return Option.isSome(claims) && claims.value.sub === id
        ? Effect.succeed(claims.value)
        : refuse(401, "TOKEN_INVALID", "the bearer token is not a token of this subscription's wakes")
    })

  // A callback or an ack: acknowledges, and renews the lease or (done) ends the wake.
  const acknowledge = (kind: Subscription["type"]) => (id: string, token: string, body: Ack) =>
    Effect.flatMap(
      tokenClaims(id, token),
      (claims) =>
        core.update(id, (subscription, now): Effect.Effect<Decision<AckResult>, Failure> =>
          Effect.gen(function*() {
            yield* ofType(subscription, kind)
            yield* fenced(subscription, claims.gen, body)
            const links = yield* applyAcks(core, subscription, body)
            if (body.done === true) {
              const decision = yield* wakes.endWake(subscription, links, now)
              return { ...decision, result: { ok: true, next_wake: decision.result } }
            }
            const wake = subscription.wake!
            return {
              next: { ...subscription, links, wake: { ...wake, leaseUntil: now + subscription.leaseTtlMs } },
              result: { ok: true, next_wake: false }
            }
          }))
    )

  const release: Claims["release"] = (id, token, body) =>
    Effect.flatMap(
      tokenClaims(id, token),
      (claims) =>
        core.update(id, (subscription, now): Effect.Effect<Decision<void>, Failure> =>
          Effect.gen(function*() {
            yield* ofType(subscription, "pull-wake")
            yield* fenced(subscription, claims.gen, body)
            return { ...(yield* wakes.endWake(subscription, subscription.links, now)), result: undefined }
          }))
    )

  // A claim: the wake to hold (a new one over the tails, or the unclaimed current one).
  const claimed = (subscription: Subscription, worker: string, now: number) =>
    Effect.gen(function*() {
      yield* ofType(subscription, "pull-wake")
      const wake = subscription.wake
      if (wake?.holder !== undefined && wake.leaseUntil > now) {
        return yield* refuse(409, "ALREADY_CLAIMED", `worker ${wake.holder} holds subscription ${subscription.id}`, {
          current_holder: wake.holder,
          generation: subscription.generation
        })
      }
      const tails = yield* core.tailsOf(subscription.links)
      if (wake === undefined && !pending(subscription.links, tails)) {
        return yield* refuse(409, "NO_PENDING_WORK", `subscription ${subscription.id} has no pending work`)
      }
      const next: Subscription = wake === undefined || wake.holder !== undefined
        ? issueWake(subscription, subscription.links, tails, now, worker)
        : { ...subscription, wake: { ...wake, holder: worker, leaseUntil: now + subscription.leaseTtlMs } }
      return { next, tails }
    })

  const claim: Claims["claim"] = (id, body) =>
    Effect.flatMap(
      core.signer,
      (signing) =>
        core.update(id, (subscription, now): Effect.Effect<Decision<ClaimResult>, Failure> =>
          Effect.map(claimed(subscription, body.worker, now), ({ next, tails }) => {
            const wake = next.wake!
            return {
              next,
              result: {
                wake_id: wake.id,
                generation: next.generation,
                token: signing.issue({ sub: id, gen: next.generation, wake: wake.id }),
                streams: infos(next.links, tails),
                lease_ttl_ms: next.leaseTtlMs
              }
            }
          }))
    )

  return { callback: acknowledge("webhook"), ack: acknowledge("pull-wake"), release, claim }
}

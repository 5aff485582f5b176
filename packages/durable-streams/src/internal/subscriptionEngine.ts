/**
 * The subscription engine: what the subscription APIs do to the records of the
 * `DurableSubscriptions` store. Every change is decided over a loaded record and
 * saved against its version (decided again when another server saved in between), so
 * a wake is issued once whichever server sees the append first, and a stale callback
 * is fenced off everywhere.
 *
 * - An append to a stream that a subscription matches (by pattern or by name) links
 *   it (a new stream before its first entry) and, when the subscription is idle and
 *   has entries past its cursors, issues a wake: a new generation and wake id, the
 *   tails as they are, a lease of `lease_ttl_ms`.
 * - A webhook wake is posted, signed, by the server that issued it; a failed post is
 *   tried again after 1 s, 2 s, 4 s ... up to 60 s (20% jitter), as long as the
 *   subscription lives and the wake is current, with the subscription's status
 *   `failed` meanwhile; its lease is kept past the next attempt, so the wake is not
 *   issued again while the receiver is down. `{"done": true}` in the reply
 *   acknowledges the tails the wake carried.
 * - A pull-wake wake is an event appended to the subscription's wake stream; a worker
 *   claims the subscription, and holds it for a lease renewed by each ack.
 * - A lease that ends (the worker or the posting server gone) ends its wake; the
 *   sweep, every `sweepMs` on every server, issues a new one if work is pending.
 *
 * Every wait is on Effect's `Clock`.
 *
 * @internal
 */
import type { RedisError } from "@sluice/redis"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import type * as HttpClient from "effect/http/HttpClient"
import type * as Scope from "effect/Scope"
import type * as DurableStore from "../DurableStore.js"
import type * as DurableSubscriptions from "../DurableSubscriptions.js"
import * as LeaseSweep from "./leaseSweep.js"
import * as NotifyBatches from "./notifyBatches.js"
import * as Config from "./subscriptionConfig.js"
import * as Core from "./subscriptionCore.js"
import type { Signer } from "./subscriptionSigning.js"
import type { WebhookPolicy } from "./subscriptionWire.js"
import * as WakeClaims from "./wakeClaims.js"
import * as WakeIssuing from "./wakeIssuing.js"
import * as WebhookDelivery from "./webhookDelivery.js"

/**
 * How the engine runs: the webhook URL policy (and how a webhook host's addresses are
 * found, to refuse a public name that resolves to a private address), how often
 * leases are checked, the backoff of failed webhook posts, and how long one post may
 * take.
 *
 * @internal
 */
export interface EngineOptions extends WebhookDelivery.DeliveryOptions {
  readonly policy: WebhookPolicy
  readonly sweepMs: number
  /** The most subscriptions one subscriber (a caller's key) holds. */
  readonly maxPerSubscriber: number
}

/** @internal */
export const defaultOptions: Omit<EngineOptions, "policy"> = {
  sweepMs: 1_000,
  maxPerSubscriber: Config.defaultMaxPerSubscriber,
  retryBaseMs: 1_000,
  retryMaxMs: 60_000,
  postTimeoutMs: 10_000
}

/** One stream of a wake: its cursor and tail. @internal */
export type StreamInfo = Core.StreamInfo

/** The answer of a callback or an ack. @internal */
export type AckResult = WakeClaims.AckResult

/** The answer of a claim. @internal */
export type ClaimResult = WakeClaims.ClaimResult

/**
 * The engine's operations.
 *
 * @internal
 */
export interface Engine extends Config.Config, WakeClaims.Claims {
  readonly signer: Effect.Effect<Signer, RedisError.RedisError>
  /**
   * After a commit to a stream (or its deletion): links it and issues wakes, in the
   * next batch (docs/http.md#subscription-limits); ends once that batch has run. Never
   * fails.
   */
  readonly notify: (name: string, deleted: boolean) => Effect.Effect<void>
  /** Ends the wakes whose lease has run out (and issues new ones for pending work). */
  readonly sweep: Effect.Effect<void, RedisError.RedisError>
}

/**
 * The engine over the stores, composed of its parts: the configuration, wake issuing,
 * webhook delivery (its posts run in the scope), the wake routes and the lease sweep
 * (run every `sweepMs` in the scope).
 *
 * @internal
 */
export const make = (
  store: DurableStore.DurableStoreService,
  subscriptions: DurableSubscriptions.DurableSubscriptionsService,
  options: EngineOptions
): Effect.Effect<Engine, never, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const core = yield* Core.make(store, subscriptions)
    const fibers = yield* FiberSet.make()
    // webhook posts and wake issuing call each other: a post that is done issues the next wake
    const late: { delivery?: WebhookDelivery.Delivery } = {}
    const wakes = WakeIssuing.make(core, (id, wakeId) =>
      Effect.suspend(() =>
        late.delivery === undefined
          ? Effect.void
          : Effect.asVoid(FiberSet.run(fibers, late.delivery.deliver(id, wakeId)))
      ))
    late.delivery = yield* WebhookDelivery.make(core, wakes, options)
    const sweep = LeaseSweep.sweep(core, wakes)
    yield* LeaseSweep.run(sweep, options.sweepMs)
    const tell = yield* NotifyBatches.make(wakes.changed)
    return {
      ...Config.make(core, options.policy, options.maxPerSubscriber),
      ...WakeClaims.make(core, wakes),
      signer: core.signer,
      notify: tell,
      sweep
    } satisfies Engine
  })

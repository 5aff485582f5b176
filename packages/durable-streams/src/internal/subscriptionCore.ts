/**
 * What every part of the subscription engine shares: the stores, the signer (made
 * once, from the key the store keeps), the tails of linked streams, and `update`,
 * which decides over a subscription's record and saves it against its version
 * (deciding again when another server saved in between).
 *
 * @internal
 */
import type { RedisError } from "@sluice/redis"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type { DurableRefusal } from "../DurableRefusal.js"
import type * as DurableStore from "../DurableStore.js"
import type * as DurableSubscriptions from "../DurableSubscriptions.js"
import * as Wire from "./durableWire.js"
import * as Index from "./subscriptionIndex.js"
import { generateKey, makeSigner, type Signer } from "./subscriptionSigning.js"
import { refusal, refuse } from "./subscriptionWire.js"

/** @internal */
export type Subscription = DurableSubscriptions.Subscription
/** @internal */
export type Link = DurableSubscriptions.Link
/** @internal */
export type Failure = DurableRefusal | RedisError.RedisError

/**
 * One stream of a wake: its cursor and tail.
 *
 * @internal
 */
export interface StreamInfo {
  readonly path: string
  readonly link_type: "glob" | "explicit"
  readonly acked_offset: string
  readonly tail_offset: string
  readonly has_pending: boolean
}

/**
 * What a decision over a record leads to: no change, or a record to save and what to
 * do once it is saved.
 *
 * @internal
 */
export interface Decision<A> {
  readonly next: Subscription | undefined
  readonly result: A
  readonly after?: Effect.Effect<void> | undefined
}

/**
 * No change to the record.
 *
 * @internal
 */
export const unchanged: Decision<void> = { next: undefined, result: undefined }

/** The refusal of a subscription that does not exist. @internal */
export const notFound = (id: string) => refusal(404, "SUBSCRIPTION_NOT_FOUND", `no subscription ${JSON.stringify(id)}`)

/**
 * The stream infos of links over the tails.
 *
 * @internal
 */
export const infos = (links: ReadonlyArray<Link>, tails: ReadonlyMap<string, string>): Array<StreamInfo> =>
  links.map((link) => {
    const tail = tails.get(link.path) ?? link.acked
    return {
      path: link.path,
      link_type: link.explicit ? "explicit" : "glob",
      acked_offset: link.acked,
      tail_offset: tail,
      has_pending: tail > link.acked
    }
  })

/** Whether a link has entries past its cursor. @internal */
export const pending = (links: ReadonlyArray<Link>, tails: ReadonlyMap<string, string>) =>
  links.some((link) => (tails.get(link.path) ?? link.acked) > link.acked)

/** The first link with entries past its cursor (`""`: none). @internal */
export const firstPending = (links: ReadonlyArray<Link>, tails: ReadonlyMap<string, string>): string =>
  links.find((link) => (tails.get(link.path) ?? link.acked) > link.acked)?.path ?? ""

/**
 * The links with `path` linked by `kind` (a new link starts at `acked`).
 *
 * @internal
 */
export const linkAt = (
  links: ReadonlyArray<Link>,
  path: string,
  kind: "glob" | "explicit",
  acked: string
): ReadonlyArray<Link> => {
  const existing = links.find((link) => link.path === path)
  if (existing !== undefined) {
    return existing[kind] ? links : links.map((link) => link === existing ? { ...link, [kind]: true } : link)
  }
  return [...links, { path, glob: kind === "glob", explicit: kind === "explicit", acked }]
}

/**
 * The engine's shared parts.
 *
 * @internal
 */
export interface Core {
  readonly store: DurableStore.DurableStoreService
  readonly subscriptions: DurableSubscriptions.DurableSubscriptionsService
  /** Every subscription's summary, kept per record version (`update` tells it what it saved). */
  readonly index: Index.Index
  readonly signer: Effect.Effect<Signer, RedisError.RedisError>
  readonly tailOf: (path: string) => Effect.Effect<string, RedisError.RedisError>
  readonly tailsOf: (links: ReadonlyArray<Link>) => Effect.Effect<ReadonlyMap<string, string>, RedisError.RedisError>
  readonly update: <A>(
    id: string,
    decide: (subscription: Subscription, now: number) => Effect.Effect<Decision<A>, Failure>
  ) => Effect.Effect<A, Failure>
}

// The signer, made once from the key the store keeps (or a new one it takes).
const cachedSigner = (subscriptions: DurableSubscriptions.DurableSubscriptionsService) =>
  Effect.map(Ref.make(Option.none<Signer>()), (cache): Effect.Effect<Signer, RedisError.RedisError> =>
    Effect.flatMap(
      Ref.get(cache),
      Option.match({
        onSome: Effect.succeed,
        onNone: () =>
          Effect.tap(
            Effect.map(subscriptions.signingKey(generateKey()), makeSigner),
            (made) => Ref.set(cache, Option.some(made))
          )
      })
    ))

/**
 * The shared parts over the stores.
 *
 * @internal
 */
export const make = (
  store: DurableStore.DurableStoreService,
  subscriptions: DurableSubscriptions.DurableSubscriptionsService
): Effect.Effect<Core> =>
  Effect.map(Effect.all([cachedSigner(subscriptions), Index.make(subscriptions)]), ([signer, index]) => {
    const tailOf = (path: string) =>
      Effect.map(
        store.load(path),
        Option.match({ onNone: () => Wire.startOffset, onSome: (state) => Wire.offsetOf(state.tail) })
      )
    const tailsOf = (links: ReadonlyArray<Link>) =>
      Effect.map(
        Effect.forEach(links, (link) => Effect.map(tailOf(link.path), (tail) => [link.path, tail] as const), {
          concurrency: 8
        }),
        (pairs): ReadonlyMap<string, string> => new Map(pairs)
      )
    const update = <A>(
      id: string,
      decide: (subscription: Subscription, now: number) => Effect.Effect<Decision<A>, Failure>
    ): Effect.Effect<A, Failure> =>
      Effect.gen(function*() {
        for (let attempt = 0; attempt < 100; attempt++) {
          const loaded = yield* subscriptions.load(id)
          if (Option.isNone(loaded)) return yield* Effect.fail(notFound(id))
          const decision = yield* decide(loaded.value.subscription, yield* Clock.currentTimeMillis)
          if (decision.next === undefined) return decision.result
          if (yield* subscriptions.save(decision.next, loaded.value.version)) {
            index.saved(decision.next, loaded.value.version + 1)
            if (decision.after !== undefined) yield* decision.after
            return decision.result
          }
        }
        return yield* refuse(503, "UNAVAILABLE", "too many concurrent changes to the subscription, try again")
      })
    return { store, subscriptions, index, signer, tailOf, tailsOf, update }
  })

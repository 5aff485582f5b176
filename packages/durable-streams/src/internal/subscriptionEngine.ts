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
import { Backoff, SchemaDecode } from "@sluice/core"
import type { RedisError } from "@sluice/redis"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Struct from "effect/Struct"
import { randomBytes } from "node:crypto"
import { lookup as dnsLookup } from "node:dns/promises"
import type * as DurableStore from "../DurableStore.js"
import type * as DurableSubscriptions from "../DurableSubscriptions.js"
import * as Wire from "./durableWire.js"
import * as Write from "./durableWrite.js"
import { generateKey, makeSigner, type Signer } from "./subscriptionSigning.js"
import {
  AckBody,
  ClaimBody,
  CreateBody,
  globMatches,
  isReserved,
  leaseTtl,
  refuse,
  SubscriptionRefusal,
  type WebhookPolicy,
  webhookUrlProblem
} from "./subscriptionWire.js"
import { addressRefusal, webhookTarget } from "./webhookAddress.js"

type Subscription = DurableSubscriptions.Subscription
type Link = DurableSubscriptions.Link
type Failure = SubscriptionRefusal | RedisError.RedisError

// The addresses a webhook's name resolves to are checked without the loopback
// exception of an insecure-local server (its receivers are named `localhost`).
const strictAddresses = { loopbackHttp: false } as const

/**
 * How the engine runs: the webhook URL policy (and how a webhook host's addresses are
 * found, to refuse a public name that resolves to a private address), how often
 * leases are checked, the backoff of failed webhook posts, and how long one post may
 * take.
 *
 * @internal
 */
export interface EngineOptions {
  readonly policy: WebhookPolicy
  /** The addresses of a host name (DNS, by default). */
  readonly lookup?: ((host: string) => Effect.Effect<ReadonlyArray<string>, Error>) | undefined
  readonly sweepMs: number
  readonly retryBaseMs: number
  readonly retryMaxMs: number
  readonly postTimeoutMs: number
}

/** @internal */
export const defaultOptions: Omit<EngineOptions, "policy"> = {
  sweepMs: 1_000,
  retryBaseMs: 1_000,
  retryMaxMs: 60_000,
  postTimeoutMs: 10_000
}

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
  readonly streams: ReadonlyArray<StreamInfo>
  readonly lease_ttl_ms: number
}

/**
 * The engine's operations.
 *
 * @internal
 */
export interface Engine {
  readonly signer: Effect.Effect<Signer, RedisError.RedisError>
  readonly create: (
    id: string,
    body: typeof CreateBody.Type,
    baseUrl: string
  ) => Effect.Effect<{ readonly created: boolean; readonly subscription: Subscription }, Failure>
  readonly get: (id: string) => Effect.Effect<Subscription, Failure>
  readonly remove: (id: string) => Effect.Effect<void, Failure>
  readonly addStreams: (id: string, streams: ReadonlyArray<string>) => Effect.Effect<void, Failure>
  readonly removeStream: (id: string, path: string) => Effect.Effect<void, Failure>
  readonly callback: (id: string, token: string, body: typeof AckBody.Type) => Effect.Effect<AckResult, Failure>
  readonly ack: (id: string, token: string, body: typeof AckBody.Type) => Effect.Effect<AckResult, Failure>
  readonly release: (id: string, token: string, body: typeof AckBody.Type) => Effect.Effect<void, Failure>
  readonly claim: (id: string, body: typeof ClaimBody.Type) => Effect.Effect<ClaimResult, Failure>
  /** After a commit to a stream (or its deletion): links it and issues wakes. Never fails. */
  readonly notify: (name: string, deleted: boolean) => Effect.Effect<void>
  /** Ends the wakes whose lease has run out (and issues new ones for pending work). */
  readonly sweep: Effect.Effect<void, RedisError.RedisError>
}

const notFound = (id: string) =>
  new SubscriptionRefusal(404, "SUBSCRIPTION_NOT_FOUND", `no subscription ${JSON.stringify(id)}`)

/**
 * What a decision over a record leads to: no change, or a record to save and what to
 * do once it is saved.
 *
 * @internal
 */
interface Decision<A> {
  readonly next: Subscription | undefined
  readonly result: A
  readonly after?: Effect.Effect<void> | undefined
}

const WebhookReply = Schema.fromJsonString(Schema.Struct({ done: Schema.optional(Schema.Unknown) }))
const decodeReply = SchemaDecode.decodeUnknownResult(WebhookReply)

const configHash = (body: typeof CreateBody.Type): string =>
  JSON.stringify([
    body.type,
    body.pattern ?? null,
    [...new Set(body.streams ?? [])].sort(),
    body.webhook?.url ?? null,
    body.wake_stream ?? null,
    body.lease_ttl_ms ?? leaseTtl.default,
    body.description ?? null
  ])

/**
 * The engine over the stores; its webhook posts and sweep run in the scope.
 *
 * @internal
 */
export const make = (
  store: DurableStore.DurableStoreService,
  subscriptions: DurableSubscriptions.DurableSubscriptionsService,
  options: EngineOptions
): Effect.Effect<Engine, never, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const fibers = yield* FiberSet.make()
    const cachedSigner = yield* Ref.make(Option.none<Signer>())
    const signer: Effect.Effect<Signer, RedisError.RedisError> = Effect.flatMap(
      Ref.get(cachedSigner),
      Option.match({
        onSome: Effect.succeed,
        onNone: () =>
          Effect.tap(
            Effect.map(subscriptions.signingKey(generateKey()), makeSigner),
            (made) => Ref.set(cachedSigner, Option.some(made))
          )
      })
    )

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
        (pairs) => new Map(pairs)
      )
    const infos = (links: ReadonlyArray<Link>, tails: ReadonlyMap<string, string>): Array<StreamInfo> =>
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
    const pending = (links: ReadonlyArray<Link>, tails: ReadonlyMap<string, string>) =>
      links.some((link) => (tails.get(link.path) ?? link.acked) > link.acked)

    // Decides over the record and saves, again while other servers save in between.
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
            if (decision.after !== undefined) yield* decision.after
            return decision.result
          }
        }
        return yield* refuse(503, "UNAVAILABLE", "too many concurrent changes to the subscription, try again")
      })

    // A new wake over the tails: the next generation, held by `holder` when a worker
    // claims it; a webhook wake's lease starts now, an unclaimed pull-wake's at its claim.
    const issueWake = (
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

    // What follows a saved wake: the webhook post, or the wake stream's event.
    const announce = (saved: Subscription, trigger: string): Effect.Effect<void> => {
      const wake = saved.wake
      if (wake === undefined || wake.holder !== undefined) return Effect.void
      if (saved.type === "webhook") return Effect.asVoid(FiberSet.run(fibers, deliver(saved.id, wake.id)))
      const wakeStream = saved.wakeStream
      if (wakeStream === undefined) return Effect.void
      return Effect.gen(function*() {
        const event = {
          type: "wake",
          subscription_id: saved.id,
          stream: trigger,
          generation: saved.generation,
          ts: yield* Clock.currentTimeMillis
        }
        yield* Write.append(store, wakeStream, {
          contentType: "application/json",
          seq: undefined,
          close: false,
          producer: undefined,
          body: new TextEncoder().encode(JSON.stringify(event))
        })
      }).pipe(
        Effect.catch((error) =>
          Effect.logWarning(
            `subscription ${saved.id}: the wake event was not written to ${wakeStream}: ${error.message}`
          )
        )
      )
    }

    const firstPending = (links: ReadonlyArray<Link>, tails: ReadonlyMap<string, string>): string =>
      links.find((link) => (tails.get(link.path) ?? link.acked) > link.acked)?.path ?? ""

    // Ends the current wake, and issues the next when work is pending.
    const endWake = (subscription: Subscription, links: ReadonlyArray<Link>, now: number) =>
      Effect.map(tailsOf(links), (tails): Decision<boolean> => {
        const idle: Subscription = { ...Struct.omit(subscription, ["wake"]), links }
        if (!pending(links, tails)) return { next: idle, result: false }
        const next = issueWake(idle, links, tails, now)
        return { next, result: true, after: announce(next, firstPending(links, tails)) }
      })

    const notification = (subscription: Subscription, signing: Signer): string => {
      const wake = subscription.wake!
      const tails = new Map(wake.snapshot.map((entry) => [entry.path, entry.tail]))
      return JSON.stringify({
        subscription_id: subscription.id,
        wake_id: wake.id,
        generation: subscription.generation,
        streams: infos(subscription.links, tails),
        callback_url: `${subscription.baseUrl}/v1/stream/__ds/subscriptions/${
          encodeURIComponent(subscription.id)
        }/callback`,
        callback_token: signing.issue({ sub: subscription.id, gen: subscription.generation, wake: wake.id })
      })
    }

    // One post of a notification: whether the receiver said it is done, or why it failed.
    const lookup = options.lookup ?? ((host: string) =>
      Effect.tryPromise({
        try: () => dnsLookup(host, { all: true }),
        catch: (cause) => cause instanceof Error ? cause : new Error(String(cause))
      }).pipe(Effect.map((addresses) => addresses.map((entry) => entry.address))))
    // A name that resolves to a private address is refused, post by post, and so is an
    // IP address in any form that reaches one (a record may predate a check).
    const reachable = (url: string): Effect.Effect<Result.Result<void, string>> => {
      const target = webhookTarget(url, options.policy)
      if (target._tag === "Refused") return Effect.succeed(Result.fail(target.reason))
      if (target._tag === "Allowed") return Effect.succeed(Result.void)
      const host = target.host
      return lookup(host).pipe(
        Effect.map((addresses): Result.Result<void, string> =>
          addresses.some((address) => addressRefusal(address, strictAddresses) !== undefined)
            ? Result.fail(`${host} resolves to a private, loopback or link-local address`)
            : Result.void
        ),
        Effect.catch((error) => Effect.succeed(Result.fail(`${host} does not resolve: ${error.message}`)))
      )
    }

    const post = (url: string, body: string, signature: string): Effect.Effect<Result.Result<boolean, string>> => {
      // anything but 2xx fails the post, a redirect too (the client follows none: it
      // could lead anywhere)
      const answered = (response: HttpClientResponse.HttpClientResponse) =>
        response.status >= 200 && response.status < 300
          ? Effect.map(
            Effect.orElseSucceed(response.text, () => ""),
            (text): Result.Result<boolean, string> =>
              Result.succeed(Result.getOrUndefined(decodeReply(text))?.done === true)
          )
          : Effect.succeed(Result.fail(`the receiver answered ${response.status}`))
      const send = client.execute(
        HttpClientRequest.post(url).pipe(
          HttpClientRequest.setHeader("webhook-signature", signature),
          HttpClientRequest.bodyText(body, "application/json")
        )
      ).pipe(
        Effect.flatMap(answered),
        Effect.scoped,
        Effect.timeoutOrElse({
          duration: options.postTimeoutMs,
          orElse: () =>
            Effect.succeed<Result.Result<boolean, string>>(
              Result.fail(`no answer within ${options.postTimeoutMs} ms`)
            )
        }),
        Effect.catch((error) => Effect.succeed(Result.fail(error.message)))
      )
      return Effect.flatMap(reachable(url), (checked) =>
        Result.isFailure(checked) ? Effect.succeed(Result.fail(checked.failure)) : send)
    }

    // Posts the wake `wakeId` until the receiver takes it, while it is the current wake;
    // a `{"done": true}` reply acknowledges its tails and goes on with the next wake.
    const deliver = (id: string, first: string): Effect.Effect<void> =>
      Effect.gen(function*() {
        let wakeId = first
        while (true) {
          const loaded = yield* subscriptions.load(id)
          if (Option.isNone(loaded)) {
            return
          }
          const subscription = loaded.value.subscription
          const url = subscription.webhookUrl
          if (subscription.wake?.id !== wakeId || url === undefined) {
            return
          }
          const now = yield* Clock.currentTimeMillis
          if (subscription.nextAttemptAt !== undefined && subscription.nextAttemptAt > now) {
            yield* Effect.sleep(subscription.nextAttemptAt - now)
            continue
          }
          const signing = yield* signer
          const body = notification(subscription, signing)
          const outcome = yield* post(url, body, signing.signature(body, now))
          const jitter = yield* Random.nextBetween(0.8, 1.2)
          const next = yield* update(id, (current, at): Effect.Effect<Decision<string | undefined>, Failure> => {
            const wake = current.wake
            if (wake?.id !== wakeId) {
              return Effect.succeed({ next: undefined, result: undefined })
            }
            if (Result.isFailure(outcome)) {
              const delay = Math.round(
                Backoff.delayMs(current.failures, options.retryBaseMs, options.retryMaxMs) * jitter
              )
              return Effect.as(
                Effect.logWarning(
                  `subscription ${id}: webhook delivery failed (${outcome.failure}), again in ${delay} ms`
                ),
                {
                  next: {
                    ...current,
                    failures: current.failures + 1,
                    nextAttemptAt: at + delay,
                    wake: { ...wake, leaseUntil: Math.max(wake.leaseUntil, at + delay + current.leaseTtlMs) }
                  },
                  result: wakeId
                }
              )
            }
            const healthy: Subscription = { ...Struct.omit(current, ["nextAttemptAt"]), failures: 0 }
            if (!outcome.success) {
              return Effect.succeed({ next: healthy, result: undefined })
            }
            const acked = current.links.map((link) => {
              const tail = wake.snapshot.find((entry) =>
                entry.path === link.path
              )?.tail
              return tail !== undefined && tail > link.acked ? { ...link, acked: tail } : link
            })
            return Effect.map(endWake(healthy, acked, at), (decision) => ({
              next: decision.next,
              result: decision.next?.wake?.id,
              after: undefined
            }))
          })
          if (next === undefined) return
          wakeId = next
        }
      }).pipe(
        Effect.catch((error) =>
          Effect.logWarning(`subscription ${id}: webhook delivery stopped (${error.message}); its lease will end it`)
        )
      )

    const tokenClaims = (id: string, token: string) =>
      Effect.flatMap(signer, (signing) => {
        const claims = signing.verify(token)
        return Option.isSome(claims) && claims.value.sub === id
          ? Effect.succeed(claims.value)
          : refuse(401, "TOKEN_INVALID", "the bearer token is not a token of this subscription's wakes")
      })

    const fenced = (subscription: Subscription, gen: number, body: typeof AckBody.Type) =>
      subscription.wake === undefined || gen !== subscription.generation ||
        body.generation !== subscription.generation || body.wake_id !== subscription.wake.id
        ? refuse(409, "FENCED", `wake ${body.wake_id} of generation ${body.generation} is not the current wake`)
        : Effect.void

    const applyAcks = (subscription: Subscription, body: typeof AckBody.Type) =>
      Effect.gen(function*() {
        const links = [...subscription.links]
        for (const [index, ack] of (body.acks ?? []).entries()) {
          const path = ack.stream ?? ack.path
          if (path === undefined) return yield* refuse(400, "INVALID_REQUEST", `acks.${index}.stream is missing`)
          const at = links.findIndex((link) => link.path === path)
          if (at < 0) {
            return yield* refuse(409, "INVALID_OFFSET", `${path} is not a stream of subscription ${subscription.id}`)
          }
          if (Option.isNone(Wire.entryIdOf(ack.offset))) {
            return yield* refuse(
              400,
              "INVALID_REQUEST",
              `acks.${index}.offset ${JSON.stringify(ack.offset.slice(0, 64))} is not an offset`
            )
          }
          const offset = Wire.offsetOf(Option.getOrThrow(Wire.entryIdOf(ack.offset)))
          if (offset < links[at]!.acked) {
            return yield* refuse(409, "INVALID_OFFSET", `acks.${index}.offset is before the acknowledged offset`)
          }
          if (offset > (yield* tailOf(path))) {
            return yield* refuse(409, "INVALID_OFFSET", `acks.${index}.offset is past the tail of ${path}`)
          }
          links[at] = { ...links[at]!, acked: offset }
        }
        return links
      })

    // A callback or an ack: acknowledges, and renews the lease or (done) ends the wake.
    const acknowledge = (kind: Subscription["type"]) => (id: string, token: string, body: typeof AckBody.Type) =>
      Effect.flatMap(tokenClaims(id, token), (claims) =>
        update(id, (subscription, now): Effect.Effect<Decision<AckResult>, Failure> =>
          Effect.gen(function*() {
            if (subscription.type !== kind) {
              return yield* refuse(400, "INVALID_REQUEST", `subscription ${id} is not a ${kind} subscription`)
            }
            yield* fenced(subscription, claims.gen, body)
            const links = yield* applyAcks(subscription, body)
            if (body.done === true) {
              const decision = yield* endWake(subscription, links, now)
              return { ...decision, result: { ok: true, next_wake: decision.result } }
            }
            const wake = subscription.wake!
            return {
              next: { ...subscription, links, wake: { ...wake, leaseUntil: now + subscription.leaseTtlMs } },
              result: { ok: true, next_wake: false }
            }
          })))

    const linkAt = (links: ReadonlyArray<Link>, path: string, kind: "glob" | "explicit", acked: string) => {
      const existing = links.find((link) =>
        link.path === path
      )
      if (existing !== undefined) {
        return existing[kind] ? links : links.map((link) => link === existing ? { ...link, [kind]: true } : link)
      }
      return [...links, { path, glob: kind === "glob", explicit: kind === "explicit", acked }]
    }

    const streamLinks = (streams: ReadonlyArray<string>, links: ReadonlyArray<Link>) =>
      Effect.reduce(streams, () => links, (acc, path) =>
        acc.some((link) => link.path === path && link.explicit)
          ? Effect.succeed(acc)
          : Effect.map(tailOf(path), (tail) => linkAt(acc, path, "explicit", tail)))

    const create: Engine["create"] = (id, body, baseUrl) =>
      Effect.gen(function*() {
        const hash = configHash(body)
        for (let attempt = 0; attempt < 100; attempt++) {
          const existing = yield* subscriptions.load(id)
          if (Option.isSome(existing)) {
            if (existing.value.subscription.configHash !== hash) {
              return yield* refuse(
                409,
                "SUBSCRIPTION_ALREADY_EXISTS",
                `subscription ${JSON.stringify(id)} exists with another configuration`
              )
            }
            return { created: false, subscription: existing.value.subscription }
          }
          if (body.pattern === undefined && (body.streams ?? []).length === 0) {
            return yield* refuse(400, "INVALID_REQUEST", "pattern or streams is required")
          }
          if (body.type === "webhook") {
            if (body.webhook === undefined) return yield* refuse(400, "INVALID_REQUEST", "webhook.url is required")
            const problem = webhookUrlProblem(body.webhook.url, options.policy)
            if (problem !== undefined) return yield* refuse(400, "WEBHOOK_URL_REJECTED", problem)
            // every form of a local host: trailing dots, NAT64, 6to4, Teredo, mapped, ...
            const target = webhookTarget(body.webhook.url, options.policy)
            if (target._tag === "Refused") {
              return yield* refuse(
                400,
                "WEBHOOK_URL_REJECTED",
                `webhook.url must not target a private, loopback or link-local host (${target.reason})`
              )
            }
          }
          if (body.type === "pull-wake" && body.wake_stream === undefined) {
            return yield* refuse(400, "INVALID_REQUEST", "wake_stream is required for a pull-wake subscription")
          }
          let links = yield* streamLinks(body.streams ?? [], [])
          const pattern = body.pattern
          if (pattern !== undefined) {
            const names = (yield* subscriptions.streamNames).filter((name) =>
              !isReserved(name) && globMatches(pattern, name)
            )
            for (const name of names) {
              const state = yield* store.load(name)
              if (Option.isSome(state)) links = linkAt(links, name, "glob", Wire.offsetOf(state.value.tail))
            }
          }
          const subscription: Subscription = {
            id,
            type: body.type,
            ...(pattern === undefined ? {} : { pattern }),
            ...(body.webhook === undefined ? {} : { webhookUrl: body.webhook.url }),
            ...(body.wake_stream === undefined ? {} : { wakeStream: body.wake_stream }),
            leaseTtlMs: body.lease_ttl_ms ?? leaseTtl.default,
            ...(body.description === undefined ? {} : { description: body.description }),
            configHash: hash,
            createdAt: yield* Clock.currentTimeMillis,
            baseUrl,
            links,
            generation: 0,
            failures: 0
          }
          if (yield* subscriptions.save(subscription, 0)) return { created: true, subscription }
        }
        return yield* refuse(503, "UNAVAILABLE", "too many concurrent changes to the subscription, try again")
      })

    const notify = (name: string, deleted: boolean): Effect.Effect<void> =>
      Effect.gen(function*() {
        if (isReserved(name)) return
        yield* subscriptions.observe(name, !deleted)
        const ids = yield* subscriptions.ids
        if (ids.length === 0) return
        const state = yield* store.load(name)
        yield* Effect.forEach(ids, (id) =>
          update(id, (subscription, now): Effect.Effect<Decision<void>, Failure> => {
            const linked = subscription.links.find((link) => link.path === name)
            const matches = subscription.pattern !== undefined && globMatches(subscription.pattern, name)
            if (Option.isNone(state)) {
              // a deleted stream: a glob link goes, an explicit one waits for the stream again
              if (linked === undefined) return Effect.succeed({ next: undefined, result: undefined })
              const links = linked.explicit
                ? subscription.links.map((link) =>
                  link === linked ? { ...link, glob: false, acked: Wire.startOffset } : link
                )
                : subscription.links.filter((link) => link !== linked)
              return Effect.succeed({ next: { ...subscription, links }, result: undefined })
            }
            if (linked === undefined && !matches) return Effect.succeed({ next: undefined, result: undefined })
            const links = matches ? linkAt(subscription.links, name, "glob", Wire.startOffset) : subscription.links
            if (subscription.wake !== undefined) {
              return Effect.succeed({
                next: links === subscription.links ? undefined : { ...subscription, links },
                result: undefined
              })
            }
            return Effect.map(tailsOf(links), (tails): Decision<void> => {
              if (!pending(links, tails)) {
                return {
                  next: links === subscription.links ? undefined : { ...subscription, links },
                  result: undefined
                }
              }
              const next = issueWake(subscription, links, tails, now)
              return { next, result: undefined, after: announce(next, name) }
            })
          }).pipe(Effect.catchIf((error) => error instanceof SubscriptionRefusal, () => Effect.void)), {
          discard: true
        })
      }).pipe(
        Effect.catch((error) => Effect.logWarning(`subscriptions were not told of ${name}: ${error.message}`))
      )

    const sweep: Engine["sweep"] = Effect.flatMap(subscriptions.ids, (ids) =>
      Effect.forEach(ids, (id) =>
        update(id, (subscription, now): Effect.Effect<Decision<void>, Failure> =>
          subscription.wake === undefined || subscription.wake.leaseUntil > now
            ? Effect.succeed({ next: undefined, result: undefined })
            : Effect.map(endWake(subscription, subscription.links, now), (decision) => ({
              ...decision,
              result: undefined
            }))).pipe(
            Effect.catchIf(
              (error): error is SubscriptionRefusal =>
                error instanceof SubscriptionRefusal,
              () =>
                Effect.void
            )
          ), { discard: true }))

    yield* Effect.forkScoped(
      sweep.pipe(
        Effect.catch((error) =>
          Effect.logWarning(`subscription leases were not checked: ${error.message}`)
        ),
        Effect.repeat(Schedule.spaced(options.sweepMs))
      )
    )

    return {
      signer,
      create,
      get: (id) =>
        Effect.flatMap(
          subscriptions.load(id),
          Option.match({
            onNone: () =>
              Effect.fail(notFound(id)),
            onSome: (loaded) => Effect.succeed(loaded.subscription)
          })
        ),
      remove: (id) =>
        Effect.flatMap(subscriptions.remove(id), (existed) => existed ? Effect.void : Effect.fail(notFound(id))),
      addStreams: (id, streams) =>
        update(id, (subscription) =>
          Effect.map(streamLinks(streams, subscription.links), (links) => ({
            next: links === subscription.links ? undefined : { ...subscription, links },
            result: undefined
          }))),
      removeStream: (id, path) =>
        update(id, (subscription) => {
          const linked = subscription.links.find((link) => link.path === path && link.explicit)
          if (linked === undefined) return Effect.succeed({ next: undefined, result: undefined })
          const links = linked.glob
            ? subscription.links.map((link) => link === linked ? { ...link, explicit: false } : link)
            : subscription.links.filter((link) => link !== linked)
          return Effect.succeed({ next: { ...subscription, links }, result: undefined })
        }),
      callback: acknowledge("webhook"),
      ack: acknowledge("pull-wake"),
      release: (id, token, body) =>
        Effect.flatMap(tokenClaims(id, token), (claims) =>
          update(id, (subscription, now): Effect.Effect<Decision<void>, Failure> =>
            Effect.gen(function*() {
              if (subscription.type !== "pull-wake") {
                return yield* refuse(400, "INVALID_REQUEST", `subscription ${id} is not a pull-wake subscription`)
              }
              yield* fenced(subscription, claims.gen, body)
              return { ...(yield* endWake(subscription, subscription.links, now)), result: undefined }
            }))),
      claim: (id, body) =>
        Effect.flatMap(signer, (signing) =>
          update(id, (subscription, now): Effect.Effect<Decision<ClaimResult>, Failure> =>
            Effect.gen(function*() {
              if (subscription.type !== "pull-wake") {
                return yield* refuse(400, "INVALID_REQUEST", `subscription ${id} is not a pull-wake subscription`)
              }
              const wake = subscription.wake
              if (wake?.holder !== undefined && wake.leaseUntil > now) {
                return yield* refuse(409, "ALREADY_CLAIMED", `worker ${wake.holder} holds subscription ${id}`, {
                  current_holder: wake.holder,
                  generation: subscription.generation
                })
              }
              const tails = yield* tailsOf(subscription.links)
              if (wake === undefined && !pending(subscription.links, tails)) {
                return yield* refuse(409, "NO_PENDING_WORK", `subscription ${id} has no pending work`)
              }
              const next: Subscription = wake === undefined || wake.holder !== undefined
                ? issueWake(subscription, subscription.links, tails, now, body.worker)
                : { ...subscription, wake: { ...wake, holder: body.worker, leaseUntil: now + subscription.leaseTtlMs } }
              const claimed = next.wake!
              return {
                next,
                result: {
                  wake_id: claimed.id,
                  generation: next.generation,
                  token: signing.issue({ sub: id, gen: next.generation, wake: claimed.id }),
                  streams: infos(next.links, tails),
                  lease_ttl_ms: next.leaseTtlMs
                }
              }
            }))),
      notify,
      sweep
    } satisfies Engine
  })

/**
 * Webhook delivery: a webhook wake is posted, signed, by the server that issued it; a
 * failed post is tried again after 1 s, 2 s, 4 s ... up to the most (20% jitter), as
 * long as the subscription lives and the wake is current, with the subscription's
 * status `failed` meanwhile; its lease is kept past the next attempt, so the wake is
 * not issued again while the receiver is down. `{"done": true}` in the reply
 * acknowledges the tails the wake carried (and the next wake, if any, is posted); a
 * reply body past `replyLimitBytes` (64 KiB) is not read further and the post counts
 * as failed. Every post first checks the addresses the webhook's host resolves to.
 *
 * @internal
 */
import { Backoff, SchemaDecode } from "@sluice/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import { lookup as dnsLookup } from "node:dns/promises"
import { BodyTooLarge, collect } from "../RequestBody.js"
import { type Core, type Decision, type Failure, infos, type Subscription } from "./subscriptionCore.js"
import type { Signer } from "./subscriptionSigning.js"
import type { WebhookPolicy } from "./subscriptionWire.js"
import type { Wakes } from "./wakeIssuing.js"
import { addressRefusal, webhookTarget } from "./webhookAddress.js"

// The addresses a webhook's name resolves to are checked without the loopback
// exception of an insecure-local server (its receivers are named `localhost`).
const strictAddresses = { loopbackHttp: false } as const

const WebhookReply = Schema.fromJsonString(Schema.Struct({ done: Schema.optional(Schema.Unknown) }))
const decodeReply = SchemaDecode.decodeUnknownResult(WebhookReply)

/**
 * How posts go: the webhook URL policy, how a host's addresses are found (DNS by
 * default), the backoff of failed posts, and how long one post may take.
 *
 * @internal
 */
export interface DeliveryOptions {
  readonly policy: WebhookPolicy
  readonly lookup?: ((host: string) => Effect.Effect<ReadonlyArray<string>, Error>) | undefined
  readonly retryBaseMs: number
  readonly retryMaxMs: number
  readonly postTimeoutMs: number
}

const dns = (host: string) =>
  Effect.tryPromise({
    try: () => dnsLookup(host, { all: true }),
    catch: (cause) => cause instanceof Error ? cause : new Error(String(cause))
  }).pipe(Effect.map((addresses) => addresses.map((entry) => entry.address)))

// The body of a wake's post.
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

// A name that resolves to a private address is refused, post by post, and so is an
// IP address in any form that reaches one (a record may predate a check).
const reachable = (options: DeliveryOptions) => (url: string): Effect.Effect<Result.Result<void, string>> => {
  const target = webhookTarget(url, options.policy)
  if (target._tag === "Refused") return Effect.succeed(Result.fail(target.reason))
  if (target._tag === "Allowed") return Effect.succeed(Result.void)
  const host = target.host
  return (options.lookup ?? dns)(host).pipe(
    Effect.map((addresses): Result.Result<void, string> =>
      addresses.some((address) => addressRefusal(address, strictAddresses) !== undefined)
        ? Result.fail(`${host} resolves to a private, loopback or link-local address`)
        : Result.void
    ),
    Effect.catch((error) => Effect.succeed(Result.fail(`${host} does not resolve: ${error.message}`)))
  )
}

/**
 * The most of a receiver's reply that is read: `{"done": true}` is all it needs to say,
 * and a receiver that answers with more cannot make the server hold it.
 *
 * @internal
 */
export const replyLimitBytes = 64 * 1024

// Anything but 2xx fails the post, a redirect too (the client follows none: it could
// lead anywhere); a 2xx says whether the receiver is done. A reply body past the limit
// fails the post, unread past the limit; one that breaks off reads as not done.
const answered = (response: HttpClientResponse.HttpClientResponse) =>
  response.status >= 200 && response.status < 300
    ? collect(response.stream, replyLimitBytes).pipe(
      Effect.map((bytes): Result.Result<boolean, string> =>
        Result.succeed(Result.getOrUndefined(decodeReply(new TextDecoder().decode(bytes)))?.done === true)
      ),
      Effect.catch((error) =>
        Effect.succeed(
          error instanceof BodyTooLarge
            ? Result.fail(`the receiver's reply is larger than ${replyLimitBytes} bytes`)
            : Result.succeed(false)
        )
      )
    )
    : Effect.succeed(Result.fail(`the receiver answered ${response.status}`))

// One post of a notification: whether the receiver said it is done, or why it failed.
const post = (client: HttpClient.HttpClient, options: DeliveryOptions) => {
  const check = reachable(options)
  return (url: string, body: string, signature: string): Effect.Effect<Result.Result<boolean, string>> => {
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
          Effect.succeed<Result.Result<boolean, string>>(Result.fail(`no answer within ${options.postTimeoutMs} ms`))
      }),
      Effect.catch((error) => Effect.succeed(Result.fail(error.message)))
    )
    return Effect.flatMap(
      check(url),
      (checked) => Result.isFailure(checked) ? Effect.succeed(Result.fail(checked.failure)) : send
    )
  }
}

/**
 * Posts a webhook's wake until the receiver takes it, while it is the current wake.
 *
 * @internal
 */
export interface Delivery {
  readonly deliver: (id: string, wakeId: string) => Effect.Effect<void>
}

/**
 * The delivery of webhook wakes through the client.
 *
 * @internal
 */
export const make = (
  core: Core,
  wakes: Pick<Wakes, "endWake">,
  options: DeliveryOptions
): Effect.Effect<Delivery, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const send = post(yield* HttpClient.HttpClient, options)

    // The record after a post of the wake `wakeId`: the next attempt's time after a
    // failure; healthy after a success, the wake ended when the receiver is done. The
    // result is the wake to post next (none: stop).
    const settle = (wakeId: string, outcome: Result.Result<boolean, string>, jitter: number) =>
    (
      current: Subscription,
      at: number
    ): Effect.Effect<Decision<string | undefined>, Failure> => {
      const wake = current.wake
      if (wake?.id !== wakeId) return Effect.succeed({ next: undefined, result: undefined })
      if (Result.isFailure(outcome)) {
        const delay = Math.round(Backoff.delayMs(current.failures, options.retryBaseMs, options.retryMaxMs) * jitter)
        return Effect.as(
          Effect.logWarning(
            `subscription ${current.id}: webhook delivery failed (${outcome.failure}), again in ${delay} ms`
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
      if (!outcome.success) return Effect.succeed({ next: healthy, result: undefined })
      const acked = current.links.map((link) => {
        const tail = wake.snapshot.find((entry) => entry.path === link.path)?.tail
        return tail !== undefined && tail > link.acked ? { ...link, acked: tail } : link
      })
      return Effect.map(wakes.endWake(healthy, acked, at), (decision) => ({
        next: decision.next,
        result: decision.next?.wake?.id,
        after: undefined
      }))
    }

    // One attempt at the wake `wakeId`: the wake to post next (none: stop).
    const attempt = (id: string, wakeId: string) =>
      Effect.gen(function*() {
        const loaded = yield* core.subscriptions.load(id)
        if (Option.isNone(loaded)) return undefined
        const subscription = loaded.value.subscription
        const url = subscription.webhookUrl
        if (subscription.wake?.id !== wakeId || url === undefined) return undefined
        const now = yield* Clock.currentTimeMillis
        if (subscription.nextAttemptAt !== undefined && subscription.nextAttemptAt > now) {
          yield* Effect.sleep(subscription.nextAttemptAt - now)
          return wakeId
        }
        const signing = yield* core.signer
        const body = notification(subscription, signing)
        const outcome = yield* send(url, body, signing.signature(body, now))
        const jitter = yield* Random.nextBetween(0.8, 1.2)
        return yield* core.update(id, settle(wakeId, outcome, jitter))
      })

    const deliver = (id: string, first: string): Effect.Effect<void> =>
      Effect.gen(function*() {
        let wakeId: string | undefined = first
        while (wakeId !== undefined) wakeId = yield* attempt(id, wakeId)
      }).pipe(
        Effect.catch((error) =>
          Effect.logWarning(`subscription ${id}: webhook delivery stopped (${error.message}); its lease will end it`)
        )
      )

    return { deliver }
  })

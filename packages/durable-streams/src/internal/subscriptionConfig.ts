/**
 * A subscription's configuration: create (201, or 200 for the same configuration
 * again, 409 another, 429 past a limit), read, delete, link and unlink streams by name.
 * A new subscription links the streams it names and those its pattern matches, each
 * from its tail as it is then; it is counted under its creator's key (the routes'
 * `subscriber`), at most `maxPerSubscriber` a key, within the store's limit of all
 * (docs/http.md#subscription-limits).
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Wire from "./durableWire.js"
import { type Core, type Failure, type Link, linkAt, notFound, type Subscription } from "./subscriptionCore.js"
import {
  type CreateBody,
  globMatches,
  isReserved,
  leaseTtl,
  refuse,
  type WebhookPolicy,
  webhookUrlProblem
} from "./subscriptionWire.js"
import { webhookTarget } from "./webhookAddress.js"

type Create = typeof CreateBody.Type

/**
 * The configuration operations.
 *
 * @internal
 */
export interface Config {
  readonly create: (
    id: string,
    body: Create,
    baseUrl: string,
    subscriber?: string | undefined
  ) => Effect.Effect<{ readonly created: boolean; readonly subscription: Subscription }, Failure>
  readonly get: (id: string) => Effect.Effect<Subscription, Failure>
  readonly remove: (id: string) => Effect.Effect<void, Failure>
  readonly addStreams: (id: string, streams: ReadonlyArray<string>) => Effect.Effect<void, Failure>
  readonly removeStream: (id: string, path: string) => Effect.Effect<void, Failure>
}

/**
 * The most subscriptions one subscriber holds by default.
 *
 * @internal
 */
export const defaultMaxPerSubscriber = 100

const tooMany = (scope: "total" | "owner", limit: number) =>
  refuse(
    429,
    "TOO_MANY_SUBSCRIPTIONS",
    scope === "total"
      ? `the server holds ${limit} subscriptions, the most it keeps: delete one first`
      : `this caller holds ${limit} subscriptions, the most one may: delete one first`,
    { limit }
  )

const configHash = (body: Create): string =>
  JSON.stringify([
    body.type,
    body.pattern ?? null,
    [...new Set(body.streams ?? [])].sort(),
    body.webhook?.url ?? null,
    body.wake_stream ?? null,
    body.lease_ttl_ms ?? leaseTtl.default,
    body.description ?? null
  ])

// What a new subscription's body must hold: a pattern or streams, an acceptable
// webhook URL for a webhook, a wake stream for a pull-wake.
const checked = (body: Create, policy: WebhookPolicy): Effect.Effect<void, Failure> => {
  if (body.pattern === undefined && (body.streams ?? []).length === 0) {
    return refuse(400, "INVALID_REQUEST", "pattern or streams is required")
  }
  if (body.type === "webhook") {
    if (body.webhook === undefined) return refuse(400, "INVALID_REQUEST", "webhook.url is required")
    const problem = webhookUrlProblem(body.webhook.url, policy)
    if (problem !== undefined) return refuse(400, "WEBHOOK_URL_REJECTED", problem)
    // every form of a local host: trailing dots, NAT64, 6to4, Teredo, mapped, ...
    const target = webhookTarget(body.webhook.url, policy)
    if (target._tag === "Refused") {
      return refuse(
        400,
        "WEBHOOK_URL_REJECTED",
        `webhook.url must not target a private, loopback or link-local host (${target.reason})`
      )
    }
  }
  return body.type === "pull-wake" && body.wake_stream === undefined
    ? refuse(400, "INVALID_REQUEST", "wake_stream is required for a pull-wake subscription")
    : Effect.void
}

/**
 * The configuration operations over the shared parts, webhook URLs checked against
 * `policy`.
 *
 * @internal
 */
export const make = (core: Core, policy: WebhookPolicy, maxPerSubscriber = defaultMaxPerSubscriber): Config => {
  const streamLinks = (streams: ReadonlyArray<string>, links: ReadonlyArray<Link>) =>
    Effect.reduce(streams, () => links, (acc, path) =>
      acc.some((link) => link.path === path && link.explicit)
        ? Effect.succeed(acc)
        : Effect.map(core.tailOf(path), (tail) => linkAt(acc, path, "explicit", tail)))

  // The links of a new subscription: its streams, and the streams its pattern matches.
  const initialLinks = (body: Create) =>
    Effect.gen(function*() {
      let links = yield* streamLinks(body.streams ?? [], [])
      const pattern = body.pattern
      if (pattern === undefined) return links
      const names = (yield* core.subscriptions.streamNames).filter((name) =>
        !isReserved(name) && globMatches(pattern, name)
      )
      for (const name of names) {
        const state = yield* core.store.load(name)
        if (Option.isSome(state)) links = linkAt(links, name, "glob", Wire.offsetOf(state.value.tail))
      }
      return links
    })

  const fresh = (id: string, body: Create, baseUrl: string, hash: string) =>
    Effect.gen(function*() {
      yield* checked(body, policy)
      const links = yield* initialLinks(body)
      return {
        id,
        type: body.type,
        ...(body.pattern === undefined ? {} : { pattern: body.pattern }),
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
      } satisfies Subscription
    })

  const create: Config["create"] = (id, body, baseUrl, subscriber) =>
    Effect.gen(function*() {
      const hash = configHash(body)
      for (let attempt = 0; attempt < 100; attempt++) {
        const existing = yield* core.subscriptions.load(id)
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
        const subscription = yield* fresh(id, body, baseUrl, hash)
        const inserted = yield* core.subscriptions.insert(
          subscription,
          subscriber === undefined ? undefined : { key: subscriber, max: maxPerSubscriber }
        )
        if (inserted._tag === "TooMany") return yield* tooMany(inserted.scope, inserted.limit)
        if (inserted._tag === "Inserted") {
          core.index.saved(subscription, 1)
          return { created: true, subscription }
        }
      }
      return yield* refuse(503, "UNAVAILABLE", "too many concurrent changes to the subscription, try again")
    })

  return {
    create,
    get: (id) =>
      Effect.flatMap(
        core.subscriptions.load(id),
        Option.match({
          onNone: () => Effect.fail(notFound(id)),
          onSome: (loaded) => Effect.succeed(loaded.subscription)
        })
      ),
    remove: (id) =>
      Effect.flatMap(core.subscriptions.remove(id), (existed) => existed ? Effect.void : Effect.fail(notFound(id))),
    addStreams: (id, streams) =>
      core.update(id, (subscription) =>
        Effect.map(streamLinks(streams, subscription.links), (links) => ({
          next: links === subscription.links ? undefined : { ...subscription, links },
          result: undefined
        }))),
    removeStream: (id, path) =>
      core.update(id, (subscription) => {
        const linked = subscription.links.find((link) => link.path === path && link.explicit)
        if (linked === undefined) return Effect.succeed({ next: undefined, result: undefined })
        const links = linked.glob
          ? subscription.links.map((link) => link === linked ? { ...link, explicit: false } : link)
          : subscription.links.filter((link) => link !== linked)
        return Effect.succeed({ next: { ...subscription, links }, result: undefined })
      })
  }
}

/**
 * The Durable Streams protocol under `/v1/stream/`: streams that clients create
 * (`PUT`, or fork from another stream with `Stream-Forked-From`), append to and close
 * (`POST`), read (`GET`: catch-up, `live=long-poll`, `live=sse`), inspect (`HEAD`) and
 * delete (`DELETE`; a stream that forks read is kept for them, gone: 410), addressed
 * by opaque offsets, with JSON mode, TTL and expiry times, idempotent producers and
 * closure, kept in the `DurableStore`; and, under a prefix the application reserves
 * (`ReadOnlyStreams`), streams of its own that clients only read (the Sluice server's
 * turn streams).
 *
 * Offsets are Redis entry ids written `<ms>_<seq>` with both parts zero-padded to 16
 * digits: opaque to clients, ordered as strings, `-1` for the start and `now` for the
 * tail.
 *
 * @since 0.3.0
 */
import { Json } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as DurableRefusal from "./DurableRefusal.js"
import type { Source } from "./DurableSource.js"
import * as DurableStore from "./DurableStore.js"
import * as DurableSubscriptions from "./DurableSubscriptions.js"
import * as Common from "./internal/routeCommon.js"
import * as StreamRoutes from "./internal/streamRoutes.js"
import * as SubscriptionEngine from "./internal/subscriptionEngine.js"
import type { Engine } from "./internal/subscriptionEngine.js"
import * as SubscriptionRoutes from "./internal/subscriptionRoutes.js"
import type { WebhookPolicy } from "./internal/subscriptionWire.js"
import { webhookClient } from "./internal/webhookLookup.js"
import * as Body from "./RequestBody.js"

/**
 * The path prefix of the protocol.
 *
 * @since 0.3.0
 * @category constants
 */
export const basePath = Common.basePath

/**
 * What a request may do: read (every authenticated caller) and, with `mayWrite`,
 * create, append to, close and delete streams and manage subscriptions.
 *
 * @since 0.3.0
 * @category models
 */
export interface Access {
  readonly mayWrite: boolean
}

/**
 * What an application adds to the routes for each caller (docs/http.md#per-caller-limits),
 * from the `Access` its `authenticate` found:
 *
 * - `liveRead`: takes one of the caller's slots for a live read (`live=long-poll` or
 *   `live=sse`, of any stream), in the request's scope: the slot is held while the read
 *   waits or streams and given back when it ends (the client gone included). A refusal
 *   is the answer (429, say, with the message of the application's choosing). None: live
 *   reads are not counted.
 * - `subscriber`: the key under which the caller's subscriptions are counted (a stable
 *   name of its token, never the token itself: it is stored with each subscription it
 *   creates); a caller holds at most `maxSubscriptionsPerCaller` of them (429
 *   `TOO_MANY_SUBSCRIPTIONS` beyond). None: not counted per caller (the store's limit of
 *   all subscriptions still holds).
 *
 * @since 0.3.0
 * @category models
 */
export interface Callers<A extends Access> {
  readonly liveRead?: ((access: A) => Effect.Effect<void, DurableRefusal.DurableRefusal, Scope.Scope>) | undefined
  readonly subscriber?: ((access: A) => string) | undefined
}

/**
 * Streams an application serves read-only under a reserved name prefix (ending in
 * `/`): `source` finds a stream by its whole name (none: 404). Writes there are
 * refused with 405 and `writeRefusal`, forks from there with 400 and `forkRefusal`.
 *
 * @since 0.3.0
 * @category models
 */
export interface ReadOnlyStreams {
  readonly prefix: string
  readonly source: (name: string) => Option.Option<Source>
  readonly writeRefusal: string
  readonly forkRefusal: string
}

/**
 * What the protocol's requests need: the store of client streams (none: only the
 * read-only streams are served, and writes answer 501), the read-only streams, how
 * long a long-poll (or a quiet SSE stream) waits, the signal that the server is
 * closing (open SSE streams end then), and whether a catch-up read's body is gzipped
 * for a client that accepts it (`compression`, off when absent); with
 * `subscriptions`, the reserved subscription routes (`__ds/...`) are served, and every
 * write to a client stream is told to them. `baseUrl` is the server's public address
 * (no trailing slash), the start of the URLs written into answers (`Location`,
 * `jwks_url`, `callback_url`; `http://localhost` when absent): never the request's
 * `Host`. `maxBodyBytes` (8 MiB) bounds the body of a write to a client stream,
 * `maxSubscriptionBodyBytes` (1 MiB) that of a subscription route: a larger one is
 * answered 413, unread. `maxJsonDepth` (`Json.defaultMaxDepth`, 128) bounds how deep
 * the JSON of a write to a JSON stream, or of a subscription route's body, nests: a
 * deeper one is answered 400 naming its depth and the limit
 * (docs/http.md#json-nesting).
 *
 * @since 0.3.0
 * @category models
 */
export interface Context {
  readonly store: Option.Option<DurableStore.DurableStoreService>
  readonly readOnly?: ReadOnlyStreams | undefined
  readonly longPollMs: number
  readonly closing: Effect.Effect<void>
  readonly subscriptions?: Engine | undefined
  readonly compression?: boolean | undefined
  readonly baseUrl?: string | undefined
  readonly maxBodyBytes?: number | undefined
  readonly maxSubscriptionBodyBytes?: number | undefined
  readonly maxJsonDepth?: number | undefined
}

/**
 * Where webhooks may be posted: `loopbackHttp` lets an insecure-local server post to
 * `http://localhost`; `allowHosts` names private hosts that may receive them.
 *
 * @since 0.3.0
 * @category models
 */
export type Webhooks = WebhookPolicy

/**
 * The protocol's settings: a `Context` but for the stores, which come from the
 * services in context, and the subscription engine, made from them when both a
 * `DurableStore` and a `DurableSubscriptions` are there, its webhooks posted under
 * `webhooks`; a caller (the routes' `Callers.subscriber`) holds at most
 * `maxSubscriptionsPerCaller` subscriptions (100; docs/http.md#subscription-limits).
 *
 * @since 0.3.0
 * @category models
 */
export interface Options extends Omit<Context, "store" | "subscriptions"> {
  readonly webhooks: Webhooks
  readonly maxSubscriptionsPerCaller?: number | undefined
}

/**
 * The protocol's context from the services in context: the `DurableStore` (optional:
 * without it only the read-only streams are served) and, with a `DurableSubscriptions`
 * too, the subscription engine, whose webhook posts and sweeps run in the scope.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<Context, never, Scope.Scope> =>
  Effect.gen(function*() {
    const store = yield* Effect.serviceOption(DurableStore.DurableStore)
    const subscriptionStore = yield* Effect.serviceOption(DurableSubscriptions.DurableSubscriptions)
    const subscriptions = Option.isSome(store) && Option.isSome(subscriptionStore)
      ? yield* SubscriptionEngine.make(store.value, subscriptionStore.value, {
        ...SubscriptionEngine.defaultOptions,
        policy: options.webhooks,
        ...(options.maxSubscriptionsPerCaller === undefined
          ? {}
          : { maxPerSubscriber: options.maxSubscriptionsPerCaller })
      }).pipe(Effect.provide(webhookClient(options.webhooks)))
      : undefined
    const { maxSubscriptionsPerCaller: _max, webhooks: _, ...rest } = options
    return { ...rest, store, subscriptions }
  })

// The subscription routes' settings from the context: URLs in answers start with
// `baseUrl` (`http://localhost` without one, never the request's `Host`).
const subscriptionSettings = (context: Context): SubscriptionRoutes.Settings => ({
  baseUrl: context.baseUrl ?? "http://localhost",
  maxBodyBytes: context.maxSubscriptionBodyBytes ?? Body.defaultLimits.subscription,
  maxJsonDepth: context.maxJsonDepth ?? Json.defaultMaxDepth
})

/**
 * Whether a request is for the protocol (its path is under `/v1/stream/`).
 *
 * @since 0.3.0
 * @category predicates
 */
export const isDurablePath = (url: string): boolean => url.startsWith(basePath)

/**
 * `OPTIONS` under `/v1/stream/`: the CORS preflight, answered before authentication.
 *
 * @since 0.3.0
 * @category handlers
 */
export const preflight: HttpServerResponse.HttpServerResponse = HttpServerResponse.empty({
  status: 204,
  headers: Common.commonHeaders
})

/**
 * The protocol as `HttpRouter` routes under `/v1/stream/`, for an application to add
 * to its router:
 *
 * - `OPTIONS /v1/stream/*`: the CORS preflight, to anyone;
 * - with the subscription engine, `/v1/stream/__ds/jwks.json`,
 *   `/v1/stream/__ds/subscriptions/:id`, `.../:id/:action` and `.../:id/streams/*`
 *   (see the subscription APIs); the signing keys and a wake's callback, ack and
 *   release are answered without `authenticate` (a wake's own token authenticates
 *   them), the others once it has found the caller;
 * - `GET`, `HEAD`, `PUT`, `POST`, `DELETE /v1/stream/*` (any other method: 405 with
 *   `Allow`), once `authenticate` has found the caller's `Access`: reads need the read
 *   scope (every caller has it), writes the write scope (403); a read-only stream
 *   refuses writes (405); without a store, writes answer 501.
 *
 * A stream's name is its raw path under `/v1/stream/` (percent-escapes kept), and
 * `authenticate` runs before any body is read. `callers` adds what the application
 * counts per caller: a slot for each live read, the key its subscriptions are counted
 * under. A refusal of the protocol is an answer
 * (plain text on the stream routes, `{"error": {"code", "message"}}` on the
 * subscription routes), never a failure, and so is a store error (503 when Redis is
 * unavailable, else 500): the routes fail only as `authenticate` does.
 *
 * @since 0.3.0
 * @category routing
 */
export const routes = <A extends Access, E, R>(
  context: Context,
  authenticate: Effect.Effect<A, E, R>,
  callers: Callers<A> = {}
): ReadonlyArray<HttpRouter.Route<E, Exclude<R, HttpRouter.Provided>>> => {
  const caller = Effect.map(authenticate, Common.callerOf(callers))
  const engine = context.subscriptions
  const reserved = engine === undefined
    ? undefined
    : SubscriptionRoutes.serve(engine, subscriptionSettings(context), caller)
  return [
    HttpRouter.route("OPTIONS", `${basePath}*`, preflight),
    ...(reserved === undefined ? [] : SubscriptionRoutes.routes(reserved)),
    ...StreamRoutes.routes(context, caller, reserved)
  ]
}

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
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { type Source, storeSource } from "./DurableSource.js"
import * as DurableStore from "./DurableStore.js"
import * as DurableSubscriptions from "./DurableSubscriptions.js"
import * as Compression from "./HttpCompression.js"
import * as Fork from "./internal/durableFork.js"
import * as Read from "./internal/durableRead.js"
import * as Subscriptions from "./internal/durableSubscriptions.js"
import * as Write from "./internal/durableWrite.js"
import * as SubscriptionEngine from "./internal/subscriptionEngine.js"
import type { Engine } from "./internal/subscriptionEngine.js"
import { isReserved, streamNamePattern, type WebhookPolicy } from "./internal/subscriptionWire.js"
import { webhookClient } from "./internal/webhookLookup.js"
import * as Body from "./RequestBody.js"

/**
 * The path prefix of the protocol.
 *
 * @since 0.3.0
 * @category constants
 */
export const basePath = "/v1/stream/"

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
 * answered 413, unread.
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
 * `webhooks`.
 *
 * @since 0.3.0
 * @category models
 */
export interface Options extends Omit<Context, "store" | "subscriptions"> {
  readonly webhooks: Webhooks
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
        policy: options.webhooks
      }).pipe(Effect.provide(webhookClient(options.webhooks)))
      : undefined
    const { webhooks: _, ...rest } = options
    return { ...rest, store, subscriptions }
  })

// The start of the URLs the protocol writes into its answers: the context's
// `baseUrl`, `http://localhost` without one (never the request's `Host`).
const baseUrlOf = (context: Context): string => context.baseUrl ?? "http://localhost"

// The subscription routes' settings from the context.
const subscriptionSettings = (context: Context) => ({
  baseUrl: baseUrlOf(context),
  maxBodyBytes: context.maxSubscriptionBodyBytes ?? Body.defaultLimits.subscription
})

const common: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, PUT, DELETE, HEAD, OPTIONS",
  "access-control-allow-headers":
    "content-type, authorization, Stream-Seq, Stream-TTL, Stream-Expires-At, Stream-Closed, Producer-Id, Producer-Epoch, Producer-Seq, If-None-Match, Stream-Forked-From, Stream-Fork-Offset, Stream-Fork-Sub-Offset",
  "access-control-expose-headers":
    "Stream-Next-Offset, Stream-Cursor, Stream-Up-To-Date, Stream-Closed, Producer-Epoch, Producer-Seq, Producer-Expected-Seq, Producer-Received-Seq, etag, content-type, location",
  "x-content-type-options": "nosniff",
  "cross-origin-resource-policy": "cross-origin"
}

// The stream a `Stream-Forked-From` path names: a client stream under the base path.
const forkSource = (readOnly: ReadOnlyStreams | undefined) => (given: string): Effect.Effect<string, Read.Refusal> => {
  const path = /^https?:\/\//i.test(given) && URL.canParse(given) ? new URL(given).pathname : given
  const name = path.startsWith(basePath) ? path.slice(basePath.length) : undefined
  if (name === undefined || !streamNamePattern.test(name)) {
    return Read.refuse(
      400,
      `invalid Stream-Forked-From ${JSON.stringify(path.slice(0, 64))}: expected ${basePath}<name>`
    )
  }
  return readOnly !== undefined && name.startsWith(readOnly.prefix)
    ? Read.refuse(400, readOnly.forkRefusal)
    : Effect.succeed(name)
}

const text = (refusal: Read.Refusal) =>
  HttpServerResponse.text(refusal.message, { status: refusal.status, headers: refusal.headers })

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
  headers: common
})

// A write's body under the context's limit: 413 beyond it (unread), 400 when it breaks off.
const readBody = (context: Context, request: HttpServerRequest.HttpServerRequest) =>
  Effect.mapError(
    Body.read(request, context.maxBodyBytes ?? Body.defaultLimits.durable),
    (error) => new Read.Refusal(error._tag === "BodyTooLarge" ? 413 : 400, error.message)
  )

/**
 * Answers a request under `/v1/stream/` for an authenticated caller: reads need the
 * read scope (every caller has it), writes the write scope; a turn's streams refuse
 * writes (405). Every refusal is a plain-text body naming what was wrong, with the
 * protocol's status: 400 malformed, 403 a fenced-off producer or a caller without the
 * write scope, 404 no such stream, 409 a conflict, 410 a stream deleted or expired but
 * kept for its forks, 413 a body over `maxBodyBytes` (refused unread, once the scope
 * is checked), 503 Redis unavailable.
 *
 * @since 0.3.0
 * @category handlers
 */
export const handle = (
  context: Context,
  request: HttpServerRequest.HttpServerRequest,
  credentials: Access
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const url = new URL(request.url, "http://localhost")
  const rawName = url.pathname.slice(basePath.length)
  const method = request.method.toUpperCase()
  const header = (name: string): string | undefined => request.headers[name.toLowerCase()]
  const subscriptions = context.subscriptions
  if (subscriptions !== undefined && isReserved(rawName)) {
    return Effect.map(
      Subscriptions.handle(subscriptions, request, rawName, Option.some(credentials), subscriptionSettings(context)),
      (response) => HttpServerResponse.setHeaders(response ?? text(Read.notFound), common)
    )
  }
  // A committed write is told to the subscriptions.
  const told = <E>(
    write: Effect.Effect<HttpServerResponse.HttpServerResponse, E>,
    deleted = false
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E> =>
    subscriptions === undefined
      ? write
      : Effect.tap(write, (response) => response.status < 300 ? subscriptions.notify(rawName, deleted) : Effect.void)
  return Effect.gen(function*() {
    if (!streamNamePattern.test(rawName)) return yield* Read.refuse(400, "invalid stream path")
    const reading = method === "GET" || method === "HEAD"
    if (!reading && !credentials.mayWrite) return yield* Read.refuse(403, "this token may not write durable streams")
    let source: Source
    const readOnly = context.readOnly
    if (readOnly !== undefined && rawName.startsWith(readOnly.prefix)) {
      if (!reading) return yield* Read.refuse(405, readOnly.writeRefusal, { allow: "GET, HEAD" })
      const found = readOnly.source(rawName)
      if (Option.isNone(found)) return yield* Effect.fail(Read.notFound)
      source = found.value
    } else {
      if (Option.isNone(context.store)) {
        return yield* Read.refuse(501, "this server keeps no durable streams of its own")
      }
      const store = context.store.value
      source = storeSource(store, rawName)
      if (method === "PUT") {
        const location = `${baseUrlOf(context)}${url.pathname}`
        return yield* told(Effect.flatMap(
          Effect.flatMap(
            readBody(context, request),
            (body) => Write.createRequest(header, body, location, forkSource(readOnly))
          ),
          (create) =>
            create.fork === undefined
              ? Write.create(store, rawName, create)
              : Fork.create(store, rawName, create, create.fork)
        ))
      }
      if (method === "POST") {
        return yield* told(Effect.flatMap(
          Effect.flatMap(readBody(context, request), (body) => Write.appendRequest(header, body)),
          (append) => Write.append(store, rawName, append)
        ))
      }
      if (method === "DELETE") return yield* told(Write.remove(store, rawName), true)
      if (!reading) {
        return yield* Read.refuse(405, `${method} is not a Durable Streams method`, {
          allow: "GET, HEAD, PUT, POST, DELETE"
        })
      }
    }
    const loaded = yield* source.load
    if (Option.isNone(loaded)) return yield* Effect.fail(Read.notFound)
    if (loaded.value.gone) return yield* Effect.fail(Read.gone)
    if (method === "HEAD") return Read.head(loaded.value, Buffer.from(rawName).toString("base64"))
    const encoding = Compression.encodingFor(context.compression === true, header("accept-encoding"))
    const read = yield* Read.readRequest(url.searchParams, header("if-none-match"), rawName, encoding)
    return read.live === "sse"
      ? Read.sse(source, loaded.value, read, context.longPollMs, context.closing)
      : yield* Read.get(source, loaded.value, read, context.longPollMs)
  }).pipe(
    Effect.catch((error) =>
      error instanceof Read.Refusal
        ? Effect.succeed(text(error))
        : Effect.as(
          Effect.logError(`durable stream ${rawName}: ${error.message}`),
          text(
            error.reason === "Unavailable"
              ? new Read.Refusal(503, "Redis is unavailable, try again later")
              : new Read.Refusal(500, `Redis refused ${error.command}`)
          )
        )
    ),
    Effect.map((response) => HttpServerResponse.setHeaders(response, common))
  )
}

/**
 * Answers the requests under `/v1/stream/` that are not authenticated by the server's
 * tokens: the webhook signing keys (`GET __ds/jwks.json`, public) and a wake's
 * callback, ack and release (authenticated by the wake's own token). None for every
 * other request, and when the server serves no subscriptions.
 *
 * @since 0.3.0
 * @category handlers
 */
export const handleOpen = (
  context: Context,
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<Option.Option<HttpServerResponse.HttpServerResponse>> => {
  const name = new URL(request.url, "http://localhost").pathname.slice(basePath.length)
  const subscriptions = context.subscriptions
  if (subscriptions === undefined || !isReserved(name)) return Effect.succeedNone
  return Effect.map(
    Subscriptions.handle(subscriptions, request, name, Option.none(), subscriptionSettings(context)),
    (response) => Option.map(Option.fromNullishOr(response), (open) => HttpServerResponse.setHeaders(open, common))
  )
}

/**
 * The protocol as `HttpRouter` routes under `/v1/stream/`, for an application to add
 * to its router: the CORS preflight and the open subscription routes (signing keys, a
 * wake's callback, ack and release) answered to anyone, every other request once
 * `authenticate` has found its caller's `Access`. A refusal of the protocol is an
 * answer, never a failure: the routes fail only as `authenticate` does.
 *
 * @since 0.3.0
 * @category routing
 */
export const routes = <E, R>(
  context: Context,
  authenticate: Effect.Effect<Access, E, R>
): ReadonlyArray<HttpRouter.Route<E, Exclude<R, HttpRouter.Provided>>> => {
  const answer = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (request.method === "OPTIONS") return preflight
    const open = yield* handleOpen(context, request)
    if (Option.isSome(open)) return open.value
    return yield* handle(context, request, yield* authenticate)
  })
  return [HttpRouter.route("*", "/v1/stream/*", answer)]
}

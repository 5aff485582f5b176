/**
 * The turn API over HTTP: each stream of a turn as server-sent events with resume,
 * the snapshot of a turn, and the index of recent turns, behind bearer tokens.
 *
 * | route | answer |
 * |---|---|
 * | `GET /` | the turn viewer page (public: it holds no data) |
 * | `GET /v1/turns` | `{turns: [{turnId, startedAt}]}`, newest first, `?limit=` |
 * | `POST /v1/turns` | starts a turn (`TurnStarter`) and streams it as the UI message stream, its id in `x-sluice-turn-id` |
 * | `GET /v1/turns/:turnId` | the `TurnSnapshot` |
 * | `GET /v1/turns/:turnId/upserts` | Stream B as SSE |
 * | `GET /v1/turns/:turnId/events` | Stream A as SSE |
 * | `POST /v1/turns/:turnId/cancel` | asks the turn's producer to cancel it (202) |
 * | `POST /v1/threads/:threadId/turns` | starts a thread's next turn (`ThreadStarter`) and streams it as `POST /v1/turns` does |
 * | `GET /v1/threads/:threadId` | the thread: its current path as UI messages, its running turn |
 * | `GET /v1/threads/:threadId/events` | the thread's events as SSE |
 * | `DELETE /v1/threads/:threadId` | deletes the thread and its turns' streams |
 * | `GET /v1/turns/:turnId/ui-message-stream` | Stream A as the AI SDK's UI message stream |
 * | `/v1/stream/...` | the Durable Streams protocol (see `DurableStreams`) |
 * | `GET /metrics` | the process's metrics as Prometheus text (token; or `metricsPort`) |
 * | `GET /healthz` | liveness, no token: 200 `{"status":"ok"}` |
 * | `GET /readyz` | readiness, no token: 200 when Redis answers in time and the `TurnStarter` (if any) takes turns, else 503 |
 * | `OPTIONS` any route | a CORS preflight, no token (see `makeApp`) |
 *
 * Every request runs in a span and is logged once answered (method, target with
 * credentials redacted, status, duration); each SSE stream has its own span.
 *
 * @since 0.1.0
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { DurableRefusal, DurableStreams } from "@sluice/durable-streams"
import { RedisStreams } from "@sluice/redis"
import { Threads } from "@sluice/turns"
import * as Cause from "effect/Cause"
import type * as Config from "effect/Config"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerError from "effect/http/HttpServerError"
import type { ServeError } from "effect/http/HttpServerError"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Option from "effect/Option"
import * as RcMap from "effect/RcMap"
import * as Scheduler from "effect/Scheduler"
import * as Scope from "effect/Scope"
import { type IncomingMessage, Server, type ServerOptions, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { ApiError, toResponse } from "./ApiError.js"
import { authenticator, type Caller, type Credentials, streamLimiter } from "./internal/access.js"
import * as BoundedScheduler from "./internal/boundedScheduler.js"
import {
  cancelTurn,
  CurrentCaller,
  recentTurns,
  turnSnapshot,
  turnStream,
  uiMessageStream
} from "./internal/handlers.js"
import { healthz, metrics, readyz } from "./internal/health.js"
import * as LeaseSweeper from "./internal/leaseSweeper.js"
import { observed } from "./internal/observe.js"
import { pageRoutes } from "./internal/page.js"
import { startTurn } from "./internal/startTurn.js"
import { allowTurn, isThreadCaller, makeThreadHandlers, type ThreadAccess } from "./internal/threadHandlers.js"
import { turnStreams } from "./internal/turnSource.js"
import * as SharedTail from "./SharedTail.js"
import * as ThreadStarter from "./ThreadStarter.js"
import * as TurnFeed from "./TurnFeed.js"
import * as TurnServerOptions from "./TurnServerOptions.js"
import * as TurnStarter from "./TurnStarter.js"
import * as ViewerToken from "./ViewerToken.js"

// A request to a turn's path whose turn id could not even be decoded (a malformed
// percent escape) is a bad turn id, not an unknown route.
const turnPathPattern = /^\/v1\/turns\/[^/?]+(\/(upserts|events|ui-message-stream))?\/?(\?.*)?$/
const cancelPathPattern = /^\/v1\/turns\/[^/?]+\/cancel\/?(\?.*)?$/
const threadPathPattern = /^\/v1\/threads\/[^/?]+\/?$/
const threadEventsPathPattern = /^\/v1\/threads\/[^/?]+\/events\/?$/
const threadTurnsPathPattern = /^\/v1\/threads\/[^/?]+\/turns\/?$/

/**
 * An app of the server: an HTTP effect (v3's `HttpApp.Default`) that answers the
 * request in context, in the request's scope, and never fails.
 *
 * @since 0.2.0
 * @category models
 */
export type App = Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  HttpServerRequest.HttpServerRequest | Scope.Scope
>

const routeNotFound = (request: HttpServerRequest.HttpServerRequest): ApiError =>
  new ApiError({ code: "not_found", message: `no route for ${request.method} ${request.url.split("?")[0]}` })

// a thread's path whose id is longer than the router takes (`maxParamLength`)
const threadAnyPattern = /^\/v1\/threads\/[^/?]+(\/(turns|events))?\/?(\?.*)?$/

const notFound = (request: HttpServerRequest.HttpServerRequest): ApiError =>
  (request.method === "GET" && turnPathPattern.test(request.url)) ||
    (request.method === "POST" && cancelPathPattern.test(request.url))
    ? new ApiError({ code: "invalid_turn_id", message: "the turn id is not a UUID" })
    : threadAnyPattern.test(request.url)
    ? new ApiError({ code: "invalid_thread_id", message: "the thread id is longer than 128 characters" })
    : routeNotFound(request)

const accessTokens = (url: string): ReadonlyArray<string> => {
  const query = url.indexOf("?")
  return query < 0 ? [] : new URLSearchParams(url.slice(query + 1)).getAll("access_token")
}

/**
 * The API as an `App` (an HTTP effect) on the `RedisStreams` in context, for resolved options:
 * the viewer page and its assets are served to anyone; every other request is
 * authenticated first (401: a bearer token, or a signed page token in
 * `?access_token=`), then routed (404 for an unknown route);
 * every error is a JSON body `{error: {code, message}}`, and an unexpected failure is
 * logged and answered with 500 `internal`. When the scope closes, open streams end
 * (cleanly: a client resumes elsewhere with `Last-Event-ID`).
 *
 * Requests under `/v1/stream/` speak the Durable Streams protocol (`DurableStreams`):
 * the streams of turns from the `RedisStreams`, and streams of clients' own in the
 * `DurableStore` when the context has one (without it they answer 501), with the
 * subscription APIs (`__ds/...`, webhooks posted through `fetch`) when it also has a
 * `DurableSubscriptions`. The URLs written into answers start with `baseUrl` (the
 * options' `publicUrl` when absent, else `http://localhost`), never with the
 * request's `Host`.
 *
 * An `OPTIONS` request (a CORS preflight, which carries no credentials) is answered
 * before authentication: under `/v1/stream/` with the protocol's CORS headers (any
 * origin); elsewhere 204 with the route's `Allow` and no `Access-Control-Allow-Origin`
 * (the turn routes are for their own origin, so a browser refuses a cross-origin
 * request there), or 404 for an unknown route.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeApp = (
  options: TurnServerOptions.ResolvedOptions,
  baseUrl?: string
): Effect.Effect<App, never, RedisStreams.RedisStreams | Scope.Scope> =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const starter = yield* Effect.serviceOption(TurnStarter.TurnStarter)
    // turns whose producer died are ended whether anyone reads them or not
    yield* LeaseSweeper.sweep({ prefix: options.prefix, everyMs: options.sweepEveryMs, batch: options.sweepBatch })
      .pipe(Effect.provideService(RedisStreams.RedisStreams, redis), Effect.forkScoped)
    const authenticate = authenticator(options.tokens, options.readTokens)
    const tokenSlots = yield* streamLimiter(options.maxStreamsPerToken)
    // a thread token's streams are counted against its own, smaller limit
    const threadSlots = yield* streamLimiter(options.maxStreamsPerThreadToken)
    const slots = {
      acquire: (caller: Caller) => isThreadCaller(caller) ? threadSlots.acquire(caller) : tokenSlots.acquire(caller)
    }
    const closing = yield* Deferred.make<void>()
    yield* Effect.addFinalizer(() => Deferred.succeed(closing, undefined))
    const tails = yield* SharedTail.make({
      ...SharedTail.defaults,
      blockMs: options.tailBlockMs,
      resume: TurnFeed.resumeSchedule(options)
    })
    // one watch of a turn's producer while it has readers (TurnFeed.watchProducer)
    const producers = yield* RcMap.make({
      lookup: (turnId: string) =>
        Effect.asVoid(Effect.forkScoped(
          Effect.provideService(
            TurnFeed.watchProducer({ prefix: options.prefix, turnId, everyMs: options.leaseCheckMs }),
            RedisStreams.RedisStreams,
            redis
          )
        ))
    })
    const streams = {
      slots,
      closing: Deferred.await(closing),
      tails,
      watchProducer: (turnId: string) => Effect.asVoid(RcMap.get(producers, turnId))
    }
    const durable = yield* DurableStreams.make({
      readOnly: turnStreams(redis, options.prefix, tails),
      longPollMs: options.durableLongPollMs,
      closing: streams.closing,
      compression: options.compression,
      baseUrl: baseUrl ?? options.publicUrl,
      maxBodyBytes: options.maxBodyBytes,
      maxSubscriptionBodyBytes: options.maxSubscriptionBodyBytes,
      maxSubscriptionsPerCaller: options.maxSubscriptionsPerToken,
      maxJsonDepth: options.maxJsonDepth,
      webhooks: { loopbackHttp: options.insecureLocal, allowHosts: options.webhookAllowHosts }
    })
    // the caller of a request, from its bearer token or its page token
    const caller = Effect.flatMap(
      HttpServerRequest.HttpServerRequest,
      (request) => authenticate(request.headers.authorization, accessTokens(request.url))
    )
    // a turn route, answered once its caller is known
    const authed = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
      Effect.flatMap(caller, (credentials) => Effect.provideService(handler, CurrentCaller, credentials))
    const threadContext = {
      options,
      threads: yield* Effect.serviceOption(Threads.Threads),
      starter: yield* Effect.serviceOption(ThreadStarter.ThreadStarter),
      slot: (credentials: Credentials) => slots.acquire(credentials.caller),
      closing: streams.closing
    }
    const threadRoutes = yield* makeThreadHandlers(threadContext)
    // a route no thread token reaches (403)
    const refusesThreadTokens = (credentials: Credentials) =>
      credentials.thread === undefined
        ? Effect.void
        : Effect.fail(new ApiError({ code: "forbidden", message: "a thread token reaches its thread only" }))
    const bearerOnly = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
      authed(Effect.andThen(Effect.flatMap(CurrentCaller, refusesThreadTokens), handler))
    // a turn's route: a thread token reaches the turns of its thread only
    const turnRoute = <E, R>(
      access: ThreadAccess,
      handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ) =>
      authed(Effect.andThen(
        Effect.flatMap(CurrentCaller, (credentials) =>
          credentials.thread === undefined
            ? Effect.void
            : Effect.flatMap(HttpRouter.params, (params) =>
              allowTurn(threadContext, credentials, params.turnId ?? "", access))),
        handler
      ))
    const durableCaller = Effect.tap(caller, refusesThreadTokens)
    const routed = yield* HttpRouter.toHttpEffect(HttpRouter.addAll([
      ...pageRoutes,
      HttpRouter.route("GET", "/healthz", healthz),
      HttpRouter.route("GET", "/readyz", readyz(options.prefix, options.readyTimeoutMs, starter)),
      HttpRouter.route("OPTIONS", "*", (request) =>
        Effect.succeed(preflight(request))),
      HttpRouter.route("GET", "/v1/turns", bearerOnly(recentTurns(options))),
      HttpRouter.route("POST", "/v1/turns", bearerOnly(startTurn(options.maxBodyBytes, starter))),
      HttpRouter.route("GET", "/v1/turns/:turnId", turnRoute("read", turnSnapshot(options))),
      HttpRouter.route("GET", "/v1/turns/:turnId/upserts", turnRoute("read", turnStream(options, streams, "upserts"))),
      HttpRouter.route("GET", "/v1/turns/:turnId/events", turnRoute("read", turnStream(options, streams, "events"))),
      HttpRouter.route(
        "GET",
        "/v1/turns/:turnId/ui-message-stream",
        turnRoute("read", uiMessageStream(options, streams))
      ),
      HttpRouter.route("POST", "/v1/turns/:turnId/cancel", turnRoute("write", cancelTurn(options, starter))),
      HttpRouter.route("POST", "/v1/threads/:threadId/turns", authed(threadRoutes.start)),
      HttpRouter.route("GET", "/v1/threads/:threadId", authed(threadRoutes.get)),
      HttpRouter.route("GET", "/v1/threads/:threadId/events", authed(threadRoutes.events)),
      HttpRouter.route("DELETE", "/v1/threads/:threadId", authed(threadRoutes.delete)),
      HttpRouter.route("GET", "/metrics", bearerOnly(metrics)),
      ...DurableStreams.routes(durable, durableCaller, {
        // a live read takes one of its token's stream slots, as an SSE stream of a turn
        liveRead: (credentials) =>
          Effect.mapError(
            slots.acquire(credentials.caller),
            (refused) => DurableRefusal.make(429, refused.message)
          ),
        subscriber: (credentials) => credentials.subscriber
      })
    ])).pipe(
      // a thread id is up to 128 characters (the router's default takes 100)
      Effect.provideService(HttpRouter.RouterConfig, { maxParamLength: 160 })
    )
    // an unknown route is told only to a caller the server knows
    const app: App = routed.pipe(
      Effect.catchIf(
        (error) => HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound",
        () =>
          Effect.flatMap(
            caller,
            () => Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => Effect.fail(notFound(request)))
          )
      ),
      Effect.provideService(RedisStreams.RedisStreams, redis),
      Effect.catchIf(
        (error): error is ApiError => error instanceof ApiError,
        (error) => Effect.succeed(toResponse(error))
      ),
      Effect.catchCause((cause): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause).pipe(Effect.orDie)
          : Effect.as(
            Effect.logError("request failed", cause),
            toResponse(new ApiError({ code: "internal", message: "internal error" }))
          )
      )
    )
    return observed(app)
  })

// The methods of each turn route, as a preflight's `Allow` names them.
const routeMethods = (path: string): string | undefined => {
  if (path === "/metrics") return "GET, HEAD, OPTIONS"
  if (path === "/v1/turns" || path === "/v1/turns/") return "GET, HEAD, POST, OPTIONS"
  if (cancelPathPattern.test(path)) return "POST, OPTIONS"
  if (threadTurnsPathPattern.test(path)) return "POST, OPTIONS"
  if (threadEventsPathPattern.test(path)) return "GET, HEAD, OPTIONS"
  if (threadPathPattern.test(path)) return "GET, HEAD, DELETE, OPTIONS"
  return turnPathPattern.test(path) ? "GET, HEAD, OPTIONS" : undefined
}

// `OPTIONS` of a route outside `/v1/stream/`, before authentication (a preflight
// carries no credentials): 204 with the route's methods and no CORS grant, the turn
// routes being same-origin; 404 for an unknown route.
const preflight = (request: HttpServerRequest.HttpServerRequest): HttpServerResponse.HttpServerResponse => {
  const path = request.url.split("?")[0]!
  const allow = routeMethods(path)
  return allow === undefined
    ? toResponse(new ApiError({ code: "not_found", message: `no route for OPTIONS ${path}` }))
    : HttpServerResponse.empty({ status: 204, headers: { allow, "cache-control": "no-store", vary: "Origin" } })
}

/**
 * The app of the metrics port: `/metrics`, `/healthz` and `/readyz` without a token,
 * 404 for anything else.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMetricsApp = (
  options: TurnServerOptions.ResolvedOptions
): Effect.Effect<App, never, RedisStreams.RedisStreams | Scope.Scope> =>
  Effect.gen(function*() {
    const redis = yield* RedisStreams.RedisStreams
    const starter = yield* Effect.serviceOption(TurnStarter.TurnStarter)
    const routed = yield* HttpRouter.toHttpEffect(HttpRouter.addAll([
      HttpRouter.route("GET", "/healthz", healthz),
      HttpRouter.route("GET", "/readyz", readyz(options.prefix, options.readyTimeoutMs, starter)),
      HttpRouter.route("GET", "/metrics", metrics)
    ]))
    const app: App = routed.pipe(
      Effect.catchIf(
        (error) => HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound",
        () => Effect.map(HttpServerRequest.HttpServerRequest, (request) => toResponse(routeNotFound(request)))
      ),
      Effect.provideService(RedisStreams.RedisStreams, redis),
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause).pipe(Effect.orDie)
          : Effect.as(
            Effect.logError("request failed", cause),
            toResponse(new ApiError({ code: "internal", message: "internal error" }))
          )
      )
    )
    return observed(app)
  })

// Serves an app; Effect's own per-request span is off (it would record the query
// string, credentials included): `observed` makes a redacted one.
// The request fibers, and the fibers the app forks (the shared tails), share one queue
// of the process, a group of tasks a turn of the event loop (`internal/boundedScheduler.ts`),
// so that no burst of readers holds a turn, and `/healthz` waits for one group at most.
const requestScheduler = BoundedScheduler.make()

const serveApp = (server: HttpServer.HttpServer["Service"], app: App) =>
  server.serve(app).pipe(
    Effect.provideService(HttpMiddleware.TracerDisabledWhen, () => true),
    Effect.provideService(Scheduler.Scheduler, requestScheduler)
  )

// Serves the app made in a scope of its own, closed before the server stops listening
// (which waits for open connections, at most `shutdownTimeoutMs`): the starter is told
// to end its turns first (in a fiber of its own, beside the rest: the answers of its
// turns end with them), open streams end, cleanly, then the server closes, and last the
// starter's shutdown is waited for.
const serveScoped = <E, R>(
  server: HttpServer.HttpServer["Service"],
  make: Effect.Effect<App, E, R>,
  shutdown: Effect.Effect<void> | undefined
) =>
  Effect.gen(function*() {
    const appScope = yield* Scope.make()
    const app = yield* make.pipe(
      Scope.provide(appScope),
      Effect.provideService(Scheduler.Scheduler, requestScheduler),
      Effect.onError((cause) => Scope.close(appScope, Exit.failCause(cause)))
    )
    const shutdownScope = yield* Scope.make()
    let shuttingDown: Fiber.Fiber<void> | undefined
    yield* Effect.addFinalizer(() =>
      Effect.andThen(
        Effect.suspend(() => (shuttingDown === undefined ? Effect.void : Fiber.await(shuttingDown))),
        Scope.close(shutdownScope, Exit.void)
      )
    )
    yield* serveApp(server, app)
    yield* Effect.addFinalizer((exit) =>
      Effect.andThen(
        shutdown === undefined ? Effect.void : Effect.flatMap(
          Effect.forkIn(shutdown, shutdownScope),
          (fiber) =>
            Effect.sync(() => {
              shuttingDown = fiber
            })
        ),
        Scope.close(appScope, exit)
      )
    )
  })

/**
 * The server's address once it listens.
 *
 * @since 0.1.0
 * @category accessors
 */
export const address: Effect.Effect<NetAddress.SocketAddress, never, HttpServer.HttpServer> = HttpServer.HttpServer
  .useSync((server) => server.address)

// A Node HTTP server that, once it stops listening, keeps no connection alive: the
// connections without a request in flight are closed at once (Node's own `close`
// leaves those that were opened but never sent a request), and the others as soon as
// their response ends.
class ClosingServer extends Server {
  private readonly quiet = new Set<Socket>()

  constructor(options: ServerOptions) {
    super(options)
    this.on("connection", (socket: Socket) => {
      this.quiet.add(socket)
      socket.once("close", () => this.quiet.delete(socket))
    })
    const inFlight = (request: IncomingMessage, response: ServerResponse) => {
      const socket = request.socket
      this.quiet.delete(socket)
      response.once("finish", () => {
        if (socket.destroyed) return
        if (this.listening) this.quiet.add(socket)
        else setImmediate(() => this.closeIdleConnections())
      })
    }
    this.on("request", inFlight)
    // a request with `Expect: 100-continue` comes as this event instead (the HTTP
    // server of `effect` answers it)
    this.on("checkContinue", inFlight)
  }

  override close(callback?: (error?: Error) => void): this {
    for (const socket of this.quiet) socket.destroy()
    this.quiet.clear()
    return super.close(callback)
  }
}

/**
 * How often the Node server looks for requests past `headersTimeoutMs` or
 * `requestTimeoutMs` (Node's `connectionsCheckingInterval`, 30 s by default): 1 s, so a
 * request that is too slow is closed within a second of its bound.
 *
 * @since 0.3.0
 * @category constants
 */
export const timeoutCheckMs = 1_000

/**
 * The Node HTTP server of the options: idle kept-alive connections closed after
 * `keepAliveTimeoutMs` (sent to clients as `Keep-Alive: timeout=<s>`), request
 * headers bounded by `headersTimeoutMs` and the whole request (headers and body) by
 * `requestTimeoutMs` (408, closed), checked every `timeoutCheckMs`. Once it stops
 * listening, a connection is closed as soon as no request is in flight on it, rather
 * than kept alive: closing waits for the responses in flight, never for a keep-alive
 * timeout.
 *
 * @since 0.3.0
 * @category constructors
 */
export const nodeServer = (
  options: Pick<TurnServerOptions.ResolvedOptions, "keepAliveTimeoutMs" | "headersTimeoutMs" | "requestTimeoutMs">
): Server =>
  new ClosingServer({
    keepAliveTimeout: options.keepAliveTimeoutMs,
    headersTimeout: options.headersTimeoutMs,
    requestTimeout: options.requestTimeoutMs,
    connectionsCheckingInterval: timeoutCheckMs
  })

/**
 * The start of the URLs the server writes into its answers: `publicUrl`, else the
 * address it listens on (`localhost` for every interface).
 *
 * @since 0.3.0
 * @category accessors
 */
export const publicBase = (
  options: Pick<TurnServerOptions.ResolvedOptions, "publicUrl">,
  address: NetAddress.SocketAddress
): string =>
  options.publicUrl ?? (NetAddress.isInetAddress(address)
    ? `http://${linkHost(address)}:${address.port}`
    : "http://localhost")

const linkHost = (address: NetAddress.InetAddress): string =>
  NetAddress.isUnspecified(address.address)
    ? "localhost"
    : NetAddress.isInetAddressV6(address)
    ? `[${NetAddress.formatHost(address)}]`
    : NetAddress.formatHost(address)

/**
 * The address of the viewer page of the running server, with a page token of the
 * scope (`read` by default; `control` also lets the page stop turns) valid for `ttlMs`
 * in the fragment (`/#access_token=...`; a fragment never reaches the server or its
 * logs), or without one on an `insecureLocal` server. A server bound to every
 * interface is named `localhost`.
 *
 * @since 0.1.0
 * @category accessors
 */
export const pageUrl = (
  ttlMs: number,
  scope: ViewerToken.TokenScope = "read"
): Effect.Effect<string, never, HttpServer.HttpServer | ViewerToken.Signer> =>
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const signer = yield* ViewerToken.Signer
    const base = NetAddress.isInetAddress(server.address)
      ? `http://${linkHost(server.address)}:${server.address.port}/`
      : "http://localhost/"
    return Option.match(yield* signer.issue(ttlMs, scope), {
      onNone: () => base,
      onSome: (token) => `${base}#access_token=${token}`
    })
  })

/**
 * Serves the API on `options.port` (default 8787) with Node's HTTP server, on the
 * `RedisStreams` layer it is given, and logs the address. It also provides the
 * `ViewerToken.Signer` of its page tokens (see `pageUrl`). Fails before listening with
 * `InvalidServerOptions` (a malformed option, no token without `insecureLocal`, an
 * `insecureLocal` host that is not loopback), a `ConfigError` from reading
 * `SLUICE_API_TOKENS`, or a `ServeError` when the port cannot be bound. The
 * `HttpServer` it provides tells the bound address (`TurnServer.address`). With
 * `metricsPort`, a second server on that port answers `/metrics`, `/healthz` and
 * `/readyz` (`makeMetricsApp`). Both are `nodeServer`s: kept-alive connections idle
 * for `keepAliveTimeoutMs` (65 s) close, headers must arrive within
 * `headersTimeoutMs` (66 s). When the layer's scope closes, the server stops
 * listening, ends its streams, tells its `TurnStarter` to end its turns
 * (`TurnStarterService.shutdown`) and waits for the answers in flight at most
 * `shutdownTimeoutMs` (8 s), then cuts the rest.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: TurnServerOptions.Options = {}
): Layer.Layer<
  HttpServer.HttpServer | ViewerToken.Signer,
  TurnServerOptions.InvalidServerOptions | Config.ConfigError | ServeError,
  RedisStreams.RedisStreams
> =>
  Layer.unwrap(Effect.map(TurnServerOptions.resolve(options), (resolved) => {
    const serving = Layer.effectDiscard(Effect.gen(function*() {
      const server = yield* HttpServer.HttpServer
      const starter = yield* Effect.serviceOption(TurnStarter.TurnStarter)
      yield* serveScoped(
        server,
        makeApp(resolved, publicBase(resolved, server.address)),
        Option.getOrUndefined(starter)?.shutdown
      )
      const where = HttpServer.formatAddress(server.address)
      yield* resolved.tokens.length === 0 && resolved.readTokens.length === 0
        ? Effect.logWarning(`serving the turn API on ${where} WITHOUT access control (insecure-local)`)
        : Effect.logInfo(`serving the turn API on ${where}`)
    }))
    // the close waits for the answers in flight at most the shutdown budget
    const listen = {
      port: resolved.port,
      ...(resolved.host === undefined ? {} : { host: resolved.host }),
      gracefulShutdownTimeout: Duration.millis(resolved.shutdownTimeoutMs)
    }
    const key = resolved.tokens.length === 0 ? Option.none() : Option.some(ViewerToken.deriveKey(resolved.tokens))
    const signer = Layer.succeed(
      ViewerToken.Signer,
      ViewerToken.Signer.of({
        issue: (ttlMs, scope) =>
          Option.match(key, {
            onNone: () => Effect.succeedNone,
            onSome: (signingKey) => Effect.asSome(ViewerToken.issue(signingKey, ttlMs, scope))
          })
      })
    )
    const api = Layer.provideMerge(serving, NodeHttpServer.layerServer(() => nodeServer(resolved), listen))
    const metricsServer = resolved.metricsPort === undefined
      ? Layer.empty
      : Layer.effectDiscard(Effect.gen(function*() {
        const server = yield* HttpServer.HttpServer
        yield* serveApp(server, yield* makeMetricsApp(resolved))
        yield* Effect.logInfo(`serving metrics and health on ${HttpServer.formatAddress(server.address)}`)
      })).pipe(Layer.provide(
        NodeHttpServer.layerServer(() => nodeServer(resolved), { ...listen, port: resolved.metricsPort })
      ))
    return Layer.mergeAll(api, metricsServer, signer)
  }))

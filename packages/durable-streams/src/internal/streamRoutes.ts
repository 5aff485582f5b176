/**
 * The stream routes under `/v1/stream/*`, one per method: `GET` and `HEAD` read, `PUT`
 * creates (or forks), `POST` appends (and closes), `DELETE` deletes, any other method
 * is refused (405 with `Allow`). Every one authenticates its caller first (before any
 * body is read); a refusal is a plain-text body. A committed write is told to the
 * subscription engine.
 *
 * @internal
 */
import type { RedisError } from "@sluice/redis"
import * as Effect from "effect/Effect"
import type * as HttpMethod from "effect/http/HttpMethod"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Operations from "../DurableOperations.js"
import * as Refusal from "../DurableRefusal.js"
import { type Source, storeSource } from "../DurableSource.js"
import type * as DurableStore from "../DurableStore.js"
import type { Context } from "../DurableStreams.js"
import * as Compression from "../HttpCompression.js"
import * as Body from "../RequestBody.js"
import { answered, basePath, type Caller, pathOf } from "./routeCommon.js"
import * as Requests from "./streamRequests.js"
import * as Responses from "./streamResponses.js"
import { isReserved, streamNamePattern } from "./subscriptionWire.js"

type Failure = Refusal.DurableRefusal | RedisError.RedisError
type Handler<E, R> = Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  E,
  R | HttpServerRequest.HttpServerRequest | Scope.Scope
>

const forbidden = () => Refusal.make(403, "this token may not write durable streams")

// The stream a `Stream-Forked-From` path names: a client stream under the base path.
const forkSource = (context: Context) => (given: string): Effect.Effect<string, Refusal.DurableRefusal> => {
  const path = /^https?:\/\//i.test(given) && URL.canParse(given) ? new URL(given).pathname : given
  const name = path.startsWith(basePath) ? path.slice(basePath.length) : undefined
  if (name === undefined || !streamNamePattern.test(name)) {
    return Refusal.refuse(
      400,
      `invalid Stream-Forked-From ${JSON.stringify(path.slice(0, 64))}: expected ${basePath}<name>`
    )
  }
  const readOnly = context.readOnly
  return readOnly !== undefined && name.startsWith(readOnly.prefix)
    ? Refusal.refuse(400, readOnly.forkRefusal)
    : Effect.succeed(name)
}

// A write's body under the context's limit: 413 beyond it (unread), 400 when it breaks off.
const readBody = (context: Context, request: HttpServerRequest.HttpServerRequest) =>
  Effect.mapError(
    Body.read(request, context.maxBodyBytes ?? Body.defaultLimits.durable),
    (error) => Refusal.make(error._tag === "BodyTooLarge" ? 413 : 400, error.message)
  )

const headerOf = (request: HttpServerRequest.HttpServerRequest): Requests.Header => (name) =>
  request.headers[name.toLowerCase()]

// The route's work once the caller is known and the name checked: `name` is the raw
// path; a live read takes a slot of the caller's in the request's scope.
type Work = (
  request: HttpServerRequest.HttpServerRequest,
  url: URL,
  name: string,
  caller: Caller
) => Effect.Effect<HttpServerResponse.HttpServerResponse, Failure, Scope.Scope>

// Authenticates, checks the name and the write scope, then does the work; a reserved
// path goes to the subscription routes when the server serves them.
const serve = <E, R>(
  authenticate: Effect.Effect<Caller, E, R>,
  writes: boolean,
  reserved: Handler<E, R> | undefined,
  work: Work
): Handler<E, R> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { name, url } = pathOf(request)
    if (reserved !== undefined && isReserved(name)) return yield* reserved
    return yield* answered(
      `durable stream ${name}`,
      Refusal.toText,
      Refusal.make,
      Effect.gen(function*() {
        const access = yield* authenticate
        if (!streamNamePattern.test(name)) return yield* Refusal.refuse(400, "invalid stream path")
        if (writes && !access.mayWrite) return yield* Effect.fail(forbidden())
        return yield* work(request, url, name, access)
      })
    )
  })

// The work under the context's settings: the nesting limit of JSON bodies.
const configured = (context: Context, work: Work): Work => {
  const maxJsonDepth = context.maxJsonDepth
  return maxJsonDepth === undefined
    ? work
    : (request, url, name, caller) =>
      Effect.provideService(work(request, url, name, caller), Operations.MaxJsonDepth, maxJsonDepth)
}

// The client store behind a write: 405 under the read-only prefix, 501 without a store.
const writable = (context: Context, name: string): Effect.Effect<DurableStore.DurableStoreService, Failure> => {
  const readOnly = context.readOnly
  if (readOnly !== undefined && name.startsWith(readOnly.prefix)) {
    return Refusal.refuse(405, readOnly.writeRefusal, { allow: "GET, HEAD" })
  }
  return Option.match(context.store, {
    onNone: () => Refusal.refuse(501, "this server keeps no durable streams of its own"),
    onSome: Effect.succeed
  })
}

// The source a read is served from: a read-only stream, or a client stream.
const readable = (context: Context, name: string): Effect.Effect<Source, Failure> => {
  const readOnly = context.readOnly
  if (readOnly !== undefined && name.startsWith(readOnly.prefix)) {
    return Option.match(readOnly.source(name), {
      onNone: () => Effect.fail(Refusal.make(404, "stream not found")),
      onSome: Effect.succeed
    })
  }
  return Option.match(context.store, {
    onNone: () => Refusal.refuse(501, "this server keeps no durable streams of its own"),
    onSome: (store) => Effect.succeed(storeSource(store, name))
  })
}

// A committed write is told to the subscriptions.
const told = <A>(context: Context, name: string, deleted: boolean) => (outcome: A): Effect.Effect<A> =>
  context.subscriptions === undefined ? Effect.succeed(outcome) : Effect.as(
    context.subscriptions.notify(name, deleted),
    outcome
  )

const read = (context: Context): Work => (request, url, name, caller) =>
  Effect.gen(function*() {
    const source = yield* readable(context, name)
    const view = yield* Operations.head(source)
    const etagBase = Buffer.from(name).toString("base64")
    if (request.method.toUpperCase() === "HEAD") return Responses.head(view, etagBase)
    const header = headerOf(request)
    const encoding = Compression.encodingFor(context.compression === true, header("accept-encoding"))
    const readRequest = yield* Requests.readRequest(url.searchParams)
    // a live read holds one of its caller's slots while it waits or streams
    if (readRequest.live !== undefined) yield* caller.liveRead
    if (readRequest.live === "sse") {
      return Responses.sse(source, view, readRequest, context.longPollMs, context.closing)
    }
    const outcome = yield* Operations.read(source, view, readRequest, context.longPollMs)
    return yield* Responses.read(outcome, readRequest, { etagBase, ifNoneMatch: header("if-none-match"), encoding })
  })

const create = (context: Context): Work => (request, url, name) =>
  Effect.gen(function*() {
    const store = yield* writable(context, name)
    const body = yield* readBody(context, request)
    const createRequest = yield* Requests.createRequest(headerOf(request), body, forkSource(context))
    const outcome = yield* Effect.flatMap(Operations.create(store, name, createRequest), told(context, name, false))
    return Responses.created(outcome, `${context.baseUrl ?? "http://localhost"}${url.pathname}`)
  })

const append = (context: Context): Work => (request, _url, name) =>
  Effect.gen(function*() {
    const store = yield* writable(context, name)
    const body = yield* readBody(context, request)
    const appendRequest = yield* Requests.appendRequest(headerOf(request), body)
    return Responses.appended(
      yield* Effect.flatMap(Operations.append(store, name, appendRequest), told(context, name, false))
    )
  })

const remove = (context: Context): Work => (_request, _url, name) =>
  Effect.gen(function*() {
    const store = yield* writable(context, name)
    return Responses.deleted(yield* Effect.flatMap(Operations.remove(store, name), told(context, name, true)))
  })

const notAMethod: (context: Context) => Work = (context) => (request, _url, name) =>
  Effect.flatMap(
    writable(context, name),
    () =>
      Refusal.refuse(405, `${request.method.toUpperCase()} is not a Durable Streams method`, {
        allow: "GET, HEAD, PUT, POST, DELETE"
      })
  )

/** The methods the stream routes refuse with 405 (`OPTIONS` is the preflight). @internal */
export const otherMethods: ReadonlyArray<HttpMethod.HttpMethod> = ["PATCH", "TRACE", "QUERY"]

// Each method's work, and whether it writes.
const works = (context: Context): Readonly<Record<string, readonly [writes: boolean, work: Work]>> => ({
  GET: [false, read(context)],
  HEAD: [false, read(context)],
  PUT: [true, create(context)],
  POST: [true, append(context)],
  DELETE: [true, remove(context)]
})

/**
 * The handler of a method under `/v1/stream/`; `reserved` answers the paths under
 * `__ds/` (none: the server serves no subscriptions, and `__ds/...` is a stream name
 * like any other).
 *
 * @internal
 */
export const handler = <E, R>(
  context: Context,
  authenticate: Effect.Effect<Caller, E, R>,
  reserved: Handler<E, R> | undefined
) => {
  const byMethod = works(context)
  const refused = notAMethod(context)
  return (method: string): Handler<E, R> => {
    const [writes, work] = byMethod[method.toUpperCase()] ?? [true, refused]
    return serve(authenticate, writes, reserved, configured(context, work))
  }
}

/**
 * The stream routes, one per method.
 *
 * @internal
 */
export const routes = <E, R>(
  context: Context,
  authenticate: Effect.Effect<Caller, E, R>,
  reserved: Handler<E, R> | undefined
): ReadonlyArray<HttpRouter.Route<E, Exclude<R, HttpRouter.Provided>>> => {
  const handlerOf = handler(context, authenticate, reserved)
  const methods: ReadonlyArray<HttpMethod.HttpMethod> = ["GET", "HEAD", "PUT", "POST", "DELETE", ...otherMethods]
  return methods.map((method) => HttpRouter.route(method, `${basePath}*`, handlerOf(method)))
}

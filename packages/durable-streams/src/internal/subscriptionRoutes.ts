/**
 * The reserved subscription routes of the Durable Streams protocol, under
 * `/v1/stream/__ds/`:
 *
 * | route | access | answer |
 * |---|---|---|
 * | `GET __ds/jwks.json` | anyone | the webhook signing keys (JWK Set) |
 * | `PUT __ds/subscriptions/:id` | write | 201 created, 200 the same again, 409 another configuration |
 * | `GET __ds/subscriptions/:id` | read | the subscription |
 * | `DELETE __ds/subscriptions/:id` | write | 204 |
 * | `POST __ds/subscriptions/:id/streams` | write | links streams by name (204) |
 * | `DELETE __ds/subscriptions/:id/streams/*` | write | unlinks a stream named (204) |
 * | `POST __ds/subscriptions/:id/callback` | the wake's token | a webhook worker's acks |
 * | `POST __ds/subscriptions/:id/claim` | write | a pull-wake worker takes the wake |
 * | `POST __ds/subscriptions/:id/ack`, `/release` | the claim's token | its acks, its release |
 *
 * Every refusal is `{"error": {"code", "message"}}`. The subscription id (and a
 * stream's path) is checked from the raw request path before anything else (400); the
 * caller is authenticated next (but on the open routes), then its scope checked (403
 * for a write without the write scope), then the method (405). A body is read only
 * after that, up to the route's limit: 413 `PAYLOAD_TOO_LARGE` beyond it, unread.
 *
 * @internal
 */
import { SchemaDecode } from "@sluice/core"
import type { RedisError } from "@sluice/redis"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as Refusal from "../DurableRefusal.js"
import type * as DurableSubscriptions from "../DurableSubscriptions.js"
import * as Body from "../RequestBody.js"
import { answered, authorized, basePath, type Caller, pathOf } from "./routeCommon.js"
import type { Engine } from "./subscriptionEngine.js"
import type { Signer } from "./subscriptionSigning.js"
import {
  AckBody,
  ClaimBody,
  CreateBody,
  decodeBody,
  json,
  refusal,
  refuse,
  StreamPath,
  StreamsBody
} from "./subscriptionWire.js"

const idPattern = /^[\w.~:@-]{1,256}$/
const bearerPattern = /^Bearer[ \t]+(\S+)[ \t]*$/i
const decodePath = SchemaDecode.decodeUnknownOption(StreamPath)

type Failure = Refusal.DurableRefusal | RedisError.RedisError

/**
 * A reserved path, parsed.
 *
 * @internal
 */
export type Route =
  | { readonly _tag: "Jwks" }
  | { readonly _tag: "Subscription"; readonly id: string }
  | { readonly _tag: "Action"; readonly id: string; readonly action: string }
  | { readonly _tag: "Stream"; readonly id: string; readonly path: string }

const decodeSegment = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

const badId = () =>
  refuse(400, "INVALID_REQUEST", "a subscription id is 1 to 256 letters, digits or any of _ . ~ : @ -")

/**
 * The route of a path under `__ds/` as it came (`undefined`: no such route), its id
 * and stream path checked.
 *
 * @internal
 */
export const parse = (path: string): Effect.Effect<Route | undefined, Refusal.DurableRefusal> => {
  if (path === "__ds/jwks.json") return Effect.succeed({ _tag: "Jwks" })
  const parts = path.split("/")
  if (parts[1] !== "subscriptions" || parts.length < 3) return Effect.succeed(undefined)
  const id = decodeSegment(parts[2]!)
  if (id === undefined || !idPattern.test(id)) return badId()
  if (parts.length === 3) return Effect.succeed({ _tag: "Subscription", id })
  if (parts.length === 4) return Effect.succeed({ _tag: "Action", id, action: parts[3]! })
  if (parts[3] !== "streams") return Effect.succeed(undefined)
  const decoded = decodeSegment(parts.slice(4).join("/"))
  const stream = decoded === undefined ? undefined : Option.getOrUndefined(decodePath(decoded))
  return stream === undefined
    ? refuse(400, "INVALID_REQUEST", "the stream path is not a stream name")
    : Effect.succeed({ _tag: "Stream", id, path: stream })
}

/**
 * What the routes are served with: the server's public address (no trailing slash),
 * the start of the URLs written into answers (`jwks_url`, a webhook's `callback_url`),
 * the largest body a route reads, and the deepest nesting of its JSON
 * (docs/http.md#json-nesting).
 *
 * @internal
 */
export interface Settings {
  readonly baseUrl: string
  readonly maxBodyBytes: number
  readonly maxJsonDepth: number
}

const view = (subscription: DurableSubscriptions.Subscription, signer: Option.Option<Signer>, base: string) => ({
  id: subscription.id,
  subscription_id: subscription.id,
  type: subscription.type,
  pattern: subscription.pattern,
  streams: subscription.links.map((link) => ({
    path: link.path,
    link_type: link.explicit ? "explicit" : "glob",
    acked_offset: link.acked
  })),
  webhook: subscription.webhookUrl === undefined ? undefined : {
    url: subscription.webhookUrl,
    signing: Option.getOrUndefined(Option.map(signer, (signing) => ({
      alg: "ed25519",
      kid: signing.kid,
      jwks_url: `${base}/v1/stream/__ds/jwks.json`
    })))
  },
  wake_stream: subscription.wakeStream ?? null,
  lease_ttl_ms: subscription.leaseTtlMs,
  created_at: new Date(subscription.createdAt).toISOString(),
  status: subscription.failures > 0 ? "failed" : "active",
  description: subscription.description
})

const noContent = HttpServerResponse.empty({ status: 204 })

const tokenInvalid = "the bearer token is not a token of this subscription's wakes"

/**
 * One request to a reserved route: the engine, the settings, the request, its raw
 * path under the base path and method, and how its caller is authorized (`writes`:
 * the write scope is needed).
 *
 * @internal
 */
export interface Call<E, R> {
  readonly engine: Engine
  readonly settings: Settings
  readonly request: HttpServerRequest.HttpServerRequest
  readonly name: string
  readonly method: string
  readonly authorize: (writes: boolean) => Effect.Effect<Caller, E | Refusal.DurableRefusal, R>
}

const isRead = (method: string) => method === "GET" || method === "HEAD"

// The caller authorized for the method: the read scope for a read, the write scope else.
const guard = <E, R>(call: Call<E, R>) => call.authorize(!isRead(call.method))

const notAMethod = <E, R>(call: Call<E, R>) =>
  refuse(405, "INVALID_REQUEST", `${call.method} is not a method of ${call.name}`)

const body = <E, R>(call: Call<E, R>) =>
  Effect.mapError(
    Body.read(call.request, call.settings.maxBodyBytes),
    (error) =>
      error._tag === "BodyTooLarge"
        ? refusal(413, "PAYLOAD_TOO_LARGE", error.message)
        : refusal(400, "INVALID_REQUEST", error.message)
  )

// The body decoded with a decoder of `decodeBody`, under the routes' nesting limit.
const decoded = <E, R, A>(
  call: Call<E, R>,
  decode: (body: Uint8Array, maxDepth: number) => Effect.Effect<A, Refusal.DurableRefusal>
) => Effect.flatMap(body(call), (bytes) => decode(bytes, call.settings.maxJsonDepth))

const decodeCreate = decodeBody(CreateBody)
const decodeAck = decodeBody(AckBody)
const decodeStreams = decodeBody(StreamsBody)
const decodeClaim = decodeBody(ClaimBody)

// The wake's token of a callback, ack or release, checked against the subscription
// before the body is read (the engine checks it again with the wake it names).
const bearer = <E, R>(call: Call<E, R>, id: string) =>
  Effect.gen(function*() {
    const match = bearerPattern.exec(call.request.headers.authorization ?? "")
    if (match === null) return yield* refuse(401, "TOKEN_INVALID", "missing Authorization: Bearer <token of the wake>")
    const token = match[1]!
    const claims = (yield* call.engine.signer).verify(token)
    if (Option.isNone(claims) || claims.value.sub !== id) return yield* refuse(401, "TOKEN_INVALID", tokenInvalid)
    return token
  })

type Answer<E, R> = Effect.Effect<HttpServerResponse.HttpServerResponse, E | Failure, R>

/** `__ds/jwks.json`: the signing keys, to anyone. @internal */
export const jwks = <E, R>(call: Call<E, R>): Answer<E, R> =>
  isRead(call.method)
    ? Effect.map(call.engine.signer, (signer) =>
      HttpServerResponse.jsonUnsafe(signer.jwks, {
        headers: { "content-type": "application/jwk-set+json", "cache-control": "public, max-age=300" }
      }))
    : Effect.andThen(guard(call), notAMethod(call))

/** `__ds/subscriptions/:id`: create, read, delete. @internal */
export const subscription = <E, R>(call: Call<E, R>, id: string): Answer<E, R> =>
  Effect.gen(function*() {
    const caller = yield* guard(call)
    const { engine, settings: { baseUrl } } = call
    switch (call.method) {
      case "PUT": {
        const create = yield* decoded(call, decodeCreate)
        const { created, subscription } = yield* engine.create(id, create, baseUrl, caller.subscriber)
        return json(created ? 201 : 200, view(subscription, Option.some(yield* engine.signer), baseUrl))
      }
      case "GET":
      case "HEAD": {
        const found = yield* engine.get(id)
        const signer = found.type === "webhook" ? Option.some(yield* engine.signer) : Option.none()
        return json(200, view(found, signer, baseUrl))
      }
      case "DELETE":
        return yield* Effect.as(engine.remove(id), noContent)
    }
    return yield* notAMethod(call)
  })

/** `__ds/subscriptions/:id/streams/*`: unlinks a stream. @internal */
export const streamLink = <E, R>(call: Call<E, R>, id: string, path: string): Answer<E, R> =>
  Effect.andThen(
    guard(call),
    call.method === "DELETE" ? Effect.as(call.engine.removeStream(id, path), noContent) : notAMethod(call)
  )

// A callback or an ack (a webhook's, a pull-wake worker's): by the wake's token.
const acknowledge = <E, R>(call: Call<E, R>, id: string, action: "callback" | "ack") =>
  Effect.gen(function*() {
    const token = yield* bearer(call, id)
    const ack = yield* decoded(call, decodeAck)
    return json(200, yield* (action === "callback" ? call.engine.callback : call.engine.ack)(id, token, ack))
  })

const release = <E, R>(call: Call<E, R>, id: string) =>
  Effect.gen(function*() {
    const token = yield* bearer(call, id)
    const released = yield* decoded(call, decodeAck)
    return yield* Effect.as(call.engine.release(id, token, released), noContent)
  })

// An action of the server's callers: link streams, claim a wake.
const authorizedAction = <E, R>(call: Call<E, R>, id: string, action: string): Answer<E, R> =>
  Effect.andThen(guard(call), () => {
    if (call.method !== "POST") return notAMethod(call)
    switch (action) {
      case "streams":
        return Effect.flatMap(
          decoded(call, decodeStreams),
          ({ streams }) => Effect.as(call.engine.addStreams(id, streams), noContent)
        )
      case "claim":
        return Effect.map(
          Effect.flatMap(decoded(call, decodeClaim), (claim) => call.engine.claim(id, claim)),
          (claimed) => json(200, claimed)
        )
    }
    return refuse(404, "NOT_FOUND", `no subscription route ${call.name}`)
  })

/** `__ds/subscriptions/:id/:action`: callback, ack and release by the wake's token; streams and claim. @internal */
export const action = <E, R>(call: Call<E, R>, id: string, name: string): Answer<E, R> => {
  if (call.method === "POST") {
    switch (name) {
      case "callback":
      case "ack":
        return acknowledge(call, id, name)
      case "release":
        return release(call, id)
    }
  }
  return authorizedAction(call, id, name)
}

// The answer of a parsed route (none: 404 once the caller is authenticated).
const dispatch = <E, R>(call: Call<E, R>, route: Route | undefined): Answer<E, R> => {
  if (route === undefined) {
    return Effect.andThen(call.authorize(false), refuse(404, "NOT_FOUND", `no subscription route ${call.name}`))
  }
  switch (route._tag) {
    case "Jwks":
      return jwks(call)
    case "Subscription":
      return subscription(call, route.id)
    case "Stream":
      return streamLink(call, route.id, route.path)
    case "Action":
      return action(call, route.id, route.action)
  }
}

/**
 * The answer of a request under `__ds/`: its raw path parsed (ids and stream paths
 * checked, 400), then its route's handler; a refusal or a store error is a JSON
 * answer, and every answer has the common headers. Fails only as `authenticate` does.
 *
 * @internal
 */
export const serve = <E, R>(
  engine: Engine,
  settings: Settings,
  authenticate: Effect.Effect<Caller, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, Exclude<E, Failure>, R | HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { name } = pathOf(request)
    const call: Call<E, R> = {
      engine,
      settings,
      request,
      name,
      method: request.method.toUpperCase(),
      authorize: (writes) =>
        authorized(
          authenticate,
          writes,
          () => refusal(403, "FORBIDDEN", "this token may not change subscriptions")
        )
    }
    return yield* answered(
      `subscription route ${name}`,
      Refusal.toJson,
      (status, message) => refusal(status, status === 503 ? "UNAVAILABLE" : "INTERNAL", message),
      Effect.flatMap(parse(name), (route) => dispatch(call, route))
    )
  })

const reserved = `${basePath}__ds`

// Every method but `OPTIONS` (the preflight's).
const methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "TRACE", "QUERY"] as const

/**
 * The subscription routes: the signing keys, a subscription, its actions and its
 * streams, each answered by `handler` (`serve`), which checks the id and stream path
 * from the raw path (an id the router cannot match, such as one past its parameter
 * length, reaches `serve` through the stream routes' fallback, and is answered the
 * same).
 *
 * @internal
 */
export const routes = <E, R>(
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): ReadonlyArray<HttpRouter.Route<E, Exclude<R, HttpRouter.Provided>>> =>
  methods.flatMap((method) => [
    HttpRouter.route(method, `${reserved}/jwks.json`, handler),
    HttpRouter.route(method, `${reserved}/subscriptions/:id`, handler),
    HttpRouter.route(method, `${reserved}/subscriptions/:id/:action`, handler),
    HttpRouter.route(method, `${reserved}/subscriptions/:id/streams/*`, handler)
  ])

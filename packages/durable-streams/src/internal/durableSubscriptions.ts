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
 * | `DELETE __ds/subscriptions/:id/streams/:path` | write | unlinks a stream named (204) |
 * | `POST __ds/subscriptions/:id/callback` | the wake's token | a webhook worker's acks |
 * | `POST __ds/subscriptions/:id/claim` | write | a pull-wake worker takes the wake |
 * | `POST __ds/subscriptions/:id/ack`, `/release` | the claim's token | its acks, its release |
 *
 * Every refusal is `{"error": {"code", "message"}}`. A body is read only once the
 * request's credentials are checked (the server's token, or the wake's own token on
 * the callback, ack and release routes), and up to the route's limit: 413
 * `PAYLOAD_TOO_LARGE` beyond it, unread.
 *
 * @internal
 */
import { SchemaDecode } from "@sluice/core"
import type { RedisError } from "@sluice/redis"
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import type { Access } from "../DurableStreams.js"
import type * as DurableSubscriptions from "../DurableSubscriptions.js"
import * as Body from "../RequestBody.js"
import type { Engine } from "./subscriptionEngine.js"
import type { Signer } from "./subscriptionSigning.js"
import {
  AckBody,
  ClaimBody,
  CreateBody,
  decodeBody,
  json,
  refusalResponse,
  refuse,
  StreamPath,
  StreamsBody,
  SubscriptionRefusal
} from "./subscriptionWire.js"

const idPattern = /^[\w.~:@-]{1,256}$/
const bearerPattern = /^Bearer[ \t]+(\S+)[ \t]*$/i
const decodePath = SchemaDecode.decodeUnknownOption(StreamPath)

type Route =
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

// The route of a path under `__ds/` (`undefined`: no such route).
const routeOf = (path: string): Effect.Effect<Route | undefined, SubscriptionRefusal> => {
  if (path === "__ds/jwks.json") return Effect.succeed({ _tag: "Jwks" })
  const parts = path.split("/")
  if (parts[1] !== "subscriptions" || parts.length < 3) return Effect.succeed(undefined)
  const id = decodeSegment(parts[2]!)
  if (id === undefined || !idPattern.test(id)) {
    return refuse(
      400,
      "INVALID_REQUEST",
      "a subscription id is 1 to 256 letters, digits or any of _ . ~ : @ -"
    )
  }
  if (parts.length === 3) return Effect.succeed({ _tag: "Subscription", id })
  if (parts.length === 4) return Effect.succeed({ _tag: "Action", id, action: parts[3]! })
  if (parts[3] !== "streams") return Effect.succeed(undefined)
  const decoded = decodeSegment(parts.slice(4).join("/"))
  const stream = decoded === undefined ? undefined : Option.getOrUndefined(decodePath(decoded))
  return stream === undefined
    ? refuse(400, "INVALID_REQUEST", "the stream path is not a stream name")
    : Effect.succeed({ _tag: "Stream", id, path: stream })
}

const isOpen = (method: string, route: Route | undefined): boolean =>
  route !== undefined && (
    (route._tag === "Jwks" && (method === "GET" || method === "HEAD")) ||
    (route._tag === "Action" && method === "POST" && ["callback", "ack", "release"].includes(route.action))
  )

/**
 * What the routes are served with: the server's public address (no trailing slash),
 * the start of the URLs written into answers (`jwks_url`, a webhook's `callback_url`),
 * and the largest body a route reads.
 *
 * @internal
 */
export interface Settings {
  readonly baseUrl: string
  readonly maxBodyBytes: number
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

const bodyOf = (request: HttpServerRequest.HttpServerRequest, limit: number) =>
  Effect.mapError(
    Body.read(request, limit),
    (error) =>
      error._tag === "BodyTooLarge"
        ? new SubscriptionRefusal(413, "PAYLOAD_TOO_LARGE", error.message)
        : new SubscriptionRefusal(400, "INVALID_REQUEST", error.message)
  )

const tokenInvalid = "the bearer token is not a token of this subscription's wakes"

// The wake's token of a callback, ack or release, checked against the subscription
// before the body is read (the engine checks it again with the wake it names).
const bearer = (engine: Engine, request: HttpServerRequest.HttpServerRequest, id: string) =>
  Effect.gen(function*() {
    const match = bearerPattern.exec(request.headers.authorization ?? "")
    if (match === null) return yield* refuse(401, "TOKEN_INVALID", "missing Authorization: Bearer <token of the wake>")
    const token = match[1]!
    const claims = (yield* engine.signer).verify(token)
    if (Option.isNone(claims) || claims.value.sub !== id) return yield* refuse(401, "TOKEN_INVALID", tokenInvalid)
    return token
  })

/**
 * Answers a request for the reserved routes: `credentials` of an authenticated
 * request, or none for a request that has not been (only the routes that anyone or a
 * wake's token may use are answered then: `undefined` for the others, which go
 * through authentication first).
 *
 * @internal
 */
export const handle = (
  engine: Engine,
  request: HttpServerRequest.HttpServerRequest,
  name: string,
  credentials: Option.Option<Access>,
  settings: Settings
): Effect.Effect<HttpServerResponse.HttpServerResponse | undefined> => {
  const method = request.method.toUpperCase()
  return Effect.gen(function*() {
    const route = yield* routeOf(name)
    const open = isOpen(method, route)
    if (Option.isNone(credentials) && !open) return undefined
    if (route === undefined) return yield* refuse(404, "NOT_FOUND", `no subscription route ${name}`)
    const writes = method !== "GET" && method !== "HEAD"
    if (!open && writes && Option.isSome(credentials) && !credentials.value.mayWrite) {
      return yield* refuse(403, "FORBIDDEN", "this token may not change subscriptions")
    }
    const base = settings.baseUrl
    const body = bodyOf(request, settings.maxBodyBytes)
    switch (route._tag) {
      case "Jwks": {
        if (!open) break
        const signer = yield* engine.signer
        return HttpServerResponse.jsonUnsafe(signer.jwks, {
          headers: { "content-type": "application/jwk-set+json", "cache-control": "public, max-age=300" }
        })
      }
      case "Subscription": {
        if (method === "PUT") {
          const create = yield* Effect.flatMap(body, decodeBody(CreateBody))
          const { created, subscription } = yield* engine.create(route.id, create, base)
          return json(created ? 201 : 200, view(subscription, Option.some(yield* engine.signer), base))
        }
        if (method === "GET" || method === "HEAD") {
          const subscription = yield* engine.get(route.id)
          const signer = subscription.type === "webhook" ? Option.some(yield* engine.signer) : Option.none()
          return json(200, view(subscription, signer, base))
        }
        if (method === "DELETE") {
          return yield* Effect.as(engine.remove(route.id), HttpServerResponse.empty({ status: 204 }))
        }
        break
      }
      case "Stream": {
        if (method !== "DELETE") break
        return yield* Effect.as(engine.removeStream(route.id, route.path), HttpServerResponse.empty({ status: 204 }))
      }
      case "Action": {
        if (method !== "POST") break
        switch (route.action) {
          case "streams": {
            const { streams } = yield* Effect.flatMap(body, decodeBody(StreamsBody))
            return yield* Effect.as(engine.addStreams(route.id, streams), HttpServerResponse.empty({ status: 204 }))
          }
          case "claim":
            return json(200, yield* engine.claim(route.id, yield* Effect.flatMap(body, decodeBody(ClaimBody))))
          case "callback":
          case "ack": {
            const token = yield* bearer(engine, request, route.id)
            const ack = yield* Effect.flatMap(body, decodeBody(AckBody))
            return json(
              200,
              yield* (route.action === "callback" ? engine.callback : engine.ack)(route.id, token, ack)
            )
          }
          case "release": {
            const token = yield* bearer(engine, request, route.id)
            const release = yield* Effect.flatMap(body, decodeBody(AckBody))
            return yield* Effect.as(engine.release(route.id, token, release), HttpServerResponse.empty({ status: 204 }))
          }
        }
        return yield* refuse(404, "NOT_FOUND", `no subscription route ${name}`)
      }
    }
    return yield* refuse(405, "INVALID_REQUEST", `${method} is not a method of ${name}`)
  }).pipe(
    Effect.catch((error: SubscriptionRefusal | RedisError.RedisError) =>
      error instanceof SubscriptionRefusal
        ? Effect.succeed(refusalResponse(error))
        : Effect.as(
          Effect.logError(`subscription route ${name}: ${error.message}`),
          refusalResponse(
            error.reason === "Unavailable"
              ? new SubscriptionRefusal(503, "UNAVAILABLE", "Redis is unavailable, try again later")
              : new SubscriptionRefusal(500, "INTERNAL", `Redis refused ${error.command}`)
          )
        )
    )
  )
}

/**
 * The protocol's routes served alone, as an application's router serves them:
 * `DurableStreams.routes` in an `HttpRouter` of their own, answering one request.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerError from "effect/http/HttpServerError"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as DurableStreams from "../../src/DurableStreams.js"

/**
 * The answer of the routes to `request`, its caller found by `authenticate` (which
 * may die where a test wants no authentication; a request that no route matches dies:
 * every path under `/v1/stream/` has one), with what the application counts per
 * caller (`callers`).
 */
export const serve = <A extends DurableStreams.Access>(
  context: DurableStreams.Context,
  request: HttpServerRequest.HttpServerRequest,
  authenticate: Effect.Effect<A>,
  callers: DurableStreams.Callers<A> = {}
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.gen(function*() {
    const app = yield* HttpRouter.toHttpEffect(
      HttpRouter.addAll(DurableStreams.routes(context, authenticate, callers))
    )
    return yield* app
  }).pipe(
    Effect.catchIf(HttpServerError.isHttpServerError, Effect.die),
    Effect.scoped,
    Effect.provideService(HttpServerRequest.HttpServerRequest, request)
  )

/**
 * Every request observed: a span, one access log line, and the request metrics.
 * Neither the span nor the log ever holds a credential: query parameters that carry
 * one (`access_token` and any `*token*`, `*key*`, `*secret*`, `*password*`) are
 * replaced by `REDACTED`, and no header is recorded.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpTraceContext from "effect/http/HttpTraceContext"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import { AccessLog } from "../AccessLog.js"
import { httpDuration, httpRequests, snapshotBytes } from "./serverMetrics.js"

const secretParam = /token|key|secret|password|auth/i

/**
 * A request URL (path and query) with the values of credential-bearing query
 * parameters replaced by `REDACTED`.
 *
 * @internal
 */
export const redactUrl = (url: string): string => {
  const query = url.indexOf("?")
  if (query < 0) return url
  const parts = url.slice(query + 1).split("&").map((part) => {
    const equals = part.indexOf("=")
    const rawName = equals < 0 ? part : part.slice(0, equals)
    let name = rawName
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, " "))
    } catch {
      // a malformed escape: judged as written
    }
    return secretParam.test(name) ? `${rawName}=REDACTED` : part
  })
  return `${url.slice(0, query)}?${parts.join("&")}`
}

const turnRoute = /^\/v1\/turns\/[^/?]+(\/(upserts|events|ui-message-stream|cancel))?\/?$/

/**
 * The route a path is served by, with the turn id as `:turnId` and a Durable Streams
 * path as `:path` (`/v1/stream/:path`, and `/v1/stream/__ds` for the subscription
 * APIs): what a span is named after and the metrics are tagged with, one of a fixed
 * set of values whatever the path (anything else is `other`).
 *
 * @internal
 */
export const routeOf = (path: string): string => {
  if (path === "/v1/turns" || path === "/v1/turns/") return "/v1/turns"
  const match = turnRoute.exec(path)
  if (match !== null) return match[2] === undefined ? "/v1/turns/:turnId" : `/v1/turns/:turnId/${match[2]}`
  if (path === "/v1/stream/__ds" || path.startsWith("/v1/stream/__ds/")) return "/v1/stream/__ds"
  if (path.startsWith("/v1/stream/") && path.length > "/v1/stream/".length) return "/v1/stream/:path"
  if (path === "/healthz" || path === "/readyz" || path === "/metrics") return path
  if (path === "/" || path === "/viewer.js" || path === "/viewer.css") return path
  return "other"
}

/**
 * The app with each request in a span `http <METHOD> <route>` (method, route, the
 * redacted target, the status), logged once it is answered when `AccessLog` is on (`<METHOD> <target>
 * <status> <ms>ms`, with the same as log annotations), and counted. The span is a
 * child of the request's own trace context (`traceparent`, B3) when it has one. A
 * stream's span and log come when its head is sent; the stream itself has its own
 * span.
 *
 * @internal
 */
export const observed = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const target = redactUrl(request.url)
    const query = target.indexOf("?")
    const path = query < 0 ? target : target.slice(0, query)
    const route = routeOf(path)
    const start = yield* Clock.currentTimeNanos
    const parent = HttpTraceContext.fromHeaders(request.headers)
    return yield* app.pipe(
      Effect.tap((response) => Effect.annotateCurrentSpan("http.response.status_code", response.status)),
      Effect.onExit((exit) =>
        Effect.gen(function*() {
          const seconds = Number((yield* Clock.currentTimeNanos) - start) / 1e9
          // a request whose client went away before its answer: nginx's 499
          const status = Exit.isSuccess(exit) ? exit.value.status : Exit.hasInterrupts(exit) ? 499 : 500
          const body = Exit.isSuccess(exit) ? exit.value.body : undefined
          if (route === "/v1/turns/:turnId" && status === 200 && body !== undefined && body._tag !== "Empty") {
            if (body.contentLength !== undefined) yield* Metric.update(snapshotBytes, body.contentLength)
          }
          yield* Metric.update(httpRequests(request.method, route, status), 1)
          yield* Metric.update(httpDuration(route), seconds)
          if (yield* AccessLog) {
            yield* Effect.logInfo(`${request.method} ${target} ${status} ${Math.round(seconds * 1000)}ms`).pipe(
              Effect.annotateLogs({
                method: request.method,
                path,
                status,
                durationMs: Math.round(seconds * 1e6) / 1000
              })
            )
          }
        })
      ),
      Effect.withSpan(`http ${request.method} ${route}`, {
        kind: "server",
        attributes: {
          "http.request.method": request.method,
          "http.route": route,
          "url.path": path,
          "url.target": target
        },
        ...(Option.isSome(parent) ? { parent: parent.value } : {})
      })
    )
  })

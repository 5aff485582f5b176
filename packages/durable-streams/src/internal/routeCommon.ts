/**
 * What the protocol's routes share: the base path, the CORS and safety headers of
 * every answer, the stream name of a request (its raw path under the base path), the
 * caller's scope check, and the answer of a failure (a refusal, or the store's error).
 *
 * @internal
 */
import { RedisError } from "@sluice/redis"
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Scope from "effect/Scope"
import { DurableRefusal } from "../DurableRefusal.js"
import type { Access, Callers } from "../DurableStreams.js"

/** The path prefix of the protocol. @internal */
export const basePath = "/v1/stream/"

/** The headers of every answer under the base path. @internal */
export const commonHeaders: Readonly<Record<string, string>> = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, POST, PUT, DELETE, HEAD, OPTIONS",
  "access-control-allow-headers":
    "content-type, authorization, Stream-Seq, Stream-TTL, Stream-Expires-At, Stream-Closed, Producer-Id, Producer-Epoch, Producer-Seq, If-None-Match, Stream-Forked-From, Stream-Fork-Offset, Stream-Fork-Sub-Offset",
  "access-control-expose-headers":
    "Stream-Next-Offset, Stream-Cursor, Stream-Up-To-Date, Stream-Closed, Producer-Epoch, Producer-Seq, Producer-Expected-Seq, Producer-Received-Seq, etag, content-type, location",
  "x-content-type-options": "nosniff",
  "cross-origin-resource-policy": "cross-origin"
}

/**
 * The request's URL, and its path under the base path as it came (percent-escapes
 * kept: a stream's name is its raw path).
 *
 * @internal
 */
export const pathOf = (request: HttpServerRequest.HttpServerRequest): { readonly url: URL; readonly name: string } => {
  const url = new URL(request.url, "http://localhost")
  return { url, name: url.pathname.slice(basePath.length) }
}

/**
 * A caller as the routes take it: its write scope, the slot its live reads take, and
 * the key its subscriptions are counted under (none: not counted).
 *
 * @internal
 */
export interface Caller extends Access {
  readonly liveRead: Effect.Effect<void, DurableRefusal, Scope.Scope>
  readonly subscriber: string | undefined
}

/**
 * The caller of an `Access`, under the application's `Callers`.
 *
 * @internal
 */
export const callerOf = <A extends Access>(callers: Callers<A>) => {
  const { liveRead, subscriber } = callers
  return (access: A): Caller => ({
    mayWrite: access.mayWrite,
    liveRead: liveRead === undefined ? Effect.void : Effect.suspend(() => liveRead(access)),
    subscriber: subscriber?.(access)
  })
}

/**
 * The caller's `Access` once `authenticate` found it, refused (`forbidden`) when the
 * request writes and the caller may not.
 *
 * @internal
 */
export const authorized = <A extends Access, E, R>(
  authenticate: Effect.Effect<A, E, R>,
  writes: boolean,
  forbidden: () => DurableRefusal
): Effect.Effect<A, E | DurableRefusal, R> =>
  Effect.flatMap(
    authenticate,
    (access) => writes && !access.mayWrite ? Effect.fail(forbidden()) : Effect.succeed(access)
  )

/**
 * An answer whose refusals and store errors are answers too (rendered by `render`;
 * a store error logged, and answered 503 when Redis is unavailable, else 500), with
 * the common headers. Only the caller's authentication fails.
 *
 * @internal
 */
export const answered = <E, R>(
  what: string,
  render: (refusal: DurableRefusal) => HttpServerResponse.HttpServerResponse,
  fromStore: (status: 500 | 503, message: string) => DurableRefusal,
  effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E | DurableRefusal | RedisError.RedisError, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, Exclude<E, DurableRefusal | RedisError.RedisError>, R> =>
  effect.pipe(
    Effect.catchIf(
      (error): error is DurableRefusal | RedisError.RedisError =>
        error instanceof DurableRefusal || error instanceof RedisError.RedisError,
      (error) =>
        error instanceof DurableRefusal
          ? Effect.succeed(render(error))
          : Effect.as(
            Effect.logError(`${what}: ${error.message}`),
            render(
              error.reason === "Unavailable"
                ? fromStore(503, "Redis is unavailable, try again later")
                : fromStore(500, `Redis refused ${error.command}`)
            )
          )
    ),
    Effect.map((response) => HttpServerResponse.setHeaders(response, commonHeaders))
  )

/**
 * Reading a request body under a limit, in one pass: a body whose `Content-Length`
 * is over the limit is refused before a byte of it is read; any other is read chunk
 * by chunk, the chunks kept as they arrive (never copied into a growing buffer), and
 * refused as soon as what has arrived goes over the limit, without reading the rest
 * (the HTTP server closes the connection after the answer rather than read it). The
 * chunks are joined once, at the end: every byte is copied once, so reading a body
 * costs time linear in its size.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Stream from "effect/Stream"

/**
 * A body over its route's limit: the limit, and the `Content-Length` the request
 * declared when it declared one (none: the body went over while it was read).
 *
 * @since 0.3.0
 */
export class BodyTooLarge {
  readonly _tag = "BodyTooLarge"
  constructor(readonly limit: number, readonly declared: number | undefined) {}

  /** What the answer says. */
  get message(): string {
    return this.declared === undefined
      ? `the request body is larger than ${this.limit} bytes, this route's limit`
      : `the request body (Content-Length ${this.declared}) is larger than ${this.limit} bytes, this route's limit`
  }
}

/**
 * A body that could not be read (the client went away, a malformed chunked encoding).
 *
 * @since 0.3.0
 */
export class BodyUnreadable {
  readonly _tag = "BodyUnreadable"
  readonly message = "the request body could not be read"
}

/**
 * Joins the chunks of a body, `total` bytes in all, into one array: the one copy a
 * body's bytes go through.
 *
 * @since 0.3.0
 */
export type Join = (chunks: ReadonlyArray<Uint8Array>, total: number) => Uint8Array

const join: Join = (chunks, total) => {
  const joined = new Uint8Array(total)
  let at = 0
  for (const chunk of chunks) {
    joined.set(chunk, at)
    at += chunk.length
  }
  return joined
}

/**
 * The default limits: a Durable Streams write's body (8 MiB) and a subscription
 * route's (1 MiB).
 *
 * @since 0.3.0
 */
export const defaultLimits = { durable: 8 * 1024 * 1024, subscription: 1024 * 1024 } as const

const lengthPattern = /^\d{1,16}$/

/**
 * The body length a request declares in `Content-Length`; none without one (a
 * chunked body), or for a value that is not a length (Node's parser refuses those
 * before a request reaches the app).
 *
 * @since 0.3.0
 */
export const declaredLength = (headers: Readonly<Record<string, string | undefined>>): number | undefined => {
  const value = headers["content-length"]?.trim()
  return value !== undefined && lengthPattern.test(value) ? Number(value) : undefined
}

/**
 * The bytes of a stream of chunks, refused with `BodyTooLarge` as soon as they go over
 * `limit` (no chunk after that one is pulled). Several chunks are joined once, at the
 * end, by `joinWith` (given by tests to count the joins); one chunk is the body.
 *
 * @since 0.3.0
 */
export const collect = <E>(
  chunks: Stream.Stream<Uint8Array, E>,
  limit: number,
  joinWith: Join = join
): Effect.Effect<Uint8Array, E | BodyTooLarge> =>
  Effect.suspend(() => {
    const parts: Array<Uint8Array> = []
    let total = 0
    return chunks.pipe(
      Stream.runForEachArray((array) => {
        for (const chunk of array) {
          total += chunk.length
          if (total > limit) return Effect.fail(new BodyTooLarge(limit, undefined))
          if (chunk.length > 0) parts.push(chunk)
        }
        return Effect.void
      }),
      Effect.map(() => parts.length === 0 ? new Uint8Array(0) : parts.length === 1 ? parts[0]! : joinWith(parts, total))
    )
  })

/**
 * The body of a request, at most `limit` bytes: refused with `BodyTooLarge` unread
 * when its `Content-Length` is over the limit, or once what has been read goes over
 * it; `BodyUnreadable` when the body breaks off.
 *
 * @since 0.3.0
 */
export const read = (
  request: HttpServerRequest.HttpServerRequest,
  limit: number
): Effect.Effect<Uint8Array, BodyTooLarge | BodyUnreadable> => {
  const declared = declaredLength(request.headers)
  if (declared !== undefined && declared > limit) return Effect.fail(new BodyTooLarge(limit, declared))
  return Effect.mapError(
    collect(request.stream, limit),
    (error) => error instanceof BodyTooLarge ? error : new BodyUnreadable()
  )
}

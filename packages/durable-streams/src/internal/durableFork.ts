/**
 * Creating a fork (`PUT` with `Stream-Forked-From`): a stream that reads its source up
 * to a fork offset (and, with a sub-offset, the first bytes or JSON values of the
 * source's next entry, copied into the fork), then its own appends. The fork inherits
 * its source's content type and TTL or expiry time unless the request gives its own;
 * it starts open, with no producers.
 *
 * @internal
 */
import type { RedisError } from "@sluice/redis"
import * as Effect from "effect/Effect"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Response from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import { expiryOf } from "../DurableSource.js"
import type * as DurableStore from "../DurableStore.js"
import { notAfter, Refusal, refuse } from "./durableRead.js"
import * as Wire from "./durableWire.js"
import { type CreateRequest, type ForkRequest, goneConflict, storedBody } from "./durableWrite.js"

const sourceMissing = new Refusal(404, "the source stream does not exist")
const sourceGone = new Refusal(409, "the source stream was deleted or has expired: it cannot be forked")
const beyondTail = (at: string, tail: string) =>
  new Refusal(400, `Stream-Fork-Offset ${Wire.offsetOf(at)} is past the source's tail ${Wire.offsetOf(tail)}`)

const created = (status: number, contentType: string, tail: string, closed: boolean, location?: string) =>
  Response.empty({
    status,
    headers: {
      "content-type": contentType,
      [Wire.headers.nextOffset]: Wire.offsetOf(tail),
      ...(location === undefined ? {} : { location }),
      ...(closed ? { [Wire.headers.closed]: "true" } : {})
    }
  })

// A `PUT` of a fork that exists: 200 when it is the same fork with the same settings.
const confirm = (state: DurableStore.DurableState, request: CreateRequest, fork: ForkRequest) => {
  if (state.gone) return Effect.fail(goneConflict)
  const meta = state.meta
  const point = state.forkOf
  const same = Option.isSome(point) && point.value.source === fork.source &&
    (fork.at === undefined || fork.at === point.value.at) && Number(meta.fsub ?? "0") === fork.sub &&
    (!request.typeGiven || Wire.mediaType(meta.ct) === Wire.mediaType(request.contentType)) &&
    (request.ttl === undefined || request.ttl === meta.ttl) &&
    (request.expiresAt === undefined || request.expiresAt === meta.exp) &&
    (meta.closed === "1") === request.closed
  return same
    ? Effect.succeed(created(200, meta.ct ?? request.contentType, state.tail, meta.closed === "1"))
    : refuse(409, "the stream exists with other settings")
}

// The part of the source's entry after the fork offset that a sub-offset takes.
const subOffsetPrefix = (
  store: DurableStore.DurableStoreService,
  fork: ForkRequest,
  at: string,
  contentType: string
) =>
  Effect.gen(function*() {
    if (fork.sub === 0) return []
    const [next] = yield* store.read(fork.source, at, 1)
    if (next === undefined) {
      return yield* refuse(400, "Stream-Fork-Sub-Offset: the source has no entry after the fork offset")
    }
    const prefix = Wire.entryPrefix(Wire.isJson(contentType), next.data, fork.sub)
    if (prefix === undefined) {
      return yield* refuse(
        400,
        `Stream-Fork-Sub-Offset ${fork.sub} is past the end of the source's entry after the fork offset`
      )
    }
    return [prefix]
  })

/**
 * `PUT` with `Stream-Forked-From`: creates the fork (201), or confirms the same fork
 * (200); 404 when the source does not exist, 409 when it is gone (deleted or expired,
 * kept for its forks), has another content type, or the name is taken by another
 * stream; 400 for a fork offset past the source's tail or a sub-offset past its entry.
 *
 * @internal
 */
export const create = (
  store: DurableStore.DurableStoreService,
  name: string,
  request: CreateRequest,
  fork: ForkRequest
): Effect.Effect<HttpServerResponse.HttpServerResponse, Refusal | RedisError.RedisError> =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 100; attempt++) {
      const existing = yield* store.load(name)
      if (Option.isSome(existing)) return yield* confirm(existing.value, request, fork)
      const loaded = yield* store.load(fork.source)
      if (Option.isNone(loaded)) return yield* Effect.fail(sourceMissing)
      const source = loaded.value
      if (source.gone) return yield* Effect.fail(sourceGone)
      const sourceType = source.meta.ct ?? "application/octet-stream"
      if (request.typeGiven && Wire.mediaType(request.contentType) !== Wire.mediaType(sourceType)) {
        return yield* refuse(409, `the source stream's content type is ${sourceType}, not ${request.contentType}`)
      }
      const at = fork.at ?? source.tail
      if (!notAfter(at, source.tail)) return yield* Effect.fail(beyondTail(at, source.tail))
      const set: Record<string, string> = { ct: request.typeGiven ? request.contentType : sourceType }
      const ttl = request.ttl ?? (request.expiresAt === undefined ? source.meta.ttl : undefined)
      const exp = request.expiresAt ?? (request.ttl === undefined ? source.meta.exp : undefined)
      if (ttl !== undefined) set.ttl = ttl
      if (exp !== undefined) set.exp = exp
      if (request.closed) set.closed = "1"
      if (fork.sub > 0) set.fsub = String(fork.sub)
      const append = [
        ...(yield* subOffsetPrefix(store, fork, at, set.ct!)),
        ...(yield* storedBody(set.ct!, request.body, true))
      ]
      const outcome = yield* store.fork(name, { source: fork.source, at, set, append, expiry: expiryOf(set) })
      switch (outcome._tag) {
        case "Forked":
          return created(201, set.ct!, outcome.ids[outcome.ids.length - 1] ?? at, request.closed, request.location)
        case "SourceMissing":
          return yield* Effect.fail(sourceMissing)
        case "SourceGone":
          return yield* Effect.fail(sourceGone)
        case "BeyondTail":
          return yield* Effect.fail(beyondTail(at, outcome.tail))
        case "Exists":
          continue
      }
    }
    return yield* refuse(503, "too many concurrent writers, try again")
  })

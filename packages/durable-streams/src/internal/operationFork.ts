/**
 * The fork operation: a stream that reads its source up to a fork offset (and, with a
 * sub-offset, the first bytes or JSON values of the source's next entry, copied into
 * the fork), then its own appends. The fork inherits its source's content type and TTL
 * or expiry time unless the request gives its own; it starts open, with no producers.
 *
 * @internal
 */
import type { RedisError } from "@sluice/redis"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { CreateOutcome, CreateRequest, ForkRequest } from "../DurableOperations.js"
import * as Refusal from "../DurableRefusal.js"
import { expiryOf } from "../DurableSource.js"
import type * as DurableStore from "../DurableStore.js"
import * as Wire from "./durableWire.js"
import { notAfter } from "./operationRead.js"
import { goneConflict, storedBody } from "./operationWrite.js"

const sourceMissing = Refusal.make(404, "the source stream does not exist")
const sourceGone = Refusal.make(409, "the source stream was deleted or has expired: it cannot be forked")
const tooDeep = (depth: number, limit: number) =>
  Refusal.make(
    400,
    `the source stream is a fork ${depth} levels deep: a fork of it would be ${
      depth + 1
    }, and forks go at most ${limit} levels deep`
  )
const beyondTail = (at: string, tail: string) =>
  Refusal.make(400, `Stream-Fork-Offset ${Wire.offsetOf(at)} is past the source's tail ${Wire.offsetOf(tail)}`)

// A create of a fork that exists: `Exists` when it is the same fork with the same settings.
const confirm = (
  state: DurableStore.DurableState,
  request: CreateRequest,
  fork: ForkRequest
): Effect.Effect<CreateOutcome, Refusal.DurableRefusal> => {
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
    ? Effect.succeed({
      _tag: "Exists",
      contentType: meta.ct ?? request.contentType,
      tail: state.tail,
      closed: meta.closed === "1"
    })
    : Refusal.refuse(409, "the stream exists with other settings")
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
      return yield* Refusal.refuse(400, "Stream-Fork-Sub-Offset: the source has no entry after the fork offset")
    }
    const prefix = Wire.entryPrefix(Wire.isJson(contentType), next.data, fork.sub)
    if (prefix === undefined) {
      return yield* Refusal.refuse(
        400,
        `Stream-Fork-Sub-Offset ${fork.sub} is past the end of the source's entry after the fork offset`
      )
    }
    return [prefix]
  })

// The fork's settings: the request's, else its source's.
const settingsOf = (request: CreateRequest, fork: ForkRequest, source: DurableStore.DurableState, ct: string) => {
  const set: Record<string, string> = { ct }
  const ttl = request.ttl ?? (request.expiresAt === undefined ? source.meta.ttl : undefined)
  const exp = request.expiresAt ?? (request.ttl === undefined ? source.meta.exp : undefined)
  if (ttl !== undefined) set.ttl = ttl
  if (exp !== undefined) set.exp = exp
  if (request.closed) set.closed = "1"
  if (fork.sub > 0) set.fsub = String(fork.sub)
  return set
}

/**
 * Creates the fork, or confirms the same fork.
 *
 * @internal
 */
export const create = (
  store: DurableStore.DurableStoreService,
  name: string,
  request: CreateRequest,
  fork: ForkRequest
): Effect.Effect<CreateOutcome, Refusal.DurableRefusal | RedisError.RedisError> =>
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
        return yield* Refusal.refuse(
          409,
          `the source stream's content type is ${sourceType}, not ${request.contentType}`
        )
      }
      const at = fork.at ?? source.tail
      if (!notAfter(at, source.tail)) return yield* Effect.fail(beyondTail(at, source.tail))
      const ct = request.typeGiven ? request.contentType : sourceType
      const set = settingsOf(request, fork, source, ct)
      const append = [...(yield* subOffsetPrefix(store, fork, at, ct)), ...(yield* storedBody(ct, request.body, true))]
      const outcome = yield* store.fork(name, { source: fork.source, at, set, append, expiry: expiryOf(set) })
      switch (outcome._tag) {
        case "Forked":
          return {
            _tag: "Created",
            contentType: ct,
            tail: outcome.ids[outcome.ids.length - 1] ?? at,
            closed: request.closed
          } satisfies CreateOutcome
        case "SourceMissing":
          return yield* Effect.fail(sourceMissing)
        case "SourceGone":
          return yield* Effect.fail(sourceGone)
        case "TooDeep":
          return yield* Effect.fail(tooDeep(outcome.depth, outcome.limit))
        case "BeyondTail":
          return yield* Effect.fail(beyondTail(at, outcome.tail))
        case "Exists":
          continue
      }
    }
    return yield* Refusal.refuse(503, "too many concurrent writers, try again")
  })

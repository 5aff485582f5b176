/**
 * The write operations over a stream that clients own: create, append (and close),
 * delete. Each decides over the stream's state as loaded and commits conditionally on
 * its version, again from a fresh load when another writer committed in between.
 *
 * @internal
 */
import { Json } from "@sluice/core"
import type { RedisError } from "@sluice/redis"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type {
  AppendOutcome,
  AppendRequest,
  CreateOutcome,
  CreateRequest,
  DeleteOutcome,
  Producer
} from "../DurableOperations.js"
import * as Refusal from "../DurableRefusal.js"
import { expiryOf } from "../DurableSource.js"
import type * as DurableStore from "../DurableStore.js"
import * as Wire from "./durableWire.js"

type Decision<A> =
  | { readonly _tag: "Done"; readonly outcome: A }
  | { readonly _tag: "Commit"; readonly commit: DurableStore.Commit; readonly outcome: (tail: string) => A }

const done = <A>(outcome: A): Decision<A> => ({ _tag: "Done", outcome })

/** @internal */
export const notFound = Refusal.make(404, "stream not found")

/** @internal */
export const gone = Refusal.make(
  410,
  "the stream was deleted or has expired; its data is kept only for the forks that read it"
)

const tailOf = (store: DurableStore.DurableStoreService, name: string) =>
  Effect.map(store.load(name), (state) => Option.match(state, { onNone: () => "0-0", onSome: (s) => s.tail }))

// Decides over the loaded state and commits, again while other writers get in between.
const decideAndCommit = <A>(
  store: DurableStore.DurableStoreService,
  name: string,
  decide: (state: Option.Option<DurableStore.DurableState>) => Effect.Effect<Decision<A>, Refusal.DurableRefusal>
): Effect.Effect<A, Refusal.DurableRefusal | RedisError.RedisError> =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 1000; attempt++) {
      const decision = yield* decide(yield* store.load(name))
      if (decision._tag === "Done") return decision.outcome
      const committed = yield* store.commit(name, decision.commit)
      if (Option.isSome(committed)) {
        const ids = committed.value
        const tail = ids.length > 0 ? ids[ids.length - 1]! : undefined
        return decision.outcome(tail ?? (yield* tailOf(store, name)))
      }
    }
    return yield* Refusal.refuse(503, "too many concurrent writers, try again")
  })

const jsonRefusal = (refused: Wire.JsonRefusal) =>
  refused === "invalid"
    ? Refusal.make(400, "the body is not valid JSON")
    : refused === "empty_array"
    ? Refusal.make(400, "an empty JSON array appends nothing")
    : Refusal.make(400, refused.message)

/**
 * The deepest nesting a JSON body of a stream may have (docs/http.md#json-nesting):
 * `Json.defaultMaxDepth` (128) unless the routes provide their context's
 * `maxJsonDepth`.
 *
 * @internal
 */
export const MaxJsonDepth: Context.Reference<number> = Context.Reference<number>(
  "@sluice/durable-streams/MaxJsonDepth",
  { defaultValue: () => Json.defaultMaxDepth }
)

/** The entries a body is stored as. @internal */
export const storedBody = (
  contentType: string,
  body: Uint8Array,
  creating: boolean
): Effect.Effect<ReadonlyArray<Uint8Array>, Refusal.DurableRefusal> => {
  if (body.length === 0) return Effect.succeed([])
  if (!Wire.isJson(contentType)) return Effect.succeed([body])
  return Effect.gen(function*() {
    const { refused, stored } = Wire.jsonEntry(body, creating, yield* MaxJsonDepth)
    if (refused !== undefined) return yield* Effect.fail(jsonRefusal(refused))
    return stored === undefined ? [] : [stored]
  })
}

/**
 * The refusal of a create over a stream deleted (or expired) but kept for its forks.
 *
 * @internal
 */
export const goneConflict = Refusal.make(
  409,
  "the stream was deleted or has expired and is kept for the forks that read it; its name is not free yet"
)

// A create over an existing stream: the same settings, or 409.
const confirm = (state: DurableStore.DurableState, request: CreateRequest) => {
  if (state.gone) return Effect.fail(goneConflict)
  const meta = state.meta
  const same = Option.isNone(state.forkOf) &&
    Wire.mediaType(meta.ct) === Wire.mediaType(request.contentType) &&
    meta.ttl === request.ttl && meta.exp === request.expiresAt && (meta.closed === "1") === request.closed
  return same
    ? Effect.succeed(done<CreateOutcome>({
      _tag: "Exists",
      contentType: meta.ct ?? request.contentType,
      tail: state.tail,
      closed: meta.closed === "1"
    }))
    : Refusal.refuse(409, "the stream exists with other settings")
}

/**
 * Creates the stream, or confirms one created with the same settings.
 *
 * @internal
 */
export const create = (store: DurableStore.DurableStoreService, name: string, request: CreateRequest) =>
  decideAndCommit(store, name, (state) =>
    Option.isSome(state)
      ? confirm(state.value, request)
      : Effect.map(storedBody(request.contentType, request.body, true), (append): Decision<CreateOutcome> => {
        const set: Record<string, string> = { ct: request.contentType }
        if (request.ttl !== undefined) set.ttl = request.ttl
        if (request.expiresAt !== undefined) set.exp = request.expiresAt
        if (request.closed) set.closed = "1"
        return {
          _tag: "Commit",
          commit: { expect: 0, set, append, expiry: expiryOf(set) },
          outcome: (tail) => ({ _tag: "Created", contentType: request.contentType, tail, closed: request.closed })
        }
      }))

type ProducerCheck =
  | { readonly _tag: "Accepted"; readonly state: string }
  | { readonly _tag: "Duplicate"; readonly lastSeq: number }
  | { readonly _tag: "Refused"; readonly refusal: Refusal.DurableRefusal }

const producerField = (id: string) => `p:${id}`

const gap = (expected: number, producer: Producer): ProducerCheck => ({
  _tag: "Refused",
  refusal: Refusal.make(409, `producer sequence gap: expected ${expected}, got ${producer.seq}`, {
    [Wire.headers.expectedSeq]: String(expected),
    [Wire.headers.receivedSeq]: String(producer.seq)
  })
})

// The producer rules: a new producer starts at 0; a lower epoch is fenced off (403); a
// higher epoch starts again at 0; within the epoch a repeated seq is a duplicate (the
// write already happened) and a skipped one is a gap (409).
const checkProducer = (meta: Readonly<Record<string, string>>, producer: Producer, now: number): ProducerCheck => {
  const stored = meta[producerField(producer.id)]
  const accepted: ProducerCheck = { _tag: "Accepted", state: JSON.stringify([producer.epoch, producer.seq, now]) }
  if (stored === undefined) return producer.seq === 0 ? accepted : gap(0, producer)
  const [epoch, lastSeq] = JSON.parse(stored) as [number, number]
  if (producer.epoch < epoch) {
    return {
      _tag: "Refused",
      refusal: Refusal.make(403, `stale producer epoch ${producer.epoch}: the current epoch is ${epoch}`, {
        [Wire.headers.producerEpoch]: String(epoch)
      })
    }
  }
  if (producer.epoch > epoch) {
    return producer.seq === 0
      ? accepted
      : { _tag: "Refused", refusal: Refusal.make(400, "a new producer epoch starts at sequence 0") }
  }
  if (producer.seq <= lastSeq) return { _tag: "Duplicate", lastSeq }
  return producer.seq === lastSeq + 1 ? accepted : gap(lastSeq + 1, producer)
}

const closedBy = (producer: Producer) => JSON.stringify([producer.id, producer.epoch, producer.seq])

const closedConflict = (tail: string) =>
  Refusal.make(409, "the stream is closed", {
    [Wire.headers.closed]: "true",
    [Wire.headers.nextOffset]: Wire.offsetOf(tail)
  })

// An append to a closed stream: the closing producer's write again, a close again, or 409.
const onClosed = (state: DurableStore.DurableState, request: AppendRequest, closeOnly: boolean, now: number) => {
  const producer = request.producer
  if (producer !== undefined && state.meta.closedBy === closedBy(producer)) {
    return Effect.succeed(done<AppendOutcome>({ _tag: "AlreadyClosed", tail: state.tail, producer }))
  }
  if (producer !== undefined && closeOnly) {
    const check = checkProducer(state.meta, producer, now)
    if (check._tag === "Refused" && check.refusal.status === 403) return Effect.fail(check.refusal)
  }
  if (closeOnly && producer === undefined) {
    return Effect.succeed(done<AppendOutcome>({ _tag: "AlreadyClosed", tail: state.tail, producer: undefined }))
  }
  return Effect.fail(closedConflict(state.tail))
}

// The append to an open stream.
const onOpen = (state: DurableStore.DurableState, request: AppendRequest, closeOnly: boolean, now: number) =>
  Effect.gen(function*() {
    const meta = state.meta
    const producer = request.producer
    if (!closeOnly && Wire.mediaType(request.contentType) !== Wire.mediaType(meta.ct)) {
      return yield* Refusal.refuse(409, `the stream's content type is ${meta.ct}, not ${request.contentType}`)
    }
    const set: Record<string, string> = {}
    if (producer !== undefined) {
      const check = checkProducer(meta, producer, now)
      if (check._tag === "Refused") return yield* Effect.fail(check.refusal)
      if (check._tag === "Duplicate") {
        return done<AppendOutcome>({ _tag: "Duplicate", producer, lastSeq: check.lastSeq })
      }
      set[producerField(producer.id)] = check.state
    }
    if (request.seq !== undefined) {
      if (meta.seq !== undefined && request.seq <= meta.seq) {
        return yield* Refusal.refuse(
          409,
          `Stream-Seq ${JSON.stringify(request.seq.slice(0, 64))} is not after ${JSON.stringify(meta.seq)}`
        )
      }
      set.seq = request.seq
    }
    if (request.close) {
      set.closed = "1"
      if (producer !== undefined) set.closedBy = closedBy(producer)
    }
    const appended = yield* storedBody(meta.ct ?? "application/octet-stream", request.body, false)
    return {
      _tag: "Commit",
      commit: { expect: state.version, set, append: appended, expiry: expiryOf(meta) },
      outcome: (tail): AppendOutcome => ({ _tag: "Appended", tail, closed: request.close, closeOnly, producer })
    } satisfies Decision<AppendOutcome>
  })

/**
 * Appends the body, closes the stream when asked, and takes a producer's repeated
 * write as a duplicate.
 *
 * @internal
 */
export const append = (store: DurableStore.DurableStoreService, name: string, request: AppendRequest) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const closeOnly = request.body.length === 0 && request.close
    if (request.body.length === 0 && !request.close) return yield* Refusal.refuse(400, "an append needs a body")
    if (!closeOnly && request.contentType === undefined) {
      return yield* Refusal.refuse(400, "an append needs a Content-Type")
    }
    return yield* decideAndCommit(store, name, (loaded) => {
      if (Option.isNone(loaded)) return Effect.fail(notFound)
      if (loaded.value.gone) return Effect.fail(gone)
      return loaded.value.meta.closed === "1"
        ? onClosed(loaded.value, request, closeOnly, now)
        : onOpen(loaded.value, request, closeOnly, now)
    })
  })

/**
 * Deletes the stream (one that forks read is kept, gone, until the last of them goes).
 *
 * @internal
 */
export const remove = (
  store: DurableStore.DurableStoreService,
  name: string
): Effect.Effect<DeleteOutcome, Refusal.DurableRefusal | RedisError.RedisError> =>
  Effect.flatMap(
    store.remove(name),
    (outcome) =>
      outcome === "Missing"
        ? Effect.fail(notFound)
        : outcome === "Gone"
        ? Effect.fail(gone)
        : Effect.succeed({ _tag: "Deleted" } as const)
  )

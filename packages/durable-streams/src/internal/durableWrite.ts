/**
 * Writing a durable stream that clients own: create (`PUT`), append and close
 * (`POST`), delete (`DELETE`). Each decides over the stream's state as loaded and
 * commits conditionally on its version, again from a fresh load when another writer
 * committed in between, so the protocol's rules hold under concurrent writers.
 *
 * @internal
 */
import type { RedisError } from "@sluice/redis"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Response from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import { expiryOf } from "../DurableSource.js"
import type * as DurableStore from "../DurableStore.js"
import { gone, notFound, Refusal, refuse } from "./durableRead.js"
import * as Wire from "./durableWire.js"

type Outcome =
  | { readonly _tag: "Done"; readonly response: HttpServerResponse.HttpServerResponse }
  | {
    readonly _tag: "Commit"
    readonly commit: DurableStore.Commit
    readonly respond: (tail: string) => HttpServerResponse.HttpServerResponse
  }

const done = (response: HttpServerResponse.HttpServerResponse): Outcome => ({ _tag: "Done", response })

// Decides over the loaded state and commits, again while other writers get in between.
const decideAndCommit = (
  store: DurableStore.DurableStoreService,
  name: string,
  decide: (state: Option.Option<DurableStore.DurableState>) => Effect.Effect<Outcome, Refusal>
): Effect.Effect<HttpServerResponse.HttpServerResponse, Refusal | RedisError.RedisError> =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 1000; attempt++) {
      const outcome = yield* decide(yield* store.load(name))
      if (outcome._tag === "Done") return outcome.response
      const committed = yield* store.commit(name, outcome.commit)
      if (Option.isSome(committed)) {
        const ids = committed.value
        const tail = ids.length > 0 ? ids[ids.length - 1]! : undefined
        return outcome.respond(tail ?? (yield* tailOf(store, name)))
      }
    }
    return yield* refuse(503, "too many concurrent writers, try again")
  })

const tailOf = (store: DurableStore.DurableStoreService, name: string) =>
  Effect.map(store.load(name), (state) => Option.match(state, { onNone: () => "0-0", onSome: (s) => s.tail }))

/**
 * The settings of a `PUT`.
 *
 * @internal
 */
export interface CreateRequest {
  readonly contentType: string
  /** Whether the request named its content type (a fork inherits its source's else). */
  readonly typeGiven: boolean
  readonly ttl: string | undefined
  readonly expiresAt: string | undefined
  readonly closed: boolean
  readonly body: Uint8Array
  readonly location: string
  readonly fork: ForkRequest | undefined
}

/**
 * What a `PUT` with `Stream-Forked-From` asks for: the source's name, the fork offset
 * as an entry id (none: the source's tail), and the sub-offset (bytes, or JSON values,
 * of the source's next entry to take as well; 0 for none).
 *
 * @internal
 */
export interface ForkRequest {
  readonly source: string
  readonly at: string | undefined
  readonly sub: number
}

const ttlPattern = /^(0|[1-9]\d{0,15})$/

/**
 * The settings of a `PUT` from its headers.
 *
 * @internal
 */
export const createRequest = (
  header: (name: string) => string | undefined,
  body: Uint8Array,
  location: string,
  streamOf: (path: string) => Effect.Effect<string, Refusal>
): Effect.Effect<CreateRequest, Refusal> => {
  const given = header("content-type")
  const typeGiven = given !== undefined && /^[\w-]+\/[\w.+-]+/.test(given.trim())
  const contentType = typeGiven ? given.trim() : "application/octet-stream"
  const ttl = header(Wire.headers.ttl)
  const expiresAt = header(Wire.headers.expiresAt)
  if (ttl !== undefined && expiresAt !== undefined) return refuse(400, "Stream-TTL and Stream-Expires-At are exclusive")
  if (ttl !== undefined && !ttlPattern.test(ttl)) {
    return refuse(400, `invalid Stream-TTL ${JSON.stringify(ttl.slice(0, 32))}: expected whole seconds`)
  }
  if (expiresAt !== undefined && Number.isNaN(Date.parse(expiresAt))) {
    return refuse(400, `invalid Stream-Expires-At ${JSON.stringify(expiresAt.slice(0, 64))}: expected an RFC 3339 time`)
  }
  return Effect.map(
    forkRequest(header, streamOf),
    (fork) => ({
      contentType,
      typeGiven,
      ttl,
      expiresAt,
      closed: header(Wire.headers.closed) === "true",
      body,
      location,
      fork
    })
  )
}

const subOffsetPattern = /^(0|[1-9]\d{0,15})$/

// The fork headers: a sub-offset needs a source, and a sub-offset above 0 a fork offset.
const forkRequest = (
  header: (name: string) => string | undefined,
  streamOf: (path: string) => Effect.Effect<string, Refusal>
): Effect.Effect<ForkRequest | undefined, Refusal> => {
  const from = header(Wire.headers.forkedFrom)
  const offset = header(Wire.headers.forkOffset)
  const sub = header(Wire.headers.forkSubOffset)
  if (from === undefined) {
    return offset !== undefined || sub !== undefined
      ? refuse(400, "Stream-Fork-Offset and Stream-Fork-Sub-Offset need Stream-Forked-From")
      : Effect.succeed(undefined)
  }
  if (sub !== undefined && !subOffsetPattern.test(sub)) {
    return refuse(
      400,
      `invalid Stream-Fork-Sub-Offset ${JSON.stringify(sub.slice(0, 32))}: expected a non-negative integer`
    )
  }
  const subOffset = sub === undefined ? 0 : Number(sub)
  const at = offset === undefined ? Option.none() : Wire.entryIdOf(offset)
  if (offset !== undefined && Option.isNone(at)) {
    return refuse(
      400,
      `invalid Stream-Fork-Offset ${JSON.stringify(offset.slice(0, 64))}: expected an offset of the source stream`
    )
  }
  if (subOffset > 0 && offset === undefined) return refuse(400, "Stream-Fork-Sub-Offset needs Stream-Fork-Offset")
  return Effect.map(streamOf(from), (source) => ({ source, at: Option.getOrUndefined(at), sub: subOffset }))
}

const jsonRefusal = (refused: Wire.JsonRefusal) =>
  refused === "invalid"
    ? new Refusal(400, "the body is not valid JSON")
    : new Refusal(400, "an empty JSON array appends nothing")

/** The entries a body is stored as. @internal */
export const storedBody = (
  contentType: string,
  body: Uint8Array,
  creating: boolean
): Effect.Effect<ReadonlyArray<Uint8Array>, Refusal> => {
  if (body.length === 0) return Effect.succeed([])
  if (!Wire.isJson(contentType)) return Effect.succeed([body])
  const { refused, stored } = Wire.jsonEntry(body, creating)
  return refused !== undefined
    ? Effect.fail(jsonRefusal(refused))
    : Effect.succeed(stored === undefined ? [] : [stored])
}

/**
 * The refusal of a `PUT` over a stream deleted (or expired) but kept for its forks.
 *
 * @internal
 */
export const goneConflict = new Refusal(
  409,
  "the stream was deleted or has expired and is kept for the forks that read it; its name is not free yet"
)

/**
 * `PUT`: creates the stream (201), or confirms one created with the same settings
 * (200); 409 for other settings, or over a stream kept gone for its forks.
 *
 * @internal
 */
export const create = (store: DurableStore.DurableStoreService, name: string, request: CreateRequest) =>
  decideAndCommit(store, name, (state) =>
    Effect.gen(function*() {
      const respond = (status: number, tail: string, closed: boolean) => {
        const headers: Record<string, string> = {
          "content-type": request.contentType,
          [Wire.headers.nextOffset]: Wire.offsetOf(tail)
        }
        if (status === 201) headers.location = request.location
        if (closed) headers[Wire.headers.closed] = "true"
        return Response.empty({ status, headers })
      }
      if (Option.isSome(state)) {
        if (state.value.gone) return yield* Effect.fail(goneConflict)
        const meta = state.value.meta
        const same = Option.isNone(state.value.forkOf) &&
          Wire.mediaType(meta.ct) === Wire.mediaType(request.contentType) &&
          meta.ttl === request.ttl && meta.exp === request.expiresAt && (meta.closed === "1") === request.closed
        if (!same) return yield* refuse(409, "the stream exists with other settings")
        return done(Response.empty({
          status: 200,
          headers: {
            "content-type": meta.ct ?? request.contentType,
            [Wire.headers.nextOffset]: Wire.offsetOf(state.value.tail),
            ...(meta.closed === "1" ? { [Wire.headers.closed]: "true" } : {})
          }
        }))
      }
      const set: Record<string, string> = { ct: request.contentType }
      if (request.ttl !== undefined) set.ttl = request.ttl
      if (request.expiresAt !== undefined) set.exp = request.expiresAt
      if (request.closed) set.closed = "1"
      return {
        _tag: "Commit",
        commit: {
          expect: 0,
          set,
          append: yield* storedBody(request.contentType, request.body, true),
          expiry: expiryOf(set)
        },
        respond: (tail) => respond(201, tail, request.closed)
      } satisfies Outcome
    }))

/**
 * An idempotent producer's claim: its id, epoch and sequence number.
 *
 * @internal
 */
export interface Producer {
  readonly id: string
  readonly epoch: number
  readonly seq: number
}

/**
 * The settings of a `POST`.
 *
 * @internal
 */
export interface AppendRequest {
  readonly contentType: string | undefined
  readonly seq: string | undefined
  readonly close: boolean
  readonly producer: Producer | undefined
  readonly body: Uint8Array
}

const strictInteger = /^\d{1,16}$/

/**
 * The settings of a `POST` from its headers: the producer headers come all three or
 * none, with a non-empty id and non-negative integers.
 *
 * @internal
 */
export const appendRequest = (
  header: (name: string) => string | undefined,
  body: Uint8Array
): Effect.Effect<AppendRequest, Refusal> => {
  const id = header(Wire.headers.producerId)
  const epoch = header(Wire.headers.producerEpoch)
  const seq = header(Wire.headers.producerSeq)
  const given = [id, epoch, seq].filter((value) => value !== undefined).length
  if (given > 0 && given < 3) return refuse(400, "Producer-Id, Producer-Epoch and Producer-Seq come together")
  let producer: Producer | undefined
  if (id !== undefined && epoch !== undefined && seq !== undefined) {
    if (id === "") return refuse(400, "Producer-Id is empty")
    if (!strictInteger.test(epoch) || !Number.isSafeInteger(Number(epoch))) {
      return refuse(
        400,
        `invalid Producer-Epoch ${JSON.stringify(epoch.slice(0, 32))}: expected a non-negative integer`
      )
    }
    if (!strictInteger.test(seq) || !Number.isSafeInteger(Number(seq))) {
      return refuse(400, `invalid Producer-Seq ${JSON.stringify(seq.slice(0, 32))}: expected a non-negative integer`)
    }
    producer = { id, epoch: Number(epoch), seq: Number(seq) }
  }
  return Effect.succeed({
    contentType: header("content-type"),
    seq: header(Wire.headers.seq),
    close: header(Wire.headers.closed) === "true",
    producer,
    body
  })
}

type ProducerCheck =
  | { readonly _tag: "Accepted"; readonly state: string }
  | { readonly _tag: "Duplicate"; readonly lastSeq: number }
  | { readonly _tag: "Refused"; readonly refusal: Refusal }

const producerField = (id: string) => `p:${id}`

// The producer rules: a new producer starts at 0; a lower epoch is fenced off (403); a
// higher epoch starts again at 0; within the epoch a repeated seq is a duplicate (the
// write already happened) and a skipped one is a gap (409).
const checkProducer = (meta: Readonly<Record<string, string>>, producer: Producer, now: number): ProducerCheck => {
  const stored = meta[producerField(producer.id)]
  const accepted = (): ProducerCheck => ({
    _tag: "Accepted",
    state: JSON.stringify([producer.epoch, producer.seq, now])
  })
  const gap = (expected: number): ProducerCheck => ({
    _tag: "Refused",
    refusal: new Refusal(409, `producer sequence gap: expected ${expected}, got ${producer.seq}`, {
      [Wire.headers.expectedSeq]: String(expected),
      [Wire.headers.receivedSeq]: String(producer.seq)
    })
  })
  if (stored === undefined) return producer.seq === 0 ? accepted() : gap(0)
  const [epoch, lastSeq] = JSON.parse(stored) as [number, number]
  if (producer.epoch < epoch) {
    return {
      _tag: "Refused",
      refusal: new Refusal(403, `stale producer epoch ${producer.epoch}: the current epoch is ${epoch}`, {
        [Wire.headers.producerEpoch]: String(epoch)
      })
    }
  }
  if (producer.epoch > epoch) {
    return producer.seq === 0
      ? accepted()
      : { _tag: "Refused", refusal: new Refusal(400, "a new producer epoch starts at sequence 0") }
  }
  if (producer.seq <= lastSeq) return { _tag: "Duplicate", lastSeq }
  return producer.seq === lastSeq + 1 ? accepted() : gap(lastSeq + 1)
}

const closedBy = (producer: Producer) => JSON.stringify([producer.id, producer.epoch, producer.seq])

const closedConflict = (tail: string) =>
  new Refusal(409, "the stream is closed", {
    [Wire.headers.closed]: "true",
    [Wire.headers.nextOffset]: Wire.offsetOf(tail)
  })

/**
 * `POST`: appends the body (204, or 200 with the producer headers for an idempotent
 * producer), closes the stream with `Stream-Closed: true` (with or without a body),
 * and answers a producer's repeated write as a duplicate (204) without writing again.
 *
 * @internal
 */
export const append = (store: DurableStore.DurableStoreService, name: string, request: AppendRequest) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const closeOnly = request.body.length === 0 && request.close
    if (request.body.length === 0 && !request.close) return yield* refuse(400, "an append needs a body")
    if (!closeOnly && request.contentType === undefined) return yield* refuse(400, "an append needs a Content-Type")
    const producer = request.producer
    const producerHeaders = (seq: number): Record<string, string> =>
      producer === undefined
        ? {}
        : { [Wire.headers.producerEpoch]: String(producer.epoch), [Wire.headers.producerSeq]: String(seq) }
    return yield* decideAndCommit(store, name, (loaded) =>
      Effect.gen(function*() {
        if (Option.isNone(loaded)) return yield* Effect.fail(notFound)
        if (loaded.value.gone) return yield* Effect.fail(gone)
        const state = loaded.value
        const meta = state.meta
        const closedHeaders = { [Wire.headers.closed]: "true", [Wire.headers.nextOffset]: Wire.offsetOf(state.tail) }
        if (meta.closed === "1") {
          if (producer !== undefined && meta.closedBy === closedBy(producer)) {
            return done(
              Response.empty({ status: 204, headers: { ...closedHeaders, ...producerHeaders(producer.seq) } })
            )
          }
          if (producer !== undefined && closeOnly) {
            const check = checkProducer(meta, producer, now)
            if (check._tag === "Refused" && check.refusal.status === 403) return yield* Effect.fail(check.refusal)
          }
          if (closeOnly && producer === undefined) return done(Response.empty({ status: 204, headers: closedHeaders }))
          return yield* Effect.fail(closedConflict(state.tail))
        }
        if (!closeOnly && Wire.mediaType(request.contentType) !== Wire.mediaType(meta.ct)) {
          return yield* refuse(409, `the stream's content type is ${meta.ct}, not ${request.contentType}`)
        }
        const set: Record<string, string> = {}
        if (producer !== undefined) {
          const check = checkProducer(meta, producer, now)
          if (check._tag === "Refused") return yield* Effect.fail(check.refusal)
          if (check._tag === "Duplicate") {
            return done(Response.empty({ status: 204, headers: producerHeaders(check.lastSeq) }))
          }
          set[producerField(producer.id)] = check.state
        }
        if (request.seq !== undefined) {
          if (meta.seq !== undefined && request.seq <= meta.seq) {
            return yield* refuse(
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
          respond: (tail) =>
            Response.empty({
              status: producer !== undefined && !closeOnly ? 200 : 204,
              headers: {
                [Wire.headers.nextOffset]: Wire.offsetOf(tail),
                ...(request.close ? { [Wire.headers.closed]: "true" } : {}),
                ...(producer === undefined ? {} : producerHeaders(producer.seq))
              }
            })
        } satisfies Outcome
      }))
  })

/**
 * `DELETE`: removes the stream (204; a stream that forks read is kept, gone, until the
 * last of them goes), 404 when there is none, 410 when it is already gone.
 *
 * @internal
 */
export const remove = (store: DurableStore.DurableStoreService, name: string) =>
  Effect.flatMap(
    store.remove(name),
    (outcome) =>
      outcome === "Missing"
        ? Effect.fail(notFound)
        : outcome === "Gone"
        ? Effect.fail(gone)
        : Effect.succeed(Response.empty({ status: 204 }))
  )

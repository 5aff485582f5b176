/**
 * The operations' requests parsed from HTTP: the headers of a `PUT` (create or fork)
 * and a `POST` (append), and the query of a `GET`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { AppendRequest, CreateRequest, ForkRequest, Producer, ReadRequest } from "../DurableOperations.js"
import * as Refusal from "../DurableRefusal.js"
import * as Wire from "./durableWire.js"

/** A request's header by name. @internal */
export type Header = (name: string) => string | undefined

const wholeNumber = /^(0|[1-9]\d{0,15})$/
const strictInteger = /^\d{1,16}$/

// The fork headers: a sub-offset needs a source, and a sub-offset above 0 a fork offset.
const forkRequest = (
  header: Header,
  streamOf: (path: string) => Effect.Effect<string, Refusal.DurableRefusal>
): Effect.Effect<ForkRequest | undefined, Refusal.DurableRefusal> => {
  const from = header(Wire.headers.forkedFrom)
  const offset = header(Wire.headers.forkOffset)
  const sub = header(Wire.headers.forkSubOffset)
  if (from === undefined) {
    return offset !== undefined || sub !== undefined
      ? Refusal.refuse(400, "Stream-Fork-Offset and Stream-Fork-Sub-Offset need Stream-Forked-From")
      : Effect.succeed(undefined)
  }
  if (sub !== undefined && !wholeNumber.test(sub)) {
    return Refusal.refuse(
      400,
      `invalid Stream-Fork-Sub-Offset ${JSON.stringify(sub.slice(0, 32))}: expected a non-negative integer`
    )
  }
  const subOffset = sub === undefined ? 0 : Number(sub)
  const at = offset === undefined ? Option.none() : Wire.entryIdOf(offset)
  if (offset !== undefined && Option.isNone(at)) {
    return Refusal.refuse(
      400,
      `invalid Stream-Fork-Offset ${JSON.stringify(offset.slice(0, 64))}: expected an offset of the source stream`
    )
  }
  if (subOffset > 0 && offset === undefined) {
    return Refusal.refuse(400, "Stream-Fork-Sub-Offset needs Stream-Fork-Offset")
  }
  return Effect.map(streamOf(from), (source) => ({ source, at: Option.getOrUndefined(at), sub: subOffset }))
}

/**
 * The create of a `PUT` from its headers; `streamOf` finds the stream a
 * `Stream-Forked-From` path names.
 *
 * @internal
 */
export const createRequest = (
  header: Header,
  body: Uint8Array,
  streamOf: (path: string) => Effect.Effect<string, Refusal.DurableRefusal>
): Effect.Effect<CreateRequest, Refusal.DurableRefusal> => {
  const given = header("content-type")
  const typeGiven = given !== undefined && /^[\w-]+\/[\w.+-]+/.test(given.trim())
  const contentType = typeGiven ? given.trim() : "application/octet-stream"
  const ttl = header(Wire.headers.ttl)
  const expiresAt = header(Wire.headers.expiresAt)
  if (ttl !== undefined && expiresAt !== undefined) {
    return Refusal.refuse(400, "Stream-TTL and Stream-Expires-At are exclusive")
  }
  if (ttl !== undefined && !wholeNumber.test(ttl)) {
    return Refusal.refuse(400, `invalid Stream-TTL ${JSON.stringify(ttl.slice(0, 32))}: expected whole seconds`)
  }
  if (expiresAt !== undefined && Number.isNaN(Date.parse(expiresAt))) {
    return Refusal.refuse(
      400,
      `invalid Stream-Expires-At ${JSON.stringify(expiresAt.slice(0, 64))}: expected an RFC 3339 time`
    )
  }
  return Effect.map(forkRequest(header, streamOf), (fork) => ({
    contentType,
    typeGiven,
    ttl,
    expiresAt,
    closed: header(Wire.headers.closed) === "true",
    body,
    fork
  }))
}

const integerProblem = (name: string, value: string): string | undefined =>
  strictInteger.test(value) && Number.isSafeInteger(Number(value))
    ? undefined
    : `invalid ${name} ${JSON.stringify(value.slice(0, 32))}: expected a non-negative integer`

// The producer headers: all three or none, a non-empty id and non-negative integers.
const producerOf = (header: Header): Effect.Effect<Producer | undefined, Refusal.DurableRefusal> => {
  const id = header(Wire.headers.producerId)
  const epoch = header(Wire.headers.producerEpoch)
  const seq = header(Wire.headers.producerSeq)
  if (id === undefined || epoch === undefined || seq === undefined) {
    return id === undefined && epoch === undefined && seq === undefined
      ? Effect.succeed(undefined)
      : Refusal.refuse(400, "Producer-Id, Producer-Epoch and Producer-Seq come together")
  }
  if (id === "") return Refusal.refuse(400, "Producer-Id is empty")
  const problem = integerProblem("Producer-Epoch", epoch) ?? integerProblem("Producer-Seq", seq)
  return problem === undefined
    ? Effect.succeed({ id, epoch: Number(epoch), seq: Number(seq) })
    : Refusal.refuse(400, problem)
}

/**
 * The append of a `POST` from its headers.
 *
 * @internal
 */
export const appendRequest = (
  header: Header,
  body: Uint8Array
): Effect.Effect<AppendRequest, Refusal.DurableRefusal> =>
  Effect.map(producerOf(header), (producer) => ({
    contentType: header("content-type"),
    seq: header(Wire.headers.seq),
    close: header(Wire.headers.closed) === "true",
    producer,
    body
  }))

/**
 * The read of a `GET`'s query.
 *
 * @internal
 */
export const readRequest = (search: URLSearchParams): Effect.Effect<ReadRequest, Refusal.DurableRefusal> => {
  const offsets = search.getAll("offset")
  if (offsets.length > 1) return Refusal.refuse(400, "offset is given more than once")
  const offset = offsets[0]
  if (offset !== undefined && offset !== "-1" && offset !== "now" && Option.isNone(Wire.entryIdOf(offset))) {
    return Refusal.refuse(
      400,
      `invalid offset ${JSON.stringify(offset.slice(0, 64))}: expected -1, now or an offset this stream returned`
    )
  }
  const liveParam = search.get("live")
  if (liveParam !== null && liveParam !== "long-poll" && liveParam !== "sse") {
    return Refusal.refuse(
      400,
      `invalid live mode ${JSON.stringify(liveParam.slice(0, 32))}: expected long-poll or sse`
    )
  }
  const live = liveParam ?? undefined
  if (live !== undefined && offset === undefined) return Refusal.refuse(400, `live=${live} needs an offset`)
  return Effect.succeed({ offset, live, cursor: search.get("cursor") ?? undefined })
}

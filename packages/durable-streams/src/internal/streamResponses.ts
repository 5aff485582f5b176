/**
 * The HTTP answers of the stream operations' outcomes, and the SSE stream of a
 * `live=sse` read.
 *
 * @internal
 */
import type { RedisError } from "@sluice/redis"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type {
  AppendOutcome,
  CreateOutcome,
  DeleteOutcome,
  Entry,
  Producer,
  ReadOutcome,
  ReadRequest
} from "../DurableOperations.js"
import type { Source, View } from "../DurableSource.js"
import * as Compression from "../HttpCompression.js"
import * as Wire from "./durableWire.js"
import { afterOf, cursorFor, entriesOf, notAfter } from "./operationRead.js"

/**
 * A created stream: 201 with its `Location`, 200 for one that existed.
 *
 * @internal
 */
export const created = (outcome: CreateOutcome, location: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.empty({
    status: outcome._tag === "Created" ? 201 : 200,
    headers: {
      "content-type": outcome.contentType,
      [Wire.headers.nextOffset]: Wire.offsetOf(outcome.tail),
      ...(outcome._tag === "Created" ? { location } : {}),
      ...(outcome.closed ? { [Wire.headers.closed]: "true" } : {})
    }
  })

const producerHeaders = (producer: Producer | undefined, seq: number): Record<string, string> =>
  producer === undefined
    ? {}
    : { [Wire.headers.producerEpoch]: String(producer.epoch), [Wire.headers.producerSeq]: String(seq) }

/**
 * An append: 204, or 200 with the producer headers for an idempotent producer's
 * write; a duplicate or a close of a closed stream 204.
 *
 * @internal
 */
export const appended = (outcome: AppendOutcome): HttpServerResponse.HttpServerResponse => {
  switch (outcome._tag) {
    case "Duplicate":
      return HttpServerResponse.empty({ status: 204, headers: producerHeaders(outcome.producer, outcome.lastSeq) })
    case "AlreadyClosed":
      return HttpServerResponse.empty({
        status: 204,
        headers: {
          [Wire.headers.closed]: "true",
          [Wire.headers.nextOffset]: Wire.offsetOf(outcome.tail),
          ...(outcome.producer === undefined ? {} : producerHeaders(outcome.producer, outcome.producer.seq))
        }
      })
    case "Appended":
      return HttpServerResponse.empty({
        status: outcome.producer !== undefined && !outcome.closeOnly ? 200 : 204,
        headers: {
          [Wire.headers.nextOffset]: Wire.offsetOf(outcome.tail),
          ...(outcome.closed ? { [Wire.headers.closed]: "true" } : {}),
          ...(outcome.producer === undefined ? {} : producerHeaders(outcome.producer, outcome.producer.seq))
        }
      })
  }
}

/** A deletion: 204. @internal */
export const deleted = (_: DeleteOutcome): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.empty({ status: 204 })

/**
 * `HEAD`: the stream's metadata, never cached.
 *
 * @internal
 */
export const head = (view: View, etagBase: string): HttpServerResponse.HttpServerResponse => {
  const offset = Wire.offsetOf(view.tail)
  const headers: Record<string, string> = {
    "content-type": view.contentType,
    [Wire.headers.nextOffset]: offset,
    "cache-control": "no-store",
    etag: `"${etagBase}:-1:${offset}${view.closed ? ":c" : ""}"`
  }
  if (view.closed) headers[Wire.headers.closed] = "true"
  if (view.meta.ttl !== undefined) headers[Wire.headers.ttl] = view.meta.ttl
  if (view.meta.exp !== undefined) headers[Wire.headers.expiresAt] = view.meta.exp
  return HttpServerResponse.empty({ status: 200, headers })
}

const bodyOf = (view: View, entries: ReadonlyArray<Entry>): Uint8Array =>
  Wire.isJson(view.contentType)
    ? Wire.jsonArray(Wire.jsonValues(entries.map((entry) => ({ offset: Wire.offsetOf(entry.id), data: entry.data }))))
    : Wire.concat(entries.map((entry) => entry.data))

/**
 * How a read's answer goes: its entity tag's base (the stream name in base64), the
 * request's `If-None-Match`, and the coding a catch-up read's body may go in
 * (`undefined`: never compressed).
 *
 * @internal
 */
export interface ReadRendering {
  readonly etagBase: string
  readonly ifNoneMatch: string | undefined
  readonly encoding: Compression.Encoding | undefined
}

/**
 * A read: the entries (a catch-up read may be compressed, and answered 304 for a tag
 * the client has), or 204 for a long-poll that saw nothing come.
 *
 * @internal
 */
export const read = (
  outcome: ReadOutcome,
  request: ReadRequest,
  rendering: ReadRendering
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const view = outcome.view
  const headers: Record<string, string> = {}
  switch (outcome._tag) {
    case "AtTail": {
      headers["content-type"] = view.contentType
      headers[Wire.headers.nextOffset] = Wire.offsetOf(view.tail)
      headers[Wire.headers.upToDate] = "true"
      headers["cache-control"] = "no-store"
      if (view.closed) headers[Wire.headers.closed] = "true"
      const body = Wire.isJson(view.contentType) ? Wire.jsonArray([]) : new Uint8Array(0)
      return Effect.succeed(HttpServerResponse.uint8Array(body, { headers }))
    }
    case "TimedOut": {
      headers[Wire.headers.nextOffset] = outcome.offset
      headers[Wire.headers.upToDate] = "true"
      headers[Wire.headers.cursor] = outcome.cursor
      if (view.closed) headers[Wire.headers.closed] = "true"
      return Effect.succeed(HttpServerResponse.empty({ status: 204, headers }))
    }
    case "Entries": {
      const etag = `"${rendering.etagBase}:${request.offset ?? "-1"}:${outcome.nextOffset}${
        outcome.closed ? ":c" : ""
      }"`
      headers["content-type"] = view.contentType
      headers[Wire.headers.nextOffset] = outcome.nextOffset
      if (outcome.cursor !== undefined) headers[Wire.headers.cursor] = outcome.cursor
      if (outcome.upToDate) headers[Wire.headers.upToDate] = "true"
      if (outcome.closed) headers[Wire.headers.closed] = "true"
      // a catch-up read may be compressed; a long-poll's body goes as it is
      const encoding = request.live === undefined ? rendering.encoding : undefined
      return Compression.respond(
        { encoding, headers, etag, ifNoneMatch: rendering.ifNoneMatch },
        () => bodyOf(view, outcome.entries)
      )
    }
  }
}

const decoder = new TextDecoder()

const dataEvent = (view: View, entry: Entry) =>
  Wire.sseEvent(
    "data",
    Wire.isJson(view.contentType)
      ? `[${Wire.jsonValues([{ offset: Wire.offsetOf(entry.id), data: entry.data }]).join(",")}]`
      : Wire.isText(view.contentType)
      ? decoder.decode(entry.data)
      : Buffer.from(entry.data).toString("base64")
  )

const control = (fields: Record<string, string | boolean>) => Wire.sseEvent("control", JSON.stringify(fields))

type SseState = { readonly view: View; readonly after: string; readonly done: boolean; readonly announced: boolean }

// Every data event is followed by the control event of its offset (but the last of a closed stream).
const entryEvents = (view: View, entries: ReadonlyArray<Entry>, cursor: string): Array<Uint8Array> =>
  entries.flatMap((entry, i) => {
    const atTail = entry.id === view.tail
    if (view.closed && atTail) return [dataEvent(view, entry)]
    return [
      dataEvent(view, entry),
      control({
        streamNextOffset: Wire.offsetOf(entry.id),
        streamCursor: cursor,
        ...(atTail && i === entries.length - 1 ? { upToDate: true } : {})
      })
    ]
  })

// One step of an SSE stream: the events of the entries that came, or of a wait.
const sseStep = (source: Source, request: ReadRequest, longPollMs: number) =>
(
  state: SseState
): Effect.Effect<readonly [Array<Uint8Array>, SseState] | undefined, RedisError.RedisError> =>
  Effect.gen(function*() {
    if (state.done) return undefined
    const view = state.view
    const entries = yield* entriesOf(source, view, state.after)
    yield* source.touched(view)
    const cursor = yield* cursorFor(request)
    const events = entryEvents(view, entries, cursor)
    const after = entries.length === 0 ? state.after : entries[entries.length - 1]!.id
    const upToDate = entries.length === 0 || after === view.tail
    const offset = Wire.offsetOf(entries.length === 0 && notAfter(view.tail, after) ? after : view.tail)
    if (view.closed && upToDate) {
      events.push(control({ streamNextOffset: offset, streamClosed: true }))
      return [events, { ...state, done: true }] as const
    }
    if (entries.length > 0 || !upToDate) return [events, { ...state, after, announced: true }] as const
    if (!state.announced) {
      events.push(control({ streamNextOffset: offset, streamCursor: cursor, upToDate: true }))
      return [events, { ...state, announced: true }] as const
    }
    yield* source.awaitChange(view, longPollMs)
    const next = yield* source.load
    if (Option.isNone(next) || next.value.gone) return [[], { ...state, done: true }] as const
    if (next.value.tail === view.tail && next.value.closed === view.closed) {
      events.push(control({ streamNextOffset: offset, streamCursor: yield* cursorFor(request), upToDate: true }))
    }
    return [events, { ...state, view: next.value }] as const
  })

/**
 * `GET` with `live=sse`: `data` events with the entries after the offset (base64 for
 * a stream that is not text), each batch followed by a `control` event with the next
 * offset and cursor (`upToDate` at the tail); a `control` event every `longPollMs`
 * while nothing comes; the final `control` event has `streamClosed` and ends the
 * stream. The stream also ends when `closing` completes.
 *
 * @internal
 */
export const sse = (
  source: Source,
  first: View,
  request: ReadRequest,
  longPollMs: number,
  closing: Effect.Effect<void>
): HttpServerResponse.HttpServerResponse => {
  const initial: SseState = { view: first, after: afterOf(request, first), done: false, announced: false }
  const body = Stream.unfold(initial, sseStep(source, request, longPollMs)).pipe(
    Stream.flatMap((events) => Stream.fromIterable(events)),
    Stream.catch((error) =>
      Stream.fromEffect(Effect.as(Effect.logError(`durable stream read failed: ${error.message}`), new Uint8Array(0)))
    ),
    Stream.interruptWhen(closing)
  )
  const headers: Record<string, string> = { "cache-control": "no-cache", connection: "keep-alive" }
  if (!Wire.isText(first.contentType)) headers[Wire.headers.sseEncoding] = "base64"
  return HttpServerResponse.stream(body, { contentType: "text/event-stream", headers })
}

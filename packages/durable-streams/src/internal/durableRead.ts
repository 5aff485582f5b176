/**
 * Reading a durable stream: `HEAD`, and `GET` as a catch-up read, a long-poll or an
 * SSE stream, over any `Source`.
 *
 * @internal
 */
import type { RedisError } from "@sluice/redis"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { Source, View } from "../DurableSource.js"
import * as Compression from "../HttpCompression.js"
import * as Wire from "./durableWire.js"

/**
 * A refused request: its status, a message naming what was wrong, and headers to
 * send with it.
 *
 * @internal
 */
export class Refusal {
  readonly _tag = "Refusal"
  constructor(
    readonly status: number,
    readonly message: string,
    readonly headers: Readonly<Record<string, string>> = {}
  ) {}
}

/** @internal */
export const refuse = (status: number, message: string, headers: Readonly<Record<string, string>> = {}) =>
  Effect.fail(new Refusal(status, message, headers))

/** @internal */
export const notFound = new Refusal(404, "stream not found")

/** @internal */
export const gone = new Refusal(
  410,
  "the stream was deleted or has expired; its data is kept only for the forks that read it"
)

/** The most entries one response carries. @internal */
export const pageSize = 1000

/**
 * What a read asks for, from the query: the offset (`-1` for the start, `now` for the
 * tail, or an offset), the live mode, and the client's cursor.
 *
 * @internal
 */
export interface ReadRequest {
  readonly offset: string | undefined
  readonly live: "long-poll" | "sse" | undefined
  readonly cursor: string | undefined
  readonly ifNoneMatch: string | undefined
  readonly etagBase: string
  /** The coding a catch-up read's body may go in (`undefined`: never compressed). */
  readonly encoding?: Compression.Encoding | undefined
}

/**
 * The read of the query `search`.
 *
 * @internal
 */
export const readRequest = (
  search: URLSearchParams,
  ifNoneMatch: string | undefined,
  name: string,
  encoding?: Compression.Encoding | undefined
): Effect.Effect<ReadRequest, Refusal> => {
  const offsets = search.getAll("offset")
  if (offsets.length > 1) return refuse(400, "offset is given more than once")
  const offset = offsets[0]
  if (offset !== undefined && offset !== "-1" && offset !== "now" && Option.isNone(Wire.entryIdOf(offset))) {
    return refuse(
      400,
      `invalid offset ${JSON.stringify(offset.slice(0, 64))}: expected -1, now or an offset this stream returned`
    )
  }
  const liveParam = search.get("live")
  if (liveParam !== null && liveParam !== "long-poll" && liveParam !== "sse") {
    return refuse(400, `invalid live mode ${JSON.stringify(liveParam.slice(0, 32))}: expected long-poll or sse`)
  }
  const live = liveParam ?? undefined
  if (live !== undefined && offset === undefined) return refuse(400, `live=${live} needs an offset`)
  return Effect.succeed({
    offset,
    live,
    cursor: search.get("cursor") ?? undefined,
    ifNoneMatch,
    etagBase: Buffer.from(name).toString("base64"),
    encoding
  })
}

const entryNumber = (id: string): bigint => BigInt(id.slice(id.indexOf("-") + 1))
const entryMs = (id: string): bigint => BigInt(id.slice(0, id.indexOf("-")))
/** Whether the entry id `id` is not after `tail`. @internal */
export const notAfter = (id: string, tail: string): boolean =>
  entryMs(id) < entryMs(tail) || (entryMs(id) === entryMs(tail) && entryNumber(id) <= entryNumber(tail))

// The entries after `after` that the view holds (a later append waits for the next read).
const entriesOf = (source: Source, view: View, after: string) =>
  Effect.map(source.read(after, pageSize), (entries) => entries.filter((entry) => notAfter(entry.id, view.tail)))

const bodyOf = (view: View, entries: ReadonlyArray<{ readonly id: string; readonly data: Uint8Array }>): Uint8Array =>
  Wire.isJson(view.contentType)
    ? Wire.jsonArray(Wire.jsonValues(entries.map((entry) => ({ offset: Wire.offsetOf(entry.id), data: entry.data }))))
    : Wire.concat(entries.map((entry) => entry.data))

const afterOf = (request: ReadRequest, view: View): string =>
  request.offset === undefined || request.offset === "-1"
    ? "0-0"
    : request.offset === "now"
    ? view.tail
    : Option.getOrElse(Wire.entryIdOf(request.offset), () => "0-0")

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

const cursorFor = (request: ReadRequest) =>
  Effect.map(Clock.currentTimeMillis, (now) => Wire.responseCursor(now, request.cursor))

const timedOut = (view: View, after: string, request: ReadRequest) =>
  Effect.map(cursorFor(request), (cursor) => {
    const headers: Record<string, string> = {
      [Wire.headers.nextOffset]: Wire.offsetOf(after),
      [Wire.headers.upToDate]: "true",
      [Wire.headers.cursor]: cursor
    }
    if (view.closed) headers[Wire.headers.closed] = "true"
    return HttpServerResponse.empty({ status: 204, headers })
  })

/**
 * `GET` without `live=sse`: the entries after the offset (a catch-up read), or, for a
 * long-poll at the tail, the next entries once they come (204 when none came within
 * `longPollMs`, or when the stream is closed).
 *
 * @internal
 */
export const get = (
  source: Source,
  first: View,
  request: ReadRequest,
  longPollMs: number
): Effect.Effect<HttpServerResponse.HttpServerResponse, RedisError.RedisError | Refusal> =>
  Effect.gen(function*() {
    let view = first
    const after = afterOf(request, view)
    if (request.offset === "now" && request.live === undefined) {
      const headers: Record<string, string> = {
        "content-type": view.contentType,
        [Wire.headers.nextOffset]: Wire.offsetOf(view.tail),
        [Wire.headers.upToDate]: "true",
        "cache-control": "no-store"
      }
      if (view.closed) headers[Wire.headers.closed] = "true"
      yield* source.touched(view)
      return HttpServerResponse.uint8Array(Wire.isJson(view.contentType) ? Wire.jsonArray([]) : new Uint8Array(0), {
        headers
      })
    }
    let entries = yield* entriesOf(source, view, after)
    yield* source.touched(view)
    if (request.live === "long-poll" && entries.length === 0 && after === view.tail) {
      const deadline = (yield* Clock.currentTimeMillis) + longPollMs
      while (entries.length === 0) {
        if (view.closed) return yield* timedOut(view, after, request)
        const left = deadline - (yield* Clock.currentTimeMillis)
        if (left <= 0) return yield* timedOut(view, after, request)
        yield* source.awaitChange(view, left)
        const next = yield* source.load
        if (Option.isNone(next)) return yield* Effect.fail(notFound)
        if (next.value.gone) return yield* Effect.fail(gone)
        view = next.value
        entries = yield* entriesOf(source, view, after)
      }
      yield* source.touched(view)
    }
    const last = entries.length === 0 ? view.tail : entries[entries.length - 1]!.id
    const offset = Wire.offsetOf(entries.length === 0 && notAfter(view.tail, after) ? after : last)
    const upToDate = entries.length === 0 || last === view.tail
    const atTail = offset === Wire.offsetOf(view.tail)
    const closed = view.closed && atTail && upToDate
    const etag = `"${request.etagBase}:${request.offset ?? "-1"}:${offset}${closed ? ":c" : ""}"`
    const headers: Record<string, string> = {
      "content-type": view.contentType,
      [Wire.headers.nextOffset]: offset
    }
    if (request.live === "long-poll") headers[Wire.headers.cursor] = yield* cursorFor(request)
    if (upToDate) headers[Wire.headers.upToDate] = "true"
    if (closed) headers[Wire.headers.closed] = "true"
    // a catch-up read may be compressed; a long-poll's body goes as it is
    const encoding = request.live === undefined ? request.encoding : undefined
    return yield* Compression.respond(
      { encoding, headers, etag, ifNoneMatch: request.ifNoneMatch },
      () => bodyOf(view, entries)
    )
  })

const decoder = new TextDecoder()

const dataEvents = (view: View, entries: ReadonlyArray<{ readonly id: string; readonly data: Uint8Array }>) =>
  entries.map((entry) =>
    Wire.sseEvent(
      "data",
      Wire.isJson(view.contentType)
        ? `[${Wire.jsonValues([{ offset: Wire.offsetOf(entry.id), data: entry.data }]).join(",")}]`
        : Wire.isText(view.contentType)
        ? decoder.decode(entry.data)
        : Buffer.from(entry.data).toString("base64")
    )
  )

const control = (fields: Record<string, string | boolean>) => Wire.sseEvent("control", JSON.stringify(fields))

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
  type State = { readonly view: View; readonly after: string; readonly done: boolean; readonly announced: boolean }
  const step = (
    state: State
  ): Effect.Effect<readonly [Array<Uint8Array>, State] | undefined, RedisError.RedisError> =>
    Effect.gen(function*() {
      if (state.done) return undefined
      const view = state.view
      const entries = yield* entriesOf(source, view, state.after)
      yield* source.touched(view)
      const cursor = yield* cursorFor(request)
      const events: Array<Uint8Array> = []
      // Every data event is followed by the control event of its offset.
      entries.forEach((entry, i) => {
        events.push(dataEvents(view, [entry])[0]!)
        const atTail = entry.id === view.tail
        if (view.closed && atTail) return
        events.push(control({
          streamNextOffset: Wire.offsetOf(entry.id),
          streamCursor: cursor,
          ...(atTail && i === entries.length - 1 ? { upToDate: true } : {})
        }))
      })
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
  const body = Stream.unfold(
    { view: first, after: afterOf(request, first), done: false, announced: false } as State,
    step
  ).pipe(
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

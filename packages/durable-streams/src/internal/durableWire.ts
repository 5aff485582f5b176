/**
 * The wire format of the Durable Streams protocol: offsets, header names, JSON mode
 * framing, response cursors and SSE frames.
 *
 * @internal
 */
import { Json, Sse } from "@sluice/core"
import * as Option from "effect/Option"
import * as Result from "effect/Result"

/** @internal */
export const headers = {
  nextOffset: "stream-next-offset",
  upToDate: "stream-up-to-date",
  cursor: "stream-cursor",
  closed: "stream-closed",
  ttl: "stream-ttl",
  expiresAt: "stream-expires-at",
  seq: "stream-seq",
  producerId: "producer-id",
  producerEpoch: "producer-epoch",
  producerSeq: "producer-seq",
  expectedSeq: "producer-expected-seq",
  receivedSeq: "producer-received-seq",
  sseEncoding: "stream-sse-data-encoding",
  forkedFrom: "stream-forked-from",
  forkOffset: "stream-fork-offset",
  forkSubOffset: "stream-fork-sub-offset"
} as const

const pad = (part: string): string => part.padStart(16, "0")

/**
 * The offset of an entry id `<ms>-<seq>`: `<ms>_<seq>`, each part zero-padded to 16
 * digits, so that offsets order as strings the way entries order in the stream.
 *
 * @internal
 */
export const offsetOf = (entryId: string): string => {
  const dash = entryId.indexOf("-")
  return `${pad(entryId.slice(0, dash))}_${pad(entryId.slice(dash + 1))}`
}

/** The offset before every entry. @internal */
export const startOffset = offsetOf("0-0")

const offsetPattern = /^(\d{1,20})_(\d{1,20})$/
const maxPart = 18446744073709551615n

/**
 * The entry id of an offset, if it is one.
 *
 * @internal
 */
export const entryIdOf = (offset: string): Option.Option<string> => {
  const match = offsetPattern.exec(offset)
  if (match === null) return Option.none()
  const ms = BigInt(match[1]!)
  const seq = BigInt(match[2]!)
  return ms > maxPart || seq > maxPart ? Option.none() : Option.some(`${ms}-${seq}`)
}

/**
 * The content type without parameters, lower-cased.
 *
 * @internal
 */
export const mediaType = (contentType: string | undefined): string =>
  (contentType ?? "").split(";")[0]!.trim().toLowerCase()

/** @internal */
export const isJson = (contentType: string | undefined): boolean => mediaType(contentType) === "application/json"

/** @internal */
export const isText = (contentType: string | undefined): boolean => {
  const type = mediaType(contentType)
  return type.startsWith("text/") || type === "application/json"
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * Why a JSON body was refused: not JSON, an empty array on an append, or nested
 * deeper than the limit (docs/http.md#json-nesting).
 *
 * @internal
 */
export type JsonRefusal = "invalid" | "empty_array" | Json.JsonTooDeep

/**
 * A JSON body as stored: its values, each serialized, joined and ended by commas (an
 * array is flattened one level). An empty array stores nothing when a stream is
 * created with it, and is refused on an append. The body's nesting is checked against
 * `maxDepth` before it is parsed (one pass, no recursion), so the serialization, which
 * recurses once a level, never meets a value deeper than that.
 *
 * @internal
 */
export const jsonEntry = (
  body: Uint8Array,
  creating: boolean,
  maxDepth: number
): { readonly stored?: Uint8Array; readonly refused?: JsonRefusal } => {
  const parsed = Json.parseBounded(decoder.decode(body), maxDepth)
  if (Result.isFailure(parsed)) return { refused: parsed.failure._tag === "JsonTooDeep" ? parsed.failure : "invalid" }
  const values = Array.isArray(parsed.success) ? parsed.success : [parsed.success]
  if (values.length === 0) return creating ? {} : { refused: "empty_array" }
  return { stored: encoder.encode(values.map((value) => JSON.stringify(value)).join(",") + ",") }
}

/**
 * The JSON values of stored entries, each serialized (entries of the state protocol,
 * objects with `headers.operation` or `headers.control`, get their offset in
 * `headers.offset`).
 *
 * @internal
 */
export const jsonValues = (
  entries: ReadonlyArray<{ readonly offset: string; readonly data: Uint8Array }>
): Array<string> => entries.flatMap(({ data, offset }) => storedValues(data).map((value) => withOffset(value, offset)))

// The JSON values of one stored entry.
const storedValues = (data: Uint8Array): Array<unknown> => {
  const text = decoder.decode(data).trimEnd()
  return JSON.parse(`[${text.endsWith(",") ? text.slice(0, -1) : text}]`)
}

/**
 * The first `count` bytes of a stored entry, or in JSON mode its first `count` values
 * as stored; none when the entry is shorter.
 *
 * @internal
 */
export const entryPrefix = (json: boolean, data: Uint8Array, count: number): Uint8Array | undefined => {
  if (!json) return count <= data.length ? data.slice(0, count) : undefined
  const values = storedValues(data)
  return count <= values.length
    ? encoder.encode(values.slice(0, count).map((value) => JSON.stringify(value)).join(",") + ",")
    : undefined
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const withOffset = (value: unknown, offset: string): string => {
  if (!isRecord(value) || !isRecord(value.headers)) return JSON.stringify(value)
  const { headers: valueHeaders } = value
  if (typeof valueHeaders.operation !== "string" && typeof valueHeaders.control !== "string") {
    return JSON.stringify(value)
  }
  return JSON.stringify({ ...value, headers: { ...valueHeaders, offset } })
}

/**
 * A JSON array of serialized values.
 *
 * @internal
 */
export const jsonArray = (values: ReadonlyArray<string>): Uint8Array => encoder.encode(`[${values.join(",")}]`)

/**
 * The bytes of entries one after the other.
 *
 * @internal
 */
export const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

const cursorEpochMs = Date.UTC(2024, 9, 9)
const cursorIntervalMs = 20_000

/**
 * The cursor of a live response: the number of the current 20-second interval since
 * the protocol's epoch, or one past the client's cursor when that is not behind (so a
 * cache in between never answers a poll with the response it answered before).
 *
 * @internal
 */
export const responseCursor = (now: number, client: string | undefined): string => {
  const current = Math.floor((now - cursorEpochMs) / cursorIntervalMs)
  const given = client === undefined ? Number.NaN : Number.parseInt(client, 10)
  return String(Number.isNaN(given) || given < current ? current : given + 1)
}

/**
 * One SSE event, written by core's `Sse.encodeEvent`: every line of the payload (split
 * at CR, LF or CRLF) in a `data:` line of its own, so that a payload cannot end the
 * event or forge another.
 *
 * @internal
 */
export const sseEvent = (event: string, payload: string): Uint8Array =>
  encoder.encode(Sse.encodeEvent({ event, data: payload }, { dataSpace: false }))

/** @internal */
export const utf8 = (data: Uint8Array): string => decoder.decode(data)

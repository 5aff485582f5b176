/**
 * The SSE frames of entries as bytes, made once per entry in the process
 * (docs/http.md#readers-share-one-tail). The shared tails hand every reader of a
 * stream the same entries, in blocks (a catch-up page, a batch of the live tail):
 * `share` records a block, and the first reader that needs its frames encodes the
 * whole block, into segments of at most a write; every other reader of that block sends
 * the same segments (or slices of them), so a reader's catch-up neither decodes nor
 * encodes an entry again, and a reader whose client does not read keeps a segment or
 * two alive, never a page. An entry of no block (a reader's own tail) is framed on its
 * own.
 *
 * What a reader sends is cut into writes of at most `writeBytes` (64 KiB), so what a
 * reader holds that its client has not taken is a write or two, never a page.
 *
 * @internal
 */
import { Sse } from "@sluice/core"
import type { StreamEntry } from "@sluice/redis"
import { TurnEntry } from "@sluice/turns"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"

const decodeFields = Schema.decodeUnknownResult(TurnEntry.TurnEntryFields)
const fieldNames: ReadonlySet<string> = new Set(["eventId", "timestamp", "turnId", "payloadType", "payload"])

/**
 * The SSE text of an entry (`TurnFeed.frame`): `id` the entry id, `event` its
 * `payloadType`, `data` its `payload`; fails, naming the field, on an entry that is
 * not a turn entry.
 *
 * @internal
 */
export const frameText = (entry: StreamEntry.StreamEntry): Result.Result<string, Schema.SchemaError> => {
  const record: Record<string, string> = {}
  for (const [name, value] of entry.fields) {
    if (fieldNames.has(name) && !(name in record)) record[name] = value
  }
  return Result.map(
    decodeFields(record),
    (fields) => Sse.encodeEvent({ id: entry.id, event: fields.payloadType, data: fields.payload })
  )
}

/**
 * The most bytes one write of a reader carries: 64 KiB, Node's default high-water
 * mark of a socket.
 *
 * @internal
 */
export const writeBytes = 64 * 1024

// A block's frames, in segments of at most `writeBytes` (an entry larger than that has
// a segment of its own), so that a reader whose write waits for its client keeps a
// segment alive, never the whole block: the segment of each entry, where its frame
// starts and ends in it, and how many entries were framed before the first that is
// not a turn entry.
interface Framed {
  readonly segments: ReadonlyArray<Uint8Array>
  readonly segmentOf: Uint32Array
  readonly starts: Uint32Array
  readonly ends: Uint32Array
  readonly valid: number
  readonly error: Schema.SchemaError | undefined
}

interface Block {
  readonly entries: ReadonlyArray<StreamEntry.StreamEntry>
  framed: Framed | undefined
}

interface Place {
  readonly block: Block
  readonly index: number
}

const places = new WeakMap<StreamEntry.StreamEntry, Place>()

/**
 * Records entries that many readers will send: their frames are made once, for the
 * first reader that sends one of them. An entry recorded before keeps its block.
 *
 * @internal
 */
export const share = (entries: ReadonlyArray<StreamEntry.StreamEntry>): void => {
  const block: Block = { entries, framed: undefined }
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index]!
    if (!places.has(entry)) places.set(entry, { block, index })
  }
}

const frameBlock = (block: Block): Framed => {
  if (block.framed !== undefined) return block.framed
  const texts: Array<string> = []
  const sizes: Array<number> = []
  let error: Schema.SchemaError | undefined
  for (const entry of block.entries) {
    const framed = frameText(entry)
    if (Result.isFailure(framed)) {
      error = framed.failure
      break
    }
    texts.push(framed.success)
    sizes.push(Buffer.byteLength(framed.success, "utf8"))
  }
  const segmentOf = new Uint32Array(texts.length)
  const starts = new Uint32Array(texts.length)
  const ends = new Uint32Array(texts.length)
  const segments: Array<Uint8Array> = []
  let first = 0
  while (first < texts.length) {
    // the entries of one segment: as many as fit in a write, at least one
    let size = sizes[first]!
    let last = first + 1
    while (last < texts.length && size + sizes[last]! <= writeBytes) size += sizes[last++]!
    const segment = Buffer.allocUnsafeSlow(size)
    let at = 0
    for (let i = first; i < last; i++) {
      segmentOf[i] = segments.length
      starts[i] = at
      at += segment.write(texts[i]!, at, "utf8")
      ends[i] = at
    }
    segments.push(segment)
    first = last
  }
  block.framed = { segments, segmentOf, starts, ends, valid: texts.length, error }
  return block.framed
}

/**
 * The frames of a chunk of entries, as writes of at most `writeBytes` each, each write
 * one piece of bytes (a shared segment, a slice of one, or frames made for this reader
 * alone), never copied into another; and the failure of the first entry that is not a
 * turn entry, whose frames and those after it are left out.
 *
 * @internal
 */
export const writesOf = (chunk: ReadonlyArray<StreamEntry.StreamEntry>): {
  readonly writes: ReadonlyArray<Uint8Array>
  readonly error: Schema.SchemaError | undefined
} => {
  const writes: Array<Uint8Array> = []
  // (a write that joined pieces would copy them, for each reader: the server's 64 KiB
  // segments are sent as they are, and only an entry larger than a write is cut)
  const add = (piece: Uint8Array) => {
    if (piece.length <= writeBytes) {
      writes.push(piece)
      return
    }
    for (let at = 0; at < piece.length; at += writeBytes) writes.push(piece.subarray(at, at + writeBytes))
  }
  let error: Schema.SchemaError | undefined
  // entries framed here, for this reader alone: those of no block, and those after an
  // entry of their block that is not a turn entry
  const alone = (from: number, to: number) => {
    let text = ""
    for (let at = from; at < to; at++) {
      const framed = frameText(chunk[at]!)
      if (Result.isFailure(framed)) {
        error = framed.failure
        break
      }
      text += framed.success
    }
    if (text !== "") add(Buffer.from(text, "utf8"))
  }
  let i = 0
  while (i < chunk.length && error === undefined) {
    const place = places.get(chunk[i]!)
    if (place === undefined) {
      let end = i + 1
      while (end < chunk.length && !places.has(chunk[end]!)) end++
      alone(i, end)
      i = end
      continue
    }
    const { block, index } = place
    // (a whole block, a catch-up page as read, is taken without looking at its entries)
    let run = chunk === block.entries && index === i ? chunk.length - i : 1
    while (
      i + run < chunk.length && index + run < block.entries.length && chunk[i + run] === block.entries[index + run]
    ) {
      run++
    }
    const framed = frameBlock(block)
    if (index > framed.valid) {
      alone(i, i + run)
    } else {
      const end = Math.min(index + run, framed.valid)
      if (end > index) {
        const firstSegment = framed.segmentOf[index]!
        const lastSegment = framed.segmentOf[end - 1]!
        for (let segment = firstSegment; segment <= lastSegment; segment++) {
          const bytes = framed.segments[segment]!
          const from = segment === firstSegment ? framed.starts[index]! : 0
          const to = segment === lastSegment ? framed.ends[end - 1]! : bytes.length
          add(from === 0 && to === bytes.length ? bytes : bytes.subarray(from, to))
        }
      }
      if (index + run > framed.valid) error = framed.error
    }
    i += run
  }
  return { writes, error }
}

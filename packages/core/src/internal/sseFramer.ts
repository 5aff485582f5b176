import type { SseEvent } from "../Sse.js"

/** @internal */
export interface FramerOptions {
  readonly maxEventSize: number
}

/** @internal */
export type FramerFailure =
  | { readonly _tag: "EventTooLarge"; readonly line: number; readonly size: number }
  | { readonly _tag: "InvalidUtf8"; readonly byteOffset: number; readonly line: number }

/** @internal */
export interface Framer {
  /** Feeds one read; pushes complete events into `out`. Returns a failure or undefined. */
  readonly push: (bytes: Uint8Array, out: Array<SseEvent>) => FramerFailure | undefined
  /**
   * Ends the input; a final event without its blank line is still dispatched, marked
   * `unterminated`.
   */
  readonly end: (out: Array<SseEvent>) => FramerFailure | undefined
}

const LF = 10
const BOM = 0xfeff

/** The name of the field `text[start, end)`, when it is one the framer reads, without slicing it out. */
const fieldName = (text: string, start: number, end: number): "data" | "event" | "id" | "retry" | undefined => {
  switch (end - start) {
    case 4:
      return text.startsWith("data", start) ? "data" : undefined
    case 5:
      return text.startsWith("event", start) ? "event" : text.startsWith("retry", start) ? "retry" : undefined
    case 2:
      return text.startsWith("id", start) ? "id" : undefined
    default:
      return undefined
  }
}

/** The length of the UTF-8 sequence a lead byte starts (1 for a byte no sequence starts with). */
const sequenceLength = (lead: number): number => (lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1)

/**
 * The index of the first byte of `bytes[0, end)` that starts no valid UTF-8 sequence
 * (a stray continuation byte, a lead byte no sequence has, or a lead byte whose
 * sequence breaks off, as the WHATWG decoder reads them), or `end` when there is none.
 * A sequence that `end` cuts short is valid when `cutIsValid`. Only on the failure path
 * and at the end of the input, to say where the input stopped being UTF-8.
 */
const firstInvalid = (bytes: Uint8Array, end: number, cutIsValid = false): number => {
  let i = 0
  while (i < end) {
    const lead = bytes[i]!
    if (lead < 0x80) {
      i++
      continue
    }
    let need: number
    let lower = 0x80
    let upper = 0xbf
    if (lead >= 0xc2 && lead <= 0xdf) need = 1
    else if (lead >= 0xe0 && lead <= 0xef) {
      need = 2
      if (lead === 0xe0) lower = 0xa0
      if (lead === 0xed) upper = 0x9f
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      need = 3
      if (lead === 0xf0) lower = 0x90
      if (lead === 0xf4) upper = 0x8f
    } else return i
    for (let k = 1; k <= need; k++) {
      if (i + k >= end) return cutIsValid ? end : i
      const next = bytes[i + k]
      if (next === undefined || next < lower || next > upper) return i
      lower = 0x80
      upper = 0xbf
    }
    i += need + 1
  }
  return end
}

/**
 * The length of the part of `bytes` that ends on a character boundary: all of it, or
 * up to the lead byte of a sequence the bytes cut short (at most three bytes back).
 * Bytes that are not UTF-8 are left where they are, for the decoder to reject.
 */
const completeUpTo = (bytes: Uint8Array): number => {
  const length = bytes.length
  for (let back = 1; back <= 3 && back <= length; back++) {
    const byte = bytes[length - back]!
    if ((byte & 0xc0) === 0x80) continue // a continuation byte
    return sequenceLength(byte) > back ? length - back : length
  }
  return length
}

/**
 * A mutable SSE framer following the WHATWG event-stream parsing rules: LF, CR and CRLF
 * line ends (a CR at the end of one read and an LF at the start of the next are one
 * line end), comments, multi-line data, `event`/`id`/`retry`, a leading BOM (stripped
 * by the decoder), and UTF-8 characters split across reads.
 *
 * @internal
 */
export const makeFramer = (options: FramerOptions): Framer => {
  // one call per read without `stream` takes the engine's fast path (Node's streaming
  // decode is several times slower); a character split across reads waits in `pending`,
  // and the BOM is stripped here, once, where the streaming decoder would strip it
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
  const pending = new Uint8Array(4) // the first bytes of a character the next read completes
  let pendingLength = 0
  let atStart = true // no text decoded yet
  const max = options.maxEventSize
  let partial: Array<string> = [] // an unterminated line carried to the next reads
  let partialLength = 0
  let skipLf = false // the previous read ended in CR
  let line = 0 // number of lines completed so far
  let bytesSeen = 0
  // the event being built
  let data: string | undefined
  let dataParts: Array<string> | undefined
  let eventType: string | undefined
  let eventSize = 0
  let eventLine = 0
  let lastId: string | undefined
  let retry: number | undefined
  let ended = false // the input ended: an event dispatched now lacks its blank line

  const dispatch = (out: Array<SseEvent>): void => {
    if (data !== undefined) {
      const event: { -readonly [K in keyof SseEvent]: SseEvent[K] } = {
        event: eventType ?? "message",
        data: dataParts === undefined ? data : dataParts.join("\n"),
        line: eventLine
      }
      if (lastId !== undefined) event.id = lastId
      if (retry !== undefined) {
        event.retry = retry
        retry = undefined
      }
      if (ended) event.unterminated = true
      out.push(event)
    }
    data = undefined
    dataParts = undefined
    eventType = undefined
    eventSize = 0
    eventLine = 0
  }

  const field = (text: string, start: number, end: number): FramerFailure | undefined => {
    // text[start, end) is one complete, non-empty line
    line++
    if (text.charCodeAt(start) === 58 /* : */) return undefined // comment
    if (eventLine === 0) eventLine = line
    eventSize += end - start
    if (eventSize > max) return { _tag: "EventTooLarge", line, size: eventSize }
    const colon = text.indexOf(":", start)
    const nameEnd = colon === -1 || colon >= end ? end : colon
    let value = ""
    if (nameEnd < end) {
      const valueStart = text.charCodeAt(colon + 1) === 32 && colon + 1 < end ? colon + 2 : colon + 1
      value = text.slice(valueStart, end)
    }
    switch (fieldName(text, start, nameEnd)) {
      case "data":
        if (data === undefined) data = value
        else if (dataParts === undefined) dataParts = [data, value]
        else dataParts.push(value)
        break
      case "event":
        eventType = value
        break
      case "id":
        if (value.indexOf("\u0000") === -1) lastId = value
        break
      case "retry":
        if (/^\d+$/.test(value)) retry = Number(value)
        break
      default:
        break // unknown fields are ignored, as the SSE rules say
    }
    return undefined
  }

  const feedText = (text: string, out: Array<SseEvent>, from: number): FramerFailure | undefined => {
    let pos = from
    const length = text.length
    if (skipLf && pos < length) {
      if (text.charCodeAt(pos) === LF) pos++
      skipLf = false
    }
    let nextLf = text.indexOf("\n", pos)
    let nextCr = text.indexOf("\r", pos)
    while (pos < length) {
      if (nextLf !== -1 && nextLf < pos) nextLf = text.indexOf("\n", pos)
      if (nextCr !== -1 && nextCr < pos) nextCr = text.indexOf("\r", pos)
      let end: number
      let next: number
      if (nextCr === -1 || (nextLf !== -1 && nextLf < nextCr)) {
        if (nextLf === -1) break
        end = nextLf
        next = nextLf + 1
      } else {
        end = nextCr
        if (nextCr + 1 === length) {
          skipLf = true
          next = length
        } else {
          next = text.charCodeAt(nextCr + 1) === LF ? nextCr + 2 : nextCr + 1
        }
      }
      if (end === pos) {
        line++
        dispatch(out)
      } else {
        const failure = field(text, pos, end)
        if (failure !== undefined) return failure
      }
      pos = next
    }
    if (pos < length) {
      partial = [text.slice(pos)]
      partialLength = length - pos
    } else {
      partial = []
      partialLength = 0
    }
    return checkPartial()
  }

  const checkPartial = (): FramerFailure | undefined =>
    eventSize + partialLength > max
      ? { _tag: "EventTooLarge", line: line + 1, size: eventSize + partialLength }
      : undefined

  const takePartial = (text: string): string => {
    const joined = partial.length === 0 ? text : partial.join("") + text
    partial = []
    partialLength = 0
    return joined
  }

  // text decoded so far has its BOM stripped once, at the start of the body
  const withoutBom = (text: string): string => {
    if (!atStart || text.length === 0) return text
    atStart = false
    return text.charCodeAt(0) === BOM ? text.slice(1) : text
  }

  /**
   * One read as text; the bytes of a character it cuts short wait in `pending`. Bytes
   * that are not UTF-8 give where the first of them is (`byteOffset`, in the body) and
   * the text before it, so that what came before is framed first.
   */
  const decode = (
    bytes: Uint8Array,
    final: boolean
  ): string | { readonly byteOffset: number; readonly before: string } => {
    let text = ""
    let input = bytes
    let taken = 0 // bytes of this read that completed the pending character
    if (pendingLength > 0) {
      // the character the previous read cut short takes its last bytes from this one
      const start = bytesSeen - pendingLength
      taken = Math.min(sequenceLength(pending[0]!) - pendingLength, bytes.length)
      for (let i = 0; i < taken; i++) pending[pendingLength++] = bytes[i]!
      if (pendingLength < sequenceLength(pending[0]!) && !final) return ""
      try {
        text = decoder.decode(pending.subarray(0, pendingLength))
      } catch {
        return { byteOffset: start, before: "" }
      }
      pendingLength = 0
      input = taken === 0 ? bytes : bytes.subarray(taken)
    }
    const end = final ? input.length : completeUpTo(input)
    try {
      if (end > 0) text += decoder.decode(end === input.length ? input : input.subarray(0, end))
    } catch {
      // the slow path, once: find the byte, and decode what precedes it
      const at = firstInvalid(input, end)
      let before = text
      try {
        before += decoder.decode(input.subarray(0, at))
      } catch {
        return { byteOffset: bytesSeen, before: "" }
      }
      return { byteOffset: bytesSeen + taken + at, before: withoutBom(before) }
    }
    for (let i = end; i < input.length; i++) pending[pendingLength++] = input[i]!
    return withoutBom(text)
  }

  const frame = (text: string, out: Array<SseEvent>): FramerFailure | undefined => {
    if (partial.length === 0 || skipLf) return feedText(text, out, 0)
    const lf = text.indexOf("\n")
    const cr = text.indexOf("\r")
    if (lf === -1 && cr === -1) {
      // still inside one long line: keep the pieces, join them once the line ends
      partial.push(text)
      partialLength += text.length
      return checkPartial()
    }
    // the carried line ends in this read: frame it alone, so that the read is never
    // joined to it (the engine would copy the whole read into the joined string)
    const end = cr === -1 || (lf !== -1 && lf < cr) ? lf : cr
    const next = end === cr && text.charCodeAt(end + 1) === LF ? end + 2 : end + 1
    const failure = feedText(takePartial(text.slice(0, next)), out, 0)
    return failure !== undefined ? failure : feedText(text, out, next)
  }

  // the events before bytes that are not UTF-8 are framed; the failure names the first
  // such byte and its line (the lines completed before it, plus its own)
  const invalid = (
    decoded: { readonly byteOffset: number; readonly before: string },
    out: Array<SseEvent>
  ): FramerFailure => {
    const failure = decoded.before.length === 0 ? undefined : frame(decoded.before, out)
    return failure ?? { _tag: "InvalidUtf8", byteOffset: decoded.byteOffset, line: line + 1 }
  }

  return {
    push: (bytes, out) => {
      const text = decode(bytes, false)
      bytesSeen += bytes.length
      return typeof text === "string" ? frame(text, out) : invalid(text, out)
    },
    end: (out) => {
      // a character the input ended inside is a body cut short, not invalid UTF-8; bytes
      // no character starts with (0xFF at the very end) are decoded, and refused, below
      if (
        pendingLength > 0 && pendingLength < sequenceLength(pending[0]!) &&
        firstInvalid(pending, pendingLength, true) === pendingLength
      ) pendingLength = 0
      const text = decode(new Uint8Array(0), true)
      if (typeof text !== "string") return invalid(text, out)
      const rest = takePartial(text)
      ended = true
      if (rest.length > 0) {
        const failure = feedText(rest + "\n", out, 0)
        if (failure !== undefined) return failure
      }
      dispatch(out)
      return undefined
    }
  }
}

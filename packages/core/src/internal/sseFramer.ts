import type { SseEvent } from "../Sse.js"

/** @internal */
export interface FramerOptions {
  readonly maxEventSize: number
}

/** @internal */
export type FramerFailure =
  | { readonly _tag: "EventTooLarge"; readonly line: number; readonly size: number }
  | { readonly _tag: "InvalidUtf8"; readonly byteOffset: number }

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

  const decode = (bytes: Uint8Array, final: boolean): string | FramerFailure => {
    let text = ""
    let input = bytes
    if (pendingLength > 0) {
      // the character the previous read cut short takes its last bytes from this one
      const start = bytesSeen - pendingLength
      const take = Math.min(sequenceLength(pending[0]!) - pendingLength, bytes.length)
      for (let i = 0; i < take; i++) pending[pendingLength++] = bytes[i]!
      if (pendingLength < sequenceLength(pending[0]!) && !final) return ""
      try {
        text = decoder.decode(pending.subarray(0, pendingLength))
      } catch {
        return { _tag: "InvalidUtf8", byteOffset: start }
      }
      pendingLength = 0
      input = take === 0 ? bytes : bytes.subarray(take)
    }
    const end = final ? input.length : completeUpTo(input)
    try {
      if (end > 0) text += decoder.decode(end === input.length ? input : input.subarray(0, end))
    } catch {
      return { _tag: "InvalidUtf8", byteOffset: bytesSeen }
    }
    for (let i = end; i < input.length; i++) pending[pendingLength++] = input[i]!
    if (atStart && text.length > 0) {
      atStart = false
      if (text.charCodeAt(0) === BOM) text = text.slice(1)
    }
    return text
  }

  return {
    push: (bytes, out) => {
      const text = decode(bytes, false)
      bytesSeen += bytes.length
      if (typeof text !== "string") return text
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
    },
    end: (out) => {
      // a character the input ended inside is a body cut short, not invalid UTF-8
      if (pendingLength > 0 && pendingLength < sequenceLength(pending[0]!)) pendingLength = 0
      const text = decode(new Uint8Array(0), true)
      if (typeof text !== "string") return text
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

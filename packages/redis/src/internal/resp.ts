/**
 * The Redis protocol (RESP2), as far as the live layer's batch writes need it: commands
 * written straight into the bytes a socket sends, and a reader that takes the replies
 * out of the bytes a connection receives, in order, whatever way the bytes are split.
 *
 * @internal
 */

/**
 * An error reply (`-ERR ...`): the text after the dash.
 *
 * @internal
 */
export class ErrorReply {
  constructor(readonly message: string) {}
}

/**
 * A reply: a simple or bulk string, an integer, a null bulk string or array, an error,
 * or an array of replies.
 *
 * @internal
 */
export type Reply = string | number | null | ErrorReply | ReadonlyArray<Reply>

/**
 * The bytes did not follow the protocol; the connection can no longer be read.
 *
 * @internal
 */
export class ProtocolError extends Error {
  override readonly name = "ProtocolError"
}

const CR = 13
const LF = 10

// Below this length a text is written byte by byte when it is ASCII: cheaper than a
// call into the runtime's encoder.
const shortText = 32
// Above this length a text's bytes are counted before it is written; below, it is
// given room for three bytes a character.
const largeText = 64 * 1024

/**
 * RESP (arrays of bulk strings) written straight into bytes, pipeline after pipeline,
 * for the batch connection's socket writes. A text is copied once, from the string the
 * caller holds into the bytes that leave; no string is built for a command or a
 * pipeline (a string built of pieces is copied whole by the engine before it can be
 * written, and again by every join).
 *
 * The bytes are written into a slab; `take` hands out those written since the last
 * `take`, which are never written over (the socket may hold them until it sends
 * them): the next bytes go after them, or into a new slab once this one is full.
 *
 * @internal
 */
export class RespWriter {
  private slab: Buffer
  private start = 0
  private end = 0

  constructor(private readonly slabSize = 64 * 1024) {
    this.slab = Buffer.allocUnsafe(slabSize)
  }

  /** The bytes written and not yet taken. */
  get length(): number {
    return this.end - this.start
  }

  /** Where the next command starts, for `undo`. */
  mark(): number {
    return this.end - this.start
  }

  /** Forgets what was written since `mark` (a pipeline that failed midway). */
  undo(mark: number): void {
    this.end = this.start + mark
  }

  /** The bytes written since the last `take`. */
  take(): Buffer {
    const taken = this.slab.subarray(this.start, this.end)
    this.start = this.end
    // a slab grown past the usual size for one large pipeline is not kept
    if (this.slab.length > this.slabSize) {
      this.slab = Buffer.allocUnsafe(this.slabSize)
      this.start = this.end = 0
    }
    return taken
  }

  /** One command as an array of bulk strings. */
  command(args: ReadonlyArray<string>): void {
    this.header(42, args.length)
    for (const arg of args) this.bulk(arg)
  }

  /**
   * One `XADD key [MAXLEN ~ n] id field value ...` per entry.
   */
  xadds(
    key: string,
    entries: ReadonlyArray<{ readonly id: string; readonly fields: ReadonlyArray<readonly [string, string]> }>,
    maxLen: number | undefined
  ): void {
    const head = maxLen === undefined ? 3 : 6
    const limit = maxLen === undefined ? "" : String(maxLen)
    for (const entry of entries) {
      const fields = entry.fields
      this.header(42, head + fields.length * 2)
      this.bulk("XADD")
      this.bulk(key)
      if (maxLen !== undefined) {
        this.bulk("MAXLEN")
        this.bulk("~")
        this.bulk(limit)
      }
      this.bulk(entry.id)
      for (const [name, value] of fields) {
        this.bulk(name)
        this.bulk(value)
      }
    }
  }

  // Room for `bytes` more: a new slab when this one is short, with the bytes not yet
  // taken moved to it (those taken stay where they are, with whoever holds them).
  private room(bytes: number): void {
    if (this.end + bytes <= this.slab.length) return
    const pending = this.end - this.start
    const size = Math.max(this.slabSize, 2 * (pending + bytes))
    const next = Buffer.allocUnsafe(size)
    this.slab.copy(next, 0, this.start, this.end)
    this.slab = next
    this.start = 0
    this.end = pending
  }

  // `*n` or `$n`, then CRLF
  private header(type: number, n: number): void {
    this.room(14)
    const slab = this.slab
    slab[this.end++] = type
    this.end = writeDigits(slab, this.end, n)
    slab[this.end++] = CR
    slab[this.end++] = LF
  }

  private bulk(value: string): void {
    const length = value.length
    if (length < shortText && this.ascii(value)) return
    let bytes: number
    if (length > largeText) {
      // counted first, so that the room made is what it takes
      bytes = Buffer.byteLength(value)
      this.header(36, bytes)
      this.room(bytes + 2)
      this.slab.write(value, this.end, "utf8")
    } else {
      // Written where it would start if it were ASCII, then its header before it; a
      // text whose byte length has more digits than its length is moved along.
      this.room(length * 3 + 16)
      const guess = digitCount(length) + 3
      const at = this.end + guess
      bytes = this.slab.write(value, at, "utf8")
      const needed = digitCount(bytes) + 3
      if (needed !== guess) this.slab.copy(this.slab, this.end + needed, at, at + bytes)
      this.header(36, bytes)
    }
    this.end += bytes
    this.slab[this.end++] = CR
    this.slab[this.end++] = LF
  }

  // A short text as a bulk string, byte by byte; false (nothing written) when it is
  // not ASCII.
  private ascii(value: string): boolean {
    const length = value.length
    this.room(length + 16)
    const slab = this.slab
    let at = writeDigits(slab, this.end + 1, length)
    slab[at++] = CR
    slab[at++] = LF
    for (let i = 0; i < length; i++) {
      const code = value.charCodeAt(i)
      if (code >= 0x80) return false
      slab[at++] = code
    }
    slab[this.end] = 36
    slab[at++] = CR
    slab[at++] = LF
    this.end = at
    return true
  }
}

const digitCount = (n: number): number => {
  let count = 1
  while (n >= 10) {
    n = Math.floor(n / 10)
    count++
  }
  return count
}

// Writes a non-negative integer's decimal digits at `at`; gives where they end.
const writeDigits = (slab: Buffer, at: number, n: number): number => {
  const end = at + digitCount(n)
  let i = end
  do {
    slab[--i] = 48 + (n % 10)
    n = Math.floor(n / 10)
  } while (n > 0)
  return end
}

const incomplete: unique symbol = Symbol("incomplete")

/**
 * Takes replies out of received bytes. `feed` hands every complete reply to `onReply`
 * and keeps the bytes of an unfinished one for the next call. It throws a
 * `ProtocolError` on bytes that are not RESP2.
 *
 * @internal
 */
export class ReplyReader {
  private rest: Buffer | undefined = undefined
  private offset = 0

  feed(chunk: Buffer, onReply: (reply: Reply) => void): void {
    const buffer = this.rest === undefined ? chunk : Buffer.concat([this.rest, chunk])
    this.offset = 0
    while (this.offset < buffer.length) {
      const start = this.offset
      const reply = this.parse(buffer)
      if (reply === incomplete) {
        this.offset = start
        break
      }
      onReply(reply)
    }
    this.rest = this.offset < buffer.length ? buffer.subarray(this.offset) : undefined
  }

  // The end of the line that starts at `from` (the index of its `\r`), or -1 when the
  // line is not all there yet.
  private lineEnd(buffer: Buffer, from: number): number {
    const end = buffer.indexOf(CR, from)
    return end < 0 || end + 1 >= buffer.length ? -1 : end
  }

  private integer(buffer: Buffer, from: number, end: number): number {
    let i = from
    const negative = buffer[i] === 45
    if (negative) i++
    if (i >= end) throw new ProtocolError("an empty number")
    let value = 0
    for (; i < end; i++) {
      const digit = buffer[i]! - 48
      if (digit < 0 || digit > 9) throw new ProtocolError(`a malformed number: ${buffer.toString("latin1", from, end)}`)
      value = value * 10 + digit
    }
    return negative ? -value : value
  }

  private parse(buffer: Buffer): Reply | typeof incomplete {
    const type = buffer[this.offset]
    const start = this.offset + 1
    const end = this.lineEnd(buffer, start)
    if (end < 0) return incomplete
    if (buffer[end + 1] !== LF) throw new ProtocolError("a line not ended by CRLF")
    const next = end + 2
    switch (type) {
      case 43: // +
        this.offset = next
        return buffer.toString("utf8", start, end)
      case 45: // -
        this.offset = next
        return new ErrorReply(buffer.toString("utf8", start, end))
      case 58: // :
        this.offset = next
        return this.integer(buffer, start, end)
      case 36: { // $
        const length = this.integer(buffer, start, end)
        if (length < 0) {
          this.offset = next
          return null
        }
        if (next + length + 2 > buffer.length) return incomplete
        if (buffer[next + length] !== CR || buffer[next + length + 1] !== LF) {
          throw new ProtocolError("a bulk string longer than its length")
        }
        this.offset = next + length + 2
        return buffer.toString("utf8", next, next + length)
      }
      case 42: { // *
        const length = this.integer(buffer, start, end)
        this.offset = next
        if (length < 0) return null
        const items: Array<Reply> = []
        for (let i = 0; i < length; i++) {
          if (this.offset >= buffer.length) return incomplete
          const item = this.parse(buffer)
          if (item === incomplete) return incomplete
          items.push(item)
        }
        return items
      }
      default:
        throw new ProtocolError(`an unknown reply type ${JSON.stringify(String.fromCharCode(type ?? 0))}`)
    }
  }
}

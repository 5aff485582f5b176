/**
 * The Redis protocol (RESP2), as far as the live layer's batch writes need it: commands
 * encoded as one string per pipeline, and a reader that takes the replies out of the
 * bytes a connection receives, in order, whatever way the bytes are split.
 *
 * @internal
 */
import { Text } from "@sluice/core"

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

const bulk = (value: string): string => `$${Buffer.byteLength(value)}\r\n${value}\r\n`

/**
 * One command as a RESP array of bulk strings.
 *
 * @internal
 */
export const command = (args: ReadonlyArray<string>): string => {
  let out = `*${args.length}\r\n`
  for (const arg of args) out += bulk(arg)
  return out
}

/**
 * One `XADD key [MAXLEN ~ n] id field value ...` per entry, concatenated: the whole
 * pipeline in one string, compacted (it may wait for its write while other turns'
 * pipelines go out, and its socket write copies it whole anyway).
 *
 * @internal
 */
export const xadds = (
  key: string,
  entries: ReadonlyArray<{ readonly id: string; readonly fields: ReadonlyArray<readonly [string, string]> }>,
  maxLen: number | undefined
): string => {
  const head = maxLen === undefined ? 3 : 6
  const target = maxLen === undefined
    ? `$4\r\nXADD\r\n${bulk(key)}`
    : `$4\r\nXADD\r\n${bulk(key)}$6\r\nMAXLEN\r\n$1\r\n~\r\n${bulk(String(maxLen))}`
  let out = ""
  for (const entry of entries) {
    const fields = entry.fields
    out += `*${head + fields.length * 2}\r\n${target}${bulk(entry.id)}`
    for (const [name, value] of fields) out += bulk(name) + bulk(value)
  }
  return Text.compact(out)
}

const CR = 13
const LF = 10
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

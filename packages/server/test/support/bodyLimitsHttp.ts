/**
 * HTTP/1.1 over a raw socket, for the tests of request limits: a request whose head
 * says what it likes (a `Content-Length` it never sends, any `Host`), a body written
 * chunk by chunk only while the server takes it (each chunk handed on once the last
 * left), stopped as soon as the answer arrives; how many body bytes were sent, the
 * answer, and whether the server closed the connection.
 */
import * as Effect from "effect/Effect"
import { connect } from "node:net"

export interface RawReply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  /** Body bytes the socket handed to the kernel before the answer came. */
  readonly sent: number
}

export interface RawBody {
  /** Written again and again, `total` bytes in all (chunked when `chunked`). */
  readonly chunk: Uint8Array
  readonly total: number
  readonly chunked: boolean
}

/** `port`'s answer to `head` (the request line and headers, without the blank line) and `body`. */
export const rawRequest = (port: number, head: string, body?: RawBody): Effect.Effect<RawReply> =>
  Effect.promise(() =>
    new Promise<RawReply>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1")
      let received = Buffer.alloc(0)
      let sent = 0
      let answered: RawReply | undefined
      const parse = (): RawReply | undefined => {
        const end = received.indexOf("\r\n\r\n")
        if (end < 0) return undefined
        const [statusLine, ...lines] = received.subarray(0, end).toString("latin1").split("\r\n")
        const headers: Record<string, string> = {}
        for (const line of lines) {
          const colon = line.indexOf(":")
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
        }
        const length = Number(headers["content-length"] ?? "0")
        if (received.length - end - 4 < length) return undefined
        const text = received.subarray(end + 4, end + 4 + length).toString("utf8")
        return { status: Number(statusLine!.split(" ")[1]), headers, body: text, sent }
      }
      const finish = () => {
        if (answered !== undefined) return
        answered = parse()
        if (answered === undefined) return
        socket.end()
        resolve(answered)
      }
      socket.on("data", (data: Buffer) => {
        received = Buffer.concat([received, data])
        finish()
      })
      socket.on("error", () => {})
      socket.on("close", () => {
        finish()
        if (answered === undefined) reject(new Error(`no answer; ${received.length} bytes received`))
      })
      socket.on("connect", () => {
        socket.write(`${head}\r\n\r\n`, "latin1")
        if (body === undefined) return
        const write = (bytes: Uint8Array | string) =>
          new Promise<boolean>((done) => socket.write(bytes, (error) => done(error === undefined || error === null)))
        const pump = async () => {
          while (answered === undefined && sent < body.total && !socket.destroyed) {
            const piece = body.chunk.subarray(0, Math.min(body.chunk.length, body.total - sent))
            const ok = body.chunked
              ? await write(`${piece.length.toString(16)}\r\n`) && await write(piece) && await write("\r\n")
              : await write(piece)
            if (!ok) return
            sent += piece.length
          }
          if (body.chunked && answered === undefined && !socket.destroyed) await write("0\r\n\r\n")
        }
        void pump()
      })
    })
  )

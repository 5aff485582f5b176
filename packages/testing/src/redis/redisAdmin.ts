/**
 * Admin commands for the end-to-end tests, on a connection of their own (plain RESP
 * over a socket): which connections a Redis holds, and cutting one of them.
 */
import * as Effect from "effect/Effect"
import { connect } from "node:net"

const encode = (args: ReadonlyArray<string>): string =>
  `*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join("")}`

// The first complete reply in `buffer` (a simple string, error, integer or bulk string).
const parse = (buffer: Buffer): { readonly value: string; readonly size: number } | undefined => {
  const end = buffer.indexOf("\r\n")
  if (end < 0) return undefined
  const head = buffer.subarray(1, end).toString()
  switch (String.fromCharCode(buffer[0]!)) {
    case "+":
    case ":":
      return { value: head, size: end + 2 }
    case "-":
      throw new Error(`Redis error: ${head}`)
    case "$": {
      const length = Number(head)
      if (length < 0) return { value: "", size: end + 2 }
      if (buffer.length < end + 2 + length + 2) return undefined
      return { value: buffer.subarray(end + 2, end + 2 + length).toString(), size: end + 2 + length + 2 }
    }
    default:
      throw new Error(`unexpected reply ${buffer.toString()}`)
  }
}

/**
 * Runs commands on a fresh connection and returns the last reply.
 *
 * @since 0.3.0
 */
export const admin = (url: string, ...commands: ReadonlyArray<ReadonlyArray<string>>): Effect.Effect<string> =>
  Effect.promise(() =>
    new Promise<string>((resolve, reject) => {
      const target = new URL(url)
      const auth = target.password === ""
        ? []
        : [[
          "AUTH",
          ...(target.username === "" ? [] : [decodeURIComponent(target.username)]),
          decodeURIComponent(target.password)
        ]]
      const all = [...auth, ...commands]
      const socket = connect(Number(target.port || 6379), target.hostname)
      let buffer = Buffer.alloc(0)
      let replies = 0
      socket.on("connect", () => socket.write(all.map(encode).join("")))
      socket.on("data", (data: Buffer) => {
        buffer = Buffer.concat([buffer, data])
        try {
          while (buffer.length > 0) {
            const reply = parse(buffer)
            if (reply === undefined) return
            replies++
            buffer = buffer.subarray(reply.size)
            if (replies === all.length) {
              socket.end()
              resolve(reply.value)
            }
          }
        } catch (error) {
          socket.destroy()
          reject(error)
        }
      })
      socket.on("error", reject)
    })
  )

/**
 * One connection of `CLIENT LIST`: its id, name, database and last command.
 *
 * @since 0.3.0
 */
export interface ClientInfo {
  readonly id: string
  readonly name: string
  readonly db: string
  readonly cmd: string
}

/**
 * The connections Redis holds, from `CLIENT LIST`.
 *
 * @since 0.3.0
 */
export const clients = (url: string): Effect.Effect<ReadonlyArray<ClientInfo>> =>
  Effect.map(
    admin(url, ["CLIENT", "LIST"]),
    (text) =>
      text.split("\n").filter((line) => line.trim() !== "").map((line) => {
        const fields = new Map(
          line.trim().split(" ").map((pair) => {
            const at = pair.indexOf("=")
            return [pair.slice(0, at), pair.slice(at + 1)] as const
          })
        )
        return {
          id: fields.get("id") ?? "",
          name: fields.get("name") ?? "",
          db: fields.get("db") ?? "",
          cmd: fields.get("cmd") ?? ""
        }
      })
  )

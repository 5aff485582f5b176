/**
 * The live layer's batch connection against the test `redis-server`: replies reach the
 * pipeline that sent them, a lost connection settles what was waiting with the
 * replies that did arrive, nothing is resent, and the setup (AUTH, SELECT) follows the
 * URL. A loopback server that never answers stands in for a hung Redis. Pipelines
 * waiting for their replies keep no copy of their text (counted on the heap).
 */
import { describe, expect, it } from "@effect/vitest"
import { heapAfterCollection } from "@sluice/testing/heap"
import { freePort } from "@sluice/testing/redis"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { randomUUID } from "node:crypto"
import { createServer, type Socket } from "node:net"
import { inject } from "vitest"
import * as BatchConnection from "../src/internal/batchConnection.js"
import { ErrorReply, RespWriter } from "../src/internal/resp.js"

const url = inject("redisUrl")
const options = (target: string) => ({ url: target, connectTimeoutMs: 2_000, commandTimeoutMs: 2_000 })
const connection = (target = url) => BatchConnection.make(options(target))
const send = (link: BatchConnection.BatchConnection, ...commands: ReadonlyArray<ReadonlyArray<string>>) =>
  link.send((out) => commands.forEach((args) => out.command(args)), commands.length)

// The bytes of commands as the connection writes them.
const bytesOf = (...commands: ReadonlyArray<ReadonlyArray<string>>): Buffer => {
  const out = new RespWriter()
  commands.forEach((args) => out.command(args))
  return out.take()
}

interface SilentServer {
  readonly url: string
  readonly connections: () => number
  /** The bytes read from every connection. */
  readonly received: () => number
  /** Waits (a turn of the event loop at a time) until `bytes` have been read. */
  readonly hasRead: (bytes: number) => Effect.Effect<void>
  /** The letters read, one per run of the same letter, in the order they came. */
  readonly letters: () => string
  /** Stops reading (the sockets fill up), or reads again. */
  readonly reading: (on: boolean) => void
  readonly close: Effect.Effect<void>
}

// A loopback server that answers the connection's setup with +OK and then nothing.
const silentServer = Effect.acquireRelease(
  Effect.callback<SilentServer>(
    (resume) => {
      const sockets = new Set<Socket>()
      let received = 0
      let letters = ""
      const server = createServer((socket) => {
        sockets.add(socket)
        let answered = false
        socket.on("data", (chunk: Buffer) => {
          received += chunk.length
          for (const byte of chunk) {
            const letter = byte >= 97 && byte <= 122 ? String.fromCharCode(byte) : undefined
            if (letter !== undefined && letter !== letters.at(-1)) letters += letter
          }
          if (!answered) socket.write("+OK\r\n")
          answered = true
        })
        socket.on("error", () => {})
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resume(Effect.succeed({
          url: `redis://127.0.0.1:${port}`,
          connections: () => sockets.size,
          received: () => received,
          hasRead: (bytes) =>
            Effect.whileLoop({
              while: () => received < bytes,
              body: () => Effect.yieldNow,
              step: () => {}
            }),
          letters: () => letters,
          reading: (on) => {
            for (const socket of sockets) {
              if (on) socket.resume()
              else socket.pause()
            }
          },
          close: Effect.callback<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done(Effect.void))
          })
        }))
      })
    }
  ),
  (server) => server.close
)

// A link to the silent server that never gives up waiting, open, with a first
// pipeline (PING) read by the server and waiting for its reply.
const openLink = (server: SilentServer) =>
  Effect.gen(function*() {
    const link = yield* BatchConnection.make({ url: server.url, connectTimeoutMs: 2_000, commandTimeoutMs: 60_000 })
    yield* Effect.forkChild(send(link, ["PING"]))
    yield* server.hasRead(bytesOf(["CLIENT", "SETNAME", "sluice-batch"], ["PING"]).length)
    return link
  })

describe("BatchConnection", () => {
  it.effect("concurrent pipelines each get their own replies, in order", () =>
    Effect.gen(function*() {
      const link = yield* connection()
      const key = `sluice-test:batch:${randomUUID()}`
      const results = yield* Effect.forEach(
        Array.from({ length: 40 }, (_, i) => i),
        (i) =>
          send(link, ...Array.from({ length: 5 }, (_, j) => ["XADD", `${key}:${i}`, `0-${j + 1}`, "n", String(j)])),
        { concurrency: "unbounded" }
      )
      for (const settled of results) {
        expect(settled).toStrictEqual({ replies: ["0-1", "0-2", "0-3", "0-4", "0-5"], lost: undefined })
      }
      const refused = yield* send(link, ["XADD", `${key}:0`, "0-5", "n", "again"], ["XLEN", `${key}:0`])
      expect(refused.replies[0]).toBeInstanceOf(ErrorReply)
      expect(refused.replies[1]).toBe(5)
    }))

  it.effect("a pipeline that cannot be encoded is settled with why, and the others keep their own replies", () =>
    Effect.gen(function*() {
      const link = yield* connection()
      const key = `sluice-test:batch:${randomUUID()}`
      const [first, broken, last] = yield* Effect.all([
        send(link, ["XADD", key, "0-1", "n", "1"]),
        // it had written a command of its own before it failed: none of it is sent
        link.send((out) => {
          out.command(["XADD", key, "0-9", "n", "9"])
          throw new RangeError("Invalid string length")
        }, 1),
        send(link, ["XADD", key, "0-2", "n", "2"], ["XLEN", key])
      ], { concurrency: "unbounded" })
      expect(first).toStrictEqual({ replies: ["0-1"], lost: undefined })
      expect(broken).toStrictEqual({ replies: [], lost: "the pipeline could not be encoded: Invalid string length" })
      expect(last).toStrictEqual({ replies: ["0-2", 2], lost: undefined })
    }))

  it.effect("a connection lost mid-pipeline settles it with the replies that arrived, and nothing is resent", () =>
    Effect.gen(function*() {
      const link = yield* connection()
      const key = `sluice-test:batch:${randomUUID()}`
      const [id] = (yield* send(link, ["CLIENT", "ID"])).replies
      expect(typeof id).toBe("number")
      // The pipeline's second command blocks; another connection kills this one then.
      const waiting = yield* Effect.forkChild(send(
        link,
        ["XADD", key, "0-1", "n", "1"],
        ["BLPOP", `${key}:never`, "0"],
        ["XADD", key, "0-2", "n", "2"]
      ))
      const admin = yield* connection()
      yield* send(admin, ["XLEN", key]).pipe(Effect.repeat({ until: ({ replies }) => replies[0] === 1 }))
      yield* send(admin, ["CLIENT", "KILL", "ID", String(id)])
      const cut = yield* Fiber.join(waiting)
      expect(cut.replies).toStrictEqual(["0-1"])
      expect(cut.lost).toBeDefined()
      // The next pipeline opens a new connection and runs alone.
      const after = yield* send(link, ["XADD", key, "0-3", "n", "3"], ["XLEN", key])
      expect(after).toStrictEqual({ replies: ["0-3", 2], lost: undefined })
    }))

  it.effect("a server that cannot be reached fails the send as Unavailable, at once", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      const link = yield* connection(`redis://127.0.0.1:${port}`)
      const error = yield* Effect.flip(send(link, ["PING"]))
      expect(error).toBeInstanceOf(BatchConnection.LinkError)
      expect(error.reason).toBe("Unavailable")
    }))

  it.effect("a URL that is not redis:// or rediss:// is refused", () =>
    Effect.gen(function*() {
      for (const target of ["http://127.0.0.1:6379", "not a url"]) {
        const error = yield* Effect.flip(connection(target))
        expect(error.reason).toBe("Rejected")
        expect(error.detail).toMatch(/not a (redis:\/\/ or rediss:\/\/ )?URL/)
      }
    }))

  it.effect("AUTH and SELECT follow the URL; a wrong password is Rejected", () =>
    Effect.gen(function*() {
      const admin = yield* connection()
      const user = `sluice-test-${randomUUID()}`
      const created = yield* send(admin, ["ACL", "SETUSER", user, "on", ">s3cret", "~*", "+@all"])
      expect(created.replies).toStrictEqual(["OK"])
      const base = new URL(url)
      const withUser = (password: string, db: string) =>
        `redis://${encodeURIComponent(user)}:${password}@${base.host}/${db}`
      const authed = yield* connection(withUser("s3cret", "3"))
      const key = `sluice-test:batch:${randomUUID()}`
      expect((yield* send(authed, ["XADD", key, "0-1", "n", "1"])).replies).toStrictEqual(["0-1"])
      // The entry is in database 3, not in database 0.
      expect((yield* send(admin, ["EXISTS", key], ["SELECT", "3"], ["EXISTS", key], ["DEL", key])).replies)
        .toStrictEqual([0, "OK", 1, 1])
      const wrong = yield* connection(withUser("wrong", "0"))
      const error = yield* Effect.flip(send(wrong, ["PING"]))
      expect(error.reason).toBe("Rejected")
      expect(error.detail).toMatch(/WRONGPASS/)
      yield* send(admin, ["SELECT", "0"], ["ACL", "DELUSER", user])
    }))

  it.live("a pipeline without a reply within commandTimeoutMs is lost, and closes its connection", () =>
    Effect.gen(function*() {
      const server = yield* silentServer
      const link = yield* BatchConnection.make({ url: server.url, connectTimeoutMs: 2_000, commandTimeoutMs: 50 })
      const settled = yield* send(link, ["XADD", "k", "0-1", "n", "1"])
      expect(settled).toStrictEqual({ replies: [], lost: "no reply within 50 ms" })
      yield* send(link, ["PING"])
      expect(server.connections()).toBe(2)
    }).pipe(Effect.scoped))

  it.effect("pipelines waiting for their replies keep no copy of their text", () =>
    Effect.gen(function*() {
      const server = yield* silentServer
      // the link is open and a first pipeline waits, before the heap is counted
      const link = yield* openLink(server)
      const pipelines = 64
      const size = 256 * 1024
      const sent = server.received()
      const before = heapAfterCollection()
      const waiting = yield* Effect.forEach(
        Array.from({ length: pipelines }, (_, i) => i),
        // as a caller does, with the send inside an effect of its own, which holds it
        (i) =>
          Effect.forkChild(
            Effect.map(
              link.send((out) => out.command([String(i % 10).repeat(size)]), 1),
              (settled) => settled.replies
            )
          )
      )
      // every pipeline is on the server's side of the socket, and waits for its reply
      yield* server.hasRead(sent + pipelines * size)
      const kept = heapAfterCollection() - before
      // kept as text, the pipelines would be 16 MB; their fibers and records are a few KB each
      expect(kept).toBeLessThan(pipelines * size / 8)
      for (const fiber of waiting) expect(fiber.pollUnsafe()).toBeUndefined()
    }).pipe(Effect.scoped), 60_000)

  it.effect(
    "while the socket is full, pipelines wait unencoded, and leave in order once it drains",
    () =>
      Effect.gen(function*() {
        const server = yield* silentServer
        const link = yield* openLink(server)
        const sent = server.received()
        const lettersBefore = server.letters().length
        server.reading(false)
        // 26 pipelines of 2 MB: more than the loopback socket's buffers hold
        const pipelines = 26
        const size = 2 * 1024 * 1024
        let encoded = 0
        for (let i = 0; i < pipelines; i++) {
          yield* Effect.forkChild(link.send((out) => {
            encoded++
            out.command([String.fromCharCode(97 + i).repeat(size)])
          }, 1))
        }
        // every send has been made; those past the full socket wait as their encoders
        for (let turn = 0; turn < 10; turn++) {
          yield* Effect.yieldNow
        }
        expect(encoded).toBeGreaterThan(0)
        expect(encoded).toBeLessThan(pipelines)
        server.reading(true)
        yield* server.hasRead(sent + pipelines * size)
        expect(encoded).toBe(pipelines)
        expect(server.letters().slice(lettersBefore)).toBe("abcdefghijklmnopqrstuvwxyz")
      }).pipe(Effect.scoped),
    60_000
  )
})

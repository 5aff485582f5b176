/**
 * The live layer's connection for batch writes: pipelines are written as RESP straight
 * into the bytes the socket sends (`RespWriter`), those of one turn of the event loop
 * leave in one socket write, and the replies come back, in order, to the pipeline
 * that sent them. Nothing here builds an object per
 * command, which is what a general client spends most of its time on.
 *
 * The rules are the command connection's: the connection opens when a pipeline needs
 * it (one attempt at a time, shared by every caller waiting for it), a pipeline is
 * never queued while there is no connection and never resent after one is lost. When
 * a connection closes, every pipeline still waiting gets the replies that did arrive
 * and the reason the rest did not; when pipelines wait and no reply has come for
 * `commandTimeoutMs`, the connection is closed (the replies could no longer be
 * matched), which a watchdog checks a few times per `commandTimeoutMs`.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Net from "node:net"
import * as Tls from "node:tls"
import { reasonOfReply, type RedisErrorReason } from "../RedisError.js"
import { type TlsOptions, toConnectionOptions } from "../RedisTls.js"
import { ErrorReply, type Reply, ReplyReader, RespWriter } from "./resp.js"

/**
 * Where and how to connect.
 *
 * @internal
 */
export interface BatchOptions {
  readonly url: string
  readonly connectTimeoutMs: number
  readonly commandTimeoutMs: number
  /** For `rediss://`: the CA to trust, the name to check, whether to refuse a certificate that fails. */
  readonly tls?: TlsOptions | undefined
}

/**
 * Why a pipeline could not be sent: no connection (`Unavailable`), or the server
 * refused the connection's setup (`Rejected`, a wrong password for example).
 *
 * @internal
 */
export class LinkError {
  constructor(readonly reason: RedisErrorReason, readonly detail: string) {}
}

/**
 * What a pipeline came to: the replies, in order, and when the connection was lost
 * before all of them arrived, why.
 *
 * @internal
 */
export interface Settled {
  readonly replies: ReadonlyArray<Reply>
  readonly lost: string | undefined
}

/**
 * The connection: `send` writes a pipeline of `count` commands, which `encode` writes
 * each time the effect runs. Nothing holds the encoded bytes while Redis answers: an
 * effect that waits for its replies, and every effect it is part of, keeps only the
 * recipe (a retried write encodes again), so a thousand pipelines in flight are not
 * a thousand copies on the heap beside the bytes in the socket.
 *
 * @internal
 */
export interface BatchConnection {
  readonly send: (encode: Encode, count: number) => Effect.Effect<Settled, LinkError>
}

/**
 * Writes a pipeline's commands. One that throws has nothing of it sent.
 *
 * @internal
 */
export type Encode = (out: RespWriter) => void

interface Pending {
  readonly count: number
  readonly replies: Array<Reply>
  settled: Settled | undefined
  resume: ((settled: Settled) => void) | undefined
}

const settle = (pending: Pending, lost: string | undefined): void => {
  const settled: Settled = { replies: pending.replies, lost }
  pending.settled = settled
  const resume = pending.resume
  pending.resume = undefined
  if (resume !== undefined) resume(settled)
}

// The size in bytes from which pipelines are written at once rather than gathered for
// one write at the end of the event loop's turn.
const coalesceBytes = 16 * 1024

// One open socket and the pipelines waiting for its replies, oldest first.
class Link {
  private readonly waiting: Array<Pending | undefined> = []
  private head = 0
  // the bytes of the pipelines not yet written to the socket
  private readonly out = new RespWriter()
  private flushing = false
  // Pipelines not yet encoded because the socket is full, oldest first.
  private held: Array<{ readonly encode: Encode; readonly pending: Pending }> = []
  private full = false
  private readonly reader = new ReplyReader()
  closed: string | undefined = undefined
  /** Replies read so far, for the watchdog to see progress. */
  received = 0

  constructor(private readonly socket: Net.Socket) {
    socket.on("data", (chunk: Buffer) => {
      try {
        this.reader.feed(chunk, this.onReply)
      } catch (error) {
        this.close(`unreadable reply: ${error instanceof Error ? error.message : String(error)}`)
      }
    })
    socket.on("drain", this.onDrain)
    socket.on("error", (error) => this.close(error.message))
    socket.on("close", () => this.close("connection closed"))
  }

  send(encode: Encode, count: number): Pending {
    const pending: Pending = { count, replies: [], settled: undefined, resume: undefined }
    if (this.closed !== undefined) {
      // Closed since the caller got it: nothing is written, nothing can arrive.
      settle(pending, this.closed)
      return pending
    }
    this.waiting.push(pending)
    // While the socket is full (Redis reads slower than pipelines come), a pipeline
    // waits as its encoder, which holds nothing its caller does not hold already, and
    // is encoded when the socket drains: the bytes in flight stay within the socket's
    // buffer, whatever the number of callers.
    if (this.full) this.held.push({ encode, pending })
    else this.encode(encode, pending)
    return pending
  }

  // Encodes a pipeline after those not yet written. One that cannot be encoded (its
  // bytes past what a buffer may hold) is never written, not even in part: it leaves
  // the line of pipelines waiting for replies and is settled with why, rather than
  // thrown where a socket's event runs.
  private encode(encode: Encode, pending: Pending): void {
    const mark = this.out.mark()
    try {
      encode(this.out)
    } catch (error) {
      this.out.undo(mark)
      const at = this.waiting.indexOf(pending, this.head)
      if (at >= 0) this.waiting.splice(at, 1)
      settle(pending, `the pipeline could not be encoded: ${error instanceof Error ? error.message : String(error)}`)
      return
    }
    this.queued()
  }

  // Small pipelines sent in one turn of the event loop leave in one socket write, once
  // the turn has run its I/O callbacks (`setImmediate`): at live pace each turn's chunk
  // arrives in a task of its own, so writing at the end of each task (`nextTick`) made
  // one system call per chunk, the largest single cost of a live chunk. Once a write
  // would reach `coalesceBytes` they leave at once, so large batches are never held
  // back.
  private queued(): void {
    if (this.out.length >= coalesceBytes) this.flush()
    else if (!this.flushing) {
      this.flushing = true
      setImmediate(this.flushLater)
    }
  }

  private readonly flushLater = (): void => {
    this.flushing = false
    this.flush()
  }

  private flush(): void {
    if (this.closed !== undefined || this.out.length === 0) return
    if (!this.socket.write(this.out.take())) this.full = true
  }

  // The socket took what it held: the pipelines held back are encoded, oldest first,
  // until it is full again.
  private readonly onDrain = (): void => {
    this.full = false
    let next = 0
    while (next < this.held.length && !this.full && this.closed === undefined) {
      const { encode, pending } = this.held[next++]!
      this.encode(encode, pending)
    }
    this.held = next === this.held.length ? [] : this.held.slice(next)
  }

  private readonly onReply = (reply: Reply): void => {
    const pending = this.waiting[this.head]
    if (pending === undefined) {
      this.close("a reply to no command")
      return
    }
    this.received++
    pending.replies.push(reply)
    if (pending.replies.length < pending.count) return
    this.waiting[this.head++] = undefined
    if (this.head === this.waiting.length) {
      this.waiting.length = 0
      this.head = 0
    } else if (this.head >= 1024 && this.head * 2 >= this.waiting.length) {
      this.waiting.splice(0, this.head)
      this.head = 0
    }
    settle(pending, undefined)
  }

  /** Whether a pipeline waits for replies. */
  get busy(): boolean {
    return this.head < this.waiting.length
  }

  close(reason: string): void {
    if (this.closed !== undefined) return
    this.closed = reason
    this.socket.destroy()
    this.held = []
    const waiting = this.waiting.slice(this.head)
    this.waiting.length = 0
    this.head = 0
    for (const pending of waiting) if (pending !== undefined) settle(pending, reason)
  }
}

const awaitSettled = (pending: Pending): Effect.Effect<Settled> =>
  Effect.callback<Settled>((resume) => {
    if (pending.settled !== undefined) return resume(Effect.succeed(pending.settled))
    pending.resume = (settled) => resume(Effect.succeed(settled))
    return Effect.sync(() => {
      pending.resume = undefined
    })
  })

interface Address {
  readonly host: string
  readonly port: number
  readonly secure: boolean
  readonly setup: ReadonlyArray<ReadonlyArray<string>>
}

const parseAddress = (url: string): Address | LinkError => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return new LinkError("Rejected", `not a URL: ${url}`)
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    return new LinkError("Rejected", `not a redis:// or rediss:// URL: ${parsed.protocol}`)
  }
  const setup: Array<ReadonlyArray<string>> = []
  const username = decodeURIComponent(parsed.username)
  const password = decodeURIComponent(parsed.password)
  if (password !== "") setup.push(username === "" ? ["AUTH", password] : ["AUTH", username, password])
  const db = parsed.pathname.replace(/^\//, "")
  if (db !== "" && db !== "0") setup.push(["SELECT", db])
  setup.push(["CLIENT", "SETNAME", "sluice-batch"])
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, "$1") || "127.0.0.1",
    port: parsed.port === "" ? 6379 : Number(parsed.port),
    secure: parsed.protocol === "rediss:",
    setup
  }
}

// Opens a socket and runs the connection's setup commands (AUTH, SELECT, a name).
const open = (address: Address, tls: TlsOptions | undefined): Effect.Effect<Link, LinkError> =>
  Effect.callback<Link, LinkError>((resume) => {
    const socket = address.secure
      ? Tls.connect({
        host: address.host,
        port: address.port,
        ...(Net.isIP(address.host) === 0 ? { servername: address.host } : {}),
        ...(tls === undefined ? {} : toConnectionOptions(tls))
      })
      : Net.connect({ host: address.host, port: address.port })
    socket.setNoDelay(true)
    const refused = (error: Error) => {
      socket.destroy()
      resume(Effect.fail(new LinkError("Unavailable", error.message)))
    }
    socket.once("error", refused)
    socket.once(address.secure ? "secureConnect" : "connect", () => {
      socket.off("error", refused)
      const link = new Link(socket)
      const pending = link.send((out) => address.setup.forEach((args) => out.command(args)), address.setup.length)
      pending.resume = ({ lost, replies }) => {
        const refusal = replies.find((reply): reply is ErrorReply => reply instanceof ErrorReply)
        if (lost === undefined && refusal === undefined) return resume(Effect.succeed(link))
        link.close("setup failed")
        resume(Effect.fail(
          refusal === undefined
            ? new LinkError("Unavailable", lost ?? "setup failed")
            : new LinkError(reasonOfReply(refusal.message), refusal.message)
        ))
      }
    })
    return Effect.sync(() => socket.destroy())
  })

/**
 * The connection, closed with the scope. Fails with a `Rejected` `LinkError` when the
 * URL is not a `redis://` or `rediss://` URL.
 *
 * @internal
 */
export const make = (options: BatchOptions): Effect.Effect<BatchConnection, LinkError, Scope.Scope> =>
  Effect.gen(function*() {
    const address = parseAddress(options.url)
    if (address instanceof LinkError) return yield* Effect.fail(address)
    const scope = yield* Effect.scope
    const connectTimeout = Duration.millis(options.connectTimeoutMs)
    const watchEvery = Duration.millis(Math.max(1, Math.floor(options.commandTimeoutMs / 4)))
    let current: Link | undefined
    let opening: Deferred.Deferred<Link, LinkError> | undefined
    yield* Effect.addFinalizer(() => Effect.sync(() => current?.close("connection closed by its owner")))

    const connect = Effect.timeoutOrElse(open(address, options.tls), {
      duration: connectTimeout,
      orElse: () => Effect.fail(new LinkError("Unavailable", `no connection within ${options.connectTimeoutMs} ms`))
    })

    // One watchdog per link instead of a timer per pipeline (a timer per pipeline
    // cost more Node CPU than the pipeline's encoding): it looks a few times per
    // `commandTimeoutMs` and closes the link once replies are awaited and none has
    // come for that long. It ends with the link.
    const watch = (link: Link): Effect.Effect<void> => {
      let seen = link.received
      let since = 0
      let idle = true
      const look = Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sync(() => {
          if (link.closed !== undefined) return false
          if (idle || !link.busy || link.received !== seen) {
            seen = link.received
            since = now
          } else if (now - since >= options.commandTimeoutMs) {
            link.close(`no reply within ${options.commandTimeoutMs} ms`)
            return false
          }
          idle = !link.busy
          return true
        }))
      return Effect.asVoid(Effect.repeat(look, { schedule: Schedule.spaced(watchEvery), while: (open) => open }))
    }

    // The open link, or the one being opened; one attempt at a time, whoever waits.
    const linked: Effect.Effect<Link, LinkError> = Effect.suspend(() => {
      if (current !== undefined && current.closed === undefined) return Effect.succeed(current)
      if (opening !== undefined) return Deferred.await(opening)
      const attempt = Deferred.makeUnsafe<Link, LinkError>()
      opening = attempt
      const run = Effect.exit(connect).pipe(
        Effect.tap((exit) => exit._tag === "Success" ? Effect.forkIn(watch(exit.value), scope) : Effect.void),
        Effect.flatMap((exit) =>
          Effect.suspend(() => {
            opening = undefined
            if (exit._tag === "Success") current = exit.value
            return Deferred.done(attempt, exit)
          })
        )
      )
      return Effect.andThen(Effect.forkIn(run, scope), Deferred.await(attempt))
    })

    const send = (encode: Encode, count: number): Effect.Effect<Settled, LinkError> =>
      Effect.flatMap(linked, (link) => Effect.suspend(() => awaitSettled(link.send(encode, count))))

    return { send }
  })

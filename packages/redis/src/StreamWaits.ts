/**
 * Waits for Redis streams to move past an entry id, shared and multiplexed over a
 * bounded number of blocking connections (docs/http.md#shared-waits). Every waiter of
 * one stream in a process joins that stream's one key in one blocking `XREAD`, and one
 * `XREAD` blocks on many streams at once: the streams waited on are spread over at
 * most `connections` blocking connections (a stream always on the same one), so a
 * process holds at most that many blocking connections to Redis, whatever the number
 * of waiters and of streams. A thousand long-polls of one stream cost one key of one
 * `XREAD`; a thousand of a thousand streams, `connections` `XREAD`s of many keys each.
 *
 * Each connection runs one loop: `XREAD BLOCK` on the keys its waiters wait on, each
 * from the last id it saw there (the first waiter's id for a new key), at most
 * `blockMs` at a time. A reply wakes the waiters of each key that moved (`changed`)
 * and the loop blocks again. A waiter of a key the running `XREAD` does not cover yet
 * restarts it (`CLIENT UNBLOCK` on the command connection; should that be refused, the
 * block's end restarts it), so it is covered at once. A waiter may also ask to be woken
 * once Redis has blocked for `dueMs` on its own clock (`due`): a caller that must look
 * again at a time Redis keeps, such as a stream's expiry, learns of it without a timer
 * of its own there. A waiter's own timeout is on Effect's `Clock` (`timeout`).
 *
 * A connection that fails, or whose `XREAD` gets no reply within its block and the
 * command bound (`commandTimeoutMs`, 5 s by default: a frozen Redis), fails its
 * waiters with an `Unavailable` `RedisError` naming `XREAD`, and is closed (it may
 * still be blocked); the next waiter opens another.
 *
 * @since 0.3.0
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import type { Redis } from "ioredis"
import * as EntryId from "./EntryId.js"
import { decodeReply, fromCause, RedisError } from "./RedisError.js"
import type { LiveOptions } from "./RedisStreamsLive.js"
import { openClient } from "./RedisStreamsLive.js"

/**
 * How the waits run: at most `connections` blocking connections (8 by default), each
 * `XREAD` blocking at most `blockMs` (1,000 ms by default) before the loop blocks again.
 *
 * @since 0.3.0
 * @category models
 */
export interface StreamWaitsOptions {
  readonly connections: number
  readonly blockMs: number
}

/**
 * The defaults: 8 blocking connections, blocks of at most 1 s.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaults: StreamWaitsOptions = { connections: 8, blockMs: 1_000 }

/**
 * How a wait ended: the stream moved past the id (`changed`), Redis blocked for the
 * waiter's `dueMs` (`due`), or the waiter's own timeout passed (`timeout`).
 *
 * @since 0.3.0
 * @category models
 */
export type Woken = "changed" | "due" | "timeout"

/**
 * A wait: for the stream `key` to hold an entry after the id `after`, at most
 * `timeoutMs` (on Effect's `Clock`); with `dueMs`, ended as `due` once Redis has blocked
 * that long without the stream moving.
 *
 * @since 0.3.0
 * @category models
 */
export interface Wait {
  readonly key: string
  readonly after: string
  readonly timeoutMs: number
  readonly dueMs?: number | undefined
}

/**
 * The shared waits.
 *
 * @since 0.3.0
 * @category models
 */
export interface StreamWaitsService {
  /** Waits as `wait` says; fails `Unavailable` when its blocking connection fails or Redis does not answer. */
  readonly await: (wait: Wait) => Effect.Effect<Woken, RedisError>
  /** How many blocking connections are open now. */
  readonly connections: Effect.Effect<number>
  /** How many streams are waited on now. */
  readonly streams: Effect.Effect<number>
}

/**
 * The shared waits of a process.
 *
 * @since 0.3.0
 * @category services
 */
export class StreamWaits extends Context.Service<StreamWaits, StreamWaitsService>()("@sluice/redis/StreamWaits") {}

interface Waiter {
  readonly after: string
  readonly done: Deferred.Deferred<Woken, RedisError>
  /** When it is due, on the `Clock` (an estimate: Redis's block decides). */
  readonly dueAt: number | undefined
}

// One key waited on: the last id seen there, and its waiters.
interface Watched {
  from: string
  readonly waiters: Set<Waiter>
}

// The `XREAD` in flight: the keys it covers, when its block ends (on the `Clock`), the
// blocked connection's id, and whether it was asked to stop.
interface Flight {
  readonly keys: ReadonlySet<string>
  readonly endsAt: number
  readonly clientId: Promise<unknown>
  unblocking: boolean
}

// A blocking connection, and its id on the server (asked again when it reconnects).
interface Open {
  readonly client: Redis
  readonly scope: Scope.Closeable
  id: Promise<unknown>
}

// One blocking connection and the keys it waits on.
interface Line {
  readonly keys: Map<string, Watched>
  redis: Open | undefined
  flight: Flight | undefined
  idle: Deferred.Deferred<void> | undefined
  started: boolean
}

const XReadReply = Schema.NullOr(
  Schema.Array(Schema.Tuple([Schema.String, Schema.Array(Schema.Tuple([Schema.String, Schema.Array(Schema.String)]))]))
)
const asXRead = decodeReply(XReadReply)
const asNumber = decodeReply(Schema.Number)

const isAfter = (a: string, b: string): boolean =>
  EntryId.order(
    Option.getOrElse(EntryId.parse(a), () => EntryId.zero),
    Option.getOrElse(EntryId.parse(b), () => EntryId.zero)
  ) > 0

// FNV-1a: the line of a key, the same for the life of the process.
const lineOf = (key: string, lines: number): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193)
  return (hash >>> 0) % lines
}

const unavailable = (key: string, detail: string) =>
  new RedisError({ reason: "Unavailable", command: "XREAD", key, detail })

/**
 * The shared waits on the Redis of `live`, in the scope: connections are opened as the
 * first waiters come (at most `connections`) and closed with the scope. `commands` is
 * the connection that restarts a blocked `XREAD` (`CLIENT UNBLOCK`; one of its own,
 * opened on first use, when none is given).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (
  live: LiveOptions,
  options: Partial<StreamWaitsOptions> = {},
  commands?: Redis
): Effect.Effect<StreamWaitsService, never, Scope.Scope> =>
  Effect.gen(function*() {
    const settings = { ...defaults, ...options }
    const count = Math.max(1, Math.floor(settings.connections))
    const blockMs = Math.max(1, Math.floor(settings.blockMs))
    const bound = live.commandTimeoutMs ?? 5_000
    const scope = yield* Effect.scope
    const lines: ReadonlyArray<Line> = Array.from({ length: count }, () => ({
      keys: new Map(),
      redis: undefined,
      flight: undefined,
      idle: undefined,
      started: false
    }))
    let unblocker: Redis | undefined = commands
    const opening = yield* Semaphore.make(1)
    const unblockClient: Effect.Effect<Redis, RedisError> = opening.withPermit(Effect.suspend(() =>
      unblocker !== undefined
        ? Effect.succeed(unblocker)
        : Effect.tap(Scope.provide(openClient(live, "commands"), scope), (client) =>
          Effect.sync(() => {
            unblocker = client
          }))
    ))

    // Ends every waiter of the line with `error` (its own key named), and forgets its keys.
    const failAll = (line: Line, error: (key: string) => RedisError) =>
      Effect.sync(() => {
        for (const [key, watched] of line.keys) {
          for (const waiter of watched.waiters) {
            Deferred.doneUnsafe(waiter.done, Exit.fail(error(key)))
          }
        }
        line.keys.clear()
      })

    const clientId = (client: Redis): Promise<unknown> => {
      const id = client.call("CLIENT", "ID")
      id.catch(() =>
        undefined
      )
      return id
    }

    const connection = (line: Line): Effect.Effect<Open, RedisError> =>
      Effect.suspend(() => {
        if (line.redis !== undefined) return Effect.succeed(line.redis)
        return Effect.flatMap(Scope.fork(scope, "sequential"), (own) =>
          Scope.provide(openClient(live, "tail"), own).pipe(
            Effect.map((client) => {
              const open: Open = { client, scope: own, id: clientId(client) }
              // a connection that comes back is another client on the server
              client.on("ready", () => void (open.id = clientId(client)))
              line.redis = open
              return open
            }),
            Effect.onError(() => Scope.close(own, Exit.void))
          ))
      })

    const drop = (line: Line) =>
      Effect.suspend(() => {
        const open = line.redis
        line.redis = undefined
        return open === undefined ? Effect.void : Scope.close(open.scope, Exit.void)
      })

    // One `XREAD` over the line's keys, and the wakes of its reply.
    const cycle = (line: Line) =>
      Effect.gen(function*() {
        for (const [key, watched] of line.keys) if (watched.waiters.size === 0) line.keys.delete(key)
        if (line.keys.size === 0) {
          const idle = yield* Deferred.make<void>()
          line.idle = idle
          yield* Deferred.await(idle)
          return
        }
        const open = yield* Effect.catch(
          connection(line),
          (error) => Effect.as(failAll(line, () => error), undefined)
        )
        if (open === undefined) return
        const client = open.client
        const now = yield* Clock.currentTimeMillis
        let block = blockMs
        for (const watched of line.keys.values()) {
          for (const waiter of watched.waiters) {
            if (waiter.dueAt !== undefined) block = Math.min(block, Math.max(1, waiter.dueAt - now))
          }
        }
        const keys = [...line.keys.keys()]
        const froms = keys.map((key) => line.keys.get(key)!.from)
        const flight: Flight = { keys: new Set(keys), endsAt: now + block, clientId: open.id, unblocking: false }
        line.flight = flight
        const read = Effect.tryPromise({
          try: () => client.call("XREAD", "BLOCK", block, "STREAMS", ...keys, ...froms),
          catch: (cause) => fromCause("XREAD", keys[0], cause)
        }).pipe(
          Effect.flatMap(asXRead("XREAD", keys[0]!)),
          Effect.timeoutOrElse({
            duration: block + bound,
            orElse: () =>
              Effect.fail(unavailable(keys[0]!, `no reply within ${bound} ms after its block of ${block} ms`))
          })
        )
        const reply = yield* Effect.exit(read)
        line.flight = undefined
        if (Exit.isFailure(reply)) {
          yield* failAll(line, (key) =>
            Exit.findErrorOption(reply).pipe(
              Option.map((error) => error.reason === "Unavailable" ? unavailable(key, error.detail ?? "") : error),
              Option.getOrElse(() => unavailable(key, "the blocking read failed"))
            ))
          yield* drop(line)
          return
        }
        for (const [key, entries] of reply.value ?? []) {
          const watched = line.keys.get(key)
          const last = entries[entries.length - 1]
          if (watched === undefined || last === undefined) continue
          watched.from = last[0]
          for (const waiter of watched.waiters) {
            if (isAfter(last[0], waiter.after)) {
              watched.waiters.delete(waiter)
              Deferred.doneUnsafe(waiter.done, Exit.succeed("changed"))
            }
          }
        }
        // a block that ran its course is due for the waiters it was bounded by
        const after = yield* Clock.currentTimeMillis
        const ranOut = reply.value === null && !flight.unblocking
        for (const watched of line.keys.values()) {
          for (const waiter of watched.waiters) {
            if (waiter.dueAt === undefined) continue
            if (waiter.dueAt <= after || (ranOut && waiter.dueAt - now <= block)) {
              watched.waiters.delete(waiter)
              Deferred.doneUnsafe(waiter.done, Exit.succeed("due"))
            }
          }
        }
      })

    // A cycle that dies (a defect) fails its waiters rather than leave them waiting.
    const guarded = (line: Line) =>
      cycle(line).pipe(
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            : Effect.andThen(
              failAll(line, (key) => unavailable(key, `the blocking read failed: ${Cause.pretty(cause)}`)),
              drop(line)
            )
        )
      )

    const start = (line: Line) =>
      Effect.suspend(() => {
        if (line.started) return Effect.void
        line.started = true
        return Effect.asVoid(Effect.forkIn(Effect.forever(guarded(line)), scope))
      })

    // Stops the line's `XREAD` so that its next covers a new key (or an earlier due):
    // `CLIENT UNBLOCK` once the `XREAD` is blocked on the server (an unblock that comes
    // first finds nothing to stop, and is sent again).
    const restart = (line: Line, flight: Flight) =>
      Effect.gen(function*() {
        if (flight.unblocking) return
        flight.unblocking = true
        const client = yield* unblockClient
        const id = yield* Effect.tryPromise({
          try: () => flight.clientId,
          catch: (cause) => fromCause("CLIENT", undefined, cause)
        })
        for (let attempt = 0; attempt < 50 && line.flight === flight; attempt++) {
          const stopped = yield* Effect.flatMap(
            Effect.tryPromise({
              try: () => client.call("CLIENT", "UNBLOCK", String(id)),
              catch: (cause) => fromCause("CLIENT", undefined, cause)
            }),
            asNumber("CLIENT", "UNBLOCK")
          )
          if (stopped === 1) return
          yield* Effect.yieldNow
        }
      }).pipe(
        // refused (an ACL, say) or failed: the block's end restarts it
        Effect.catch(() => Effect.void)
      )

    const register = (wait: Wait) =>
      Effect.gen(function*() {
        const line = lines[lineOf(wait.key, count)]!
        const watched = line.keys.get(wait.key)
        if (watched !== undefined && isAfter(watched.from, wait.after)) return undefined
        const now = yield* Clock.currentTimeMillis
        const waiter: Waiter = {
          after: wait.after,
          done: yield* Deferred.make<Woken, RedisError>(),
          dueAt: wait.dueMs === undefined ? undefined : now + Math.max(0, wait.dueMs)
        }
        if (watched === undefined) line.keys.set(wait.key, { from: wait.after, waiters: new Set([waiter]) })
        else watched.waiters.add(waiter)
        yield* start(line)
        const idle = line.idle
        if (idle !== undefined) {
          line.idle = undefined
          Deferred.doneUnsafe(idle, Exit.void)
        }
        const flight = line.flight
        if (
          flight !== undefined &&
          (!flight.keys.has(wait.key) || (waiter.dueAt !== undefined && waiter.dueAt < flight.endsAt))
        ) {
          yield* Effect.forkIn(restart(line, flight), scope)
        }
        return { line, waiter }
      })

    // registered and forgotten uninterruptibly: a waiter never stays behind its fiber
    const await_ = (wait: Wait): Effect.Effect<Woken, RedisError> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(register(wait), (registered) => {
          if (registered === undefined) return Effect.succeed<Woken>("changed")
          const { line, waiter } = registered
          return restore(
            Deferred.await(waiter.done).pipe(
              Effect.timeoutOrElse({
                duration: Math.max(0, wait.timeoutMs),
                orElse: () => Effect.succeed<Woken>("timeout")
              })
            )
          ).pipe(Effect.ensuring(Effect.sync(() => void line.keys.get(wait.key)?.waiters.delete(waiter))))
        })
      )

    return StreamWaits.of({
      await: await_,
      connections: Effect.sync(() => lines.filter((line) => line.redis !== undefined).length),
      streams: Effect.sync(() => lines.reduce((sum, line) => sum + line.keys.size, 0))
    })
  })

/**
 * The shared waits as a layer, on the Redis of `live`.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (
  live: LiveOptions,
  options: Partial<StreamWaitsOptions> = {}
): Layer.Layer<StreamWaits> => Layer.effect(StreamWaits, make(live, options))

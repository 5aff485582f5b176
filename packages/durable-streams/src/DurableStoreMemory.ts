/**
 * `DurableStore` in process memory, with the semantics of the live layer: versioned
 * conditional commits, entry ids `0-1`, `0-2`, ..., forks linked to their sources (a
 * source over is kept, gone, while forks read it), expiry on Effect's `Clock` (so
 * `TestClock` drives it) and waits woken by every change and by the stream's expiry
 * (a wait ends at the stream's deadline on that `Clock`). For unit tests and the
 * command line's embedded default; nothing survives the process.
 *
 * @since 0.3.0
 */
import * as EntryId from "@sluice/redis/EntryId"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type {
  Commit,
  DurableEntry,
  DurableState,
  DurableStoreService,
  Expiry,
  ForkCommit,
  ForkOutcome,
  ForkPoint,
  RemoveOutcome
} from "./DurableStore.js"
import { DurableStore } from "./DurableStore.js"
import { defaultMaxForkDepth, isAfter, readThrough, startOf } from "./internal/storeFork.js"

interface Stored {
  meta: Record<string, string>
  version: number
  /** The entry number the stream's own entries count on from (a fork's fork point). */
  start: number
  entries: Array<DurableEntry>
  expiresAt: number | undefined
  deleted: boolean
  fork: (ForkPoint & { readonly link: string }) | undefined
  /** Its level in its chain of forks (0: no fork). */
  depth: number
  /** The forks that read this stream: link field to the time it was linked. */
  forks: Map<string, number>
}

const expiresAt = (expiry: Expiry, now: number): number | undefined =>
  expiry._tag === "Persist" ? undefined : expiry._tag === "After" ? now + expiry.ms : expiry.epochMs

// The entry number of an id (every id of this store is `0-<n>`; any later id is past them all).
const positionOf = (id: string): number =>
  Option.match(EntryId.parse(id), {
    onNone: () => 0,
    onSome: (parsed) => parsed.ms > 0n ? Number.MAX_SAFE_INTEGER : Number(parsed.seq)
  })

const over = (stored: Stored, now: number): boolean =>
  stored.deleted || (stored.expiresAt !== undefined && stored.expiresAt <= now)

const fresh = (): Stored => ({
  meta: {},
  version: 0,
  start: 0,
  entries: [],
  expiresAt: undefined,
  deleted: false,
  fork: undefined,
  depth: 0,
  forks: new Map()
})

/**
 * The options of the in-memory store: how deep a chain of forks may go (100 by
 * default; docs/http.md#fork-depth).
 *
 * @since 0.3.0
 * @category models
 */
export interface MemoryOptions {
  readonly maxForkDepth?: number | undefined
}

/**
 * A fresh, empty in-memory store with the given options.
 *
 * @since 0.3.0
 * @category constructors
 */
export const makeWith = (options: MemoryOptions): Effect.Effect<DurableStoreService> =>
  Effect.sync(() => build(options.maxForkDepth ?? defaultMaxForkDepth))

const build = (maxForkDepth: number): DurableStoreService => {
  const streams = new Map<string, Stored>()
  const signals = new Map<string, Deferred.Deferred<void>>()
  let links = 0

  const wake = (name: string): void => {
    const signal = signals.get(name)
    if (signal !== undefined) {
      signals.delete(name)
      Deferred.doneUnsafe(signal, Effect.void)
    }
  }

  // Drops a stream, unlinks it from its source, and drops the source in turn when it
  // is over with no fork left.
  const drop = (name: string, now: number): void => {
    const stored = streams.get(name)
    streams.delete(name)
    wake(name)
    const fork = stored?.fork
    if (fork === undefined) return
    const source = streams.get(fork.source)
    if (source === undefined) return
    source.forks.delete(`${name} ${fork.link}`)
    if (source.forks.size === 0 && over(source, now)) drop(fork.source, now)
  }

  // Drops the links to forks that no longer exist.
  const prune = (stored: Stored, now: number): void => {
    for (const field of [...stored.forks.keys()]) {
      const space = field.lastIndexOf(" ")
      const fork = live(field.slice(0, space), now)
      if (fork?.fork?.link !== field.slice(space + 1)) stored.forks.delete(field)
    }
  }

  // The stream as it stands: a stream over is dropped unless forks still read it (then
  // it is kept, gone); links to forks that no longer exist are dropped first.
  const live = (name: string, now: number): Stored | undefined => {
    const stored = streams.get(name)
    if (stored === undefined || !over(stored, now)) return stored
    prune(stored, now)
    if (stored.forks.size > 0) return stored
    drop(name, now)
    return undefined
  }

  const stateOf = (stored: Stored, now: number): DurableState => ({
    meta: { ...stored.meta },
    version: stored.version,
    tail: stored.entries.length === 0 ? `0-${stored.start}` : stored.entries[stored.entries.length - 1]!.id,
    signal: String(stored.version),
    forkOf: stored.fork === undefined ? Option.none() : Option.some({ source: stored.fork.source, at: stored.fork.at }),
    forks: stored.forks.size,
    gone: over(stored, now)
  })

  const withNow = <A>(f: (now: number) => A): Effect.Effect<A> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => f(now)))

  const apply = (name: string, stored: Stored, change: Omit<Commit, "expect">, now: number): Array<string> => {
    Object.assign(stored.meta, change.set)
    const ids = change.append.map((data) => {
      const id = `0-${stored.start + stored.entries.length + 1}`
      stored.entries.push({ id, data: Uint8Array.from(data) })
      return id
    })
    stored.version += 1
    stored.expiresAt = expiresAt(change.expiry, now)
    streams.set(name, stored)
    wake(name)
    return ids
  }

  const commit = (name: string, change: Commit, now: number): Option.Option<ReadonlyArray<string>> => {
    const existing = live(name, now)
    if ((existing?.version ?? 0) !== change.expect) return Option.none()
    return Option.some(apply(name, existing ?? fresh(), change, now))
  }

  const fork = (name: string, request: ForkCommit, now: number): ForkOutcome => {
    const source = live(request.source, now)
    if (source === undefined) return { _tag: "SourceMissing" }
    if (over(source, now)) return { _tag: "SourceGone" }
    if (source.depth + 1 > maxForkDepth) return { _tag: "TooDeep", depth: source.depth, limit: maxForkDepth }
    const tail = stateOf(source, now).tail
    if (isAfter(request.at, tail)) return { _tag: "BeyondTail", tail }
    if (live(name, now) !== undefined) return { _tag: "Exists" }
    links += 1
    const link = String(links)
    source.forks.set(`${name} ${link}`, now)
    const stored: Stored = {
      ...fresh(),
      start: startOf(request.at),
      fork: { source: request.source, at: request.at, link },
      depth: source.depth + 1
    }
    return { _tag: "Forked", ids: apply(name, stored, request, now) }
  }

  const read = readThrough<never>((name, after, count) =>
    Effect.sync(() => {
      const stored = streams.get(name)
      const forked = stored?.fork
      // Own entries are numbered on from `start` without gaps: the index follows from the id.
      const from = stored === undefined ? 0 : Math.max(0, positionOf(after) - stored.start)
      // a read from before the fork point starts in the source: its own entries come later
      const before = forked !== undefined && isAfter(forked.at, after)
      return {
        forkOf: forked === undefined ? Option.none() : Option.some({ source: forked.source, at: forked.at }),
        entries: stored === undefined || before ? [] : stored.entries.slice(from, from + Math.max(0, count))
      }
    })
  )

  const remove = (name: string, now: number): RemoveOutcome => {
    const stored = live(name, now)
    if (stored === undefined) return "Missing"
    if (over(stored, now)) return "Gone"
    prune(stored, now)
    if (stored.forks.size > 0) {
      stored.deleted = true
      stored.version += 1
      wake(name)
      return "SoftDeleted"
    }
    drop(name, now)
    return "Removed"
  }

  const service: DurableStoreService = {
    load: (name) =>
      withNow((now) => Option.map(Option.fromUndefinedOr(live(name, now)), (stored) => stateOf(stored, now))),
    commit: (name, change) => withNow((now) => commit(name, change, now)),
    fork: (name, request) => withNow((now) => fork(name, request, now)),
    read: (name, after, count) =>
      Effect.flatMap(
        withNow((now) => live(name, now)),
        (stored) => stored === undefined ? Effect.succeed([]) : read(name, after, count)
      ),
    touch: (name, expiry) =>
      withNow((now) => {
        const stored = live(name, now)
        if (stored !== undefined) stored.expiresAt = expiresAt(expiry, now)
      }),
    remove: (name) => withNow((now) => remove(name, now)),
    awaitChange: (name, signal, timeoutMs) =>
      Effect.flatMap(
        withNow((now) => {
          const stored = live(name, now)
          if (stored === undefined || over(stored, now) || String(stored.version) !== signal) return undefined
          let waiting = signals.get(name)
          if (waiting === undefined) {
            waiting = Deferred.makeUnsafe<void>()
            signals.set(name, waiting)
          }
          // the deadline comes first: the wait ends there, and the stream is then over
          const left = stored.expiresAt === undefined ? Infinity : stored.expiresAt - now
          const expires = left <= timeoutMs
          return { waiting, duration: Math.max(0, expires ? left : timeoutMs), expires }
        }),
        (wait) =>
          wait === undefined
            ? Effect.succeed(true)
            : Deferred.await(wait.waiting).pipe(
              Effect.as(true),
              Effect.timeoutOrElse({
                duration: wait.duration,
                orElse: () => Effect.succeed(wait.expires)
              })
            )
      )
  }
  return service
}

/**
 * A fresh, empty in-memory store.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make: Effect.Effect<DurableStoreService> = makeWith({})

/**
 * A layer with a fresh in-memory store.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer: Layer.Layer<DurableStore> = Layer.effect(DurableStore, make)

/**
 * A layer with a fresh in-memory store with the given options.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerWith = (options: MemoryOptions): Layer.Layer<DurableStore> =>
  Layer.effect(DurableStore, makeWith(options))

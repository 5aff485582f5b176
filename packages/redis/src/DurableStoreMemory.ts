/**
 * `DurableStore` in process memory, with the semantics of the live layer: versioned
 * conditional commits, entry ids `0-1`, `0-2`, ..., expiry on Effect's `Clock` (so
 * `TestClock` drives it) and waits woken by every change. For unit tests and the
 * command line's embedded default; nothing survives the process.
 *
 * @since 0.3.0
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { Commit, DurableEntry, DurableState, DurableStoreService, Expiry } from "./DurableStore.js"
import { DurableStore } from "./DurableStore.js"

interface Stored {
  meta: Record<string, string>
  version: number
  entries: Array<DurableEntry>
  expiresAt: number | undefined
}

const expiresAt = (expiry: Expiry, now: number): number | undefined =>
  expiry._tag === "Persist" ? undefined : expiry._tag === "After" ? now + expiry.ms : expiry.epochMs

const entryNumber = (id: string): number => Number(id.slice(id.indexOf("-") + 1))

/**
 * A fresh, empty in-memory store.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make: Effect.Effect<DurableStoreService> = Effect.sync(() => {
  const streams = new Map<string, Stored>()
  const signals = new Map<string, Deferred.Deferred<void>>()

  const live = (name: string, now: number): Stored | undefined => {
    const stored = streams.get(name)
    if (stored !== undefined && stored.expiresAt !== undefined && stored.expiresAt <= now) {
      streams.delete(name)
      return undefined
    }
    return stored
  }

  const wake = (name: string): void => {
    const signal = signals.get(name)
    if (signal !== undefined) {
      signals.delete(name)
      Deferred.unsafeDone(signal, Effect.void)
    }
  }

  const stateOf = (stored: Stored): DurableState => ({
    meta: { ...stored.meta },
    version: stored.version,
    tail: stored.entries.length === 0 ? "0-0" : stored.entries[stored.entries.length - 1]!.id,
    signal: String(stored.version)
  })

  const withNow = <A>(f: (now: number) => A): Effect.Effect<A> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => f(now)))

  const commit = (name: string, change: Commit, now: number): Option.Option<ReadonlyArray<string>> => {
    const existing = live(name, now)
    if ((existing?.version ?? 0) !== change.expect) return Option.none()
    const stored: Stored = existing ?? { meta: {}, version: 0, entries: [], expiresAt: undefined }
    Object.assign(stored.meta, change.set)
    const ids = change.append.map((data) => {
      const id = `0-${stored.entries.length + 1}`
      stored.entries.push({ id, data: Uint8Array.from(data) })
      return id
    })
    stored.version += 1
    stored.expiresAt = expiresAt(change.expiry, now)
    streams.set(name, stored)
    wake(name)
    return Option.some(ids)
  }

  const service: DurableStoreService = {
    load: (name) => withNow((now) => Option.map(Option.fromNullable(live(name, now)), stateOf)),
    commit: (name, change) => withNow((now) => commit(name, change, now)),
    read: (name, after, count) =>
      withNow((now) => {
        const stored = live(name, now)
        if (stored === undefined) return []
        const from = entryNumber(after)
        return stored.entries.slice(from, from + Math.max(0, count))
      }),
    touch: (name, expiry) =>
      withNow((now) => {
        const stored = live(name, now)
        if (stored !== undefined) stored.expiresAt = expiresAt(expiry, now)
      }),
    remove: (name) =>
      withNow((now) => {
        const existed = live(name, now) !== undefined
        streams.delete(name)
        wake(name)
        return existed
      }),
    awaitChange: (name, signal, timeoutMs) =>
      Effect.flatMap(
        withNow((now) => {
          const stored = live(name, now)
          if (stored === undefined || String(stored.version) !== signal) return undefined
          let waiting = signals.get(name)
          if (waiting === undefined) {
            waiting = Deferred.unsafeMake<void>(FiberId.none)
            signals.set(name, waiting)
          }
          return waiting
        }),
        (waiting) =>
          waiting === undefined
            ? Effect.succeed(true)
            : Deferred.await(waiting).pipe(
              Effect.as(true),
              Effect.timeoutTo({
                duration: Math.max(0, timeoutMs),
                onTimeout: () => false,
                onSuccess: (changed) => changed
              })
            )
      )
  }
  return service
})

/**
 * A layer with a fresh in-memory store.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer: Layer.Layer<DurableStore> = Layer.effect(DurableStore, make)

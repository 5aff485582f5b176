/**
 * What a durable stream read needs from where the stream lives: a view of its state,
 * its entries after an id, and a wait for its next change. A stream that clients
 * write lives in the `DurableStore` (`storeSource`); an application serves streams of
 * its own, read-only, under a reserved prefix through `DurableStreams.ReadOnlyStreams`
 * (the server's turn streams are such).
 *
 * @since 0.3.0
 */
import type { RedisError } from "@sluice/redis"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as DurableStore from "./DurableStore.js"

/**
 * A stream's state as read: its content type, last entry id, whether it is closed,
 * its settings, and the signal to wait from.
 *
 * @since 0.3.0
 * @category models
 */
export interface View {
  readonly contentType: string
  readonly tail: string
  readonly closed: boolean
  readonly meta: Readonly<Record<string, string>>
  readonly signal: string
  /** Deleted or expired, kept only for the forks that read it. */
  readonly gone: boolean
}

/**
 * Where a stream's reads go: its view (none: no such stream), its entries after an
 * id (each entry's `data` as the bytes sent), a wait for its next change, and the
 * renewal of a sliding TTL after a read.
 *
 * @since 0.3.0
 * @category models
 */
export interface Source {
  readonly load: Effect.Effect<Option.Option<View>, RedisError.RedisError>
  readonly read: (
    after: string,
    count: number
  ) => Effect.Effect<ReadonlyArray<DurableStore.DurableEntry>, RedisError.RedisError>
  /** Waits for a change after `view`, at most `timeoutMs`. */
  readonly awaitChange: (view: View, timeoutMs: number) => Effect.Effect<void, RedisError.RedisError>
  /** Renews a sliding TTL after a read. */
  readonly touched: (view: View) => Effect.Effect<void, RedisError.RedisError>
}

/**
 * The expiry a stream's settings ask for: a sliding TTL (`ttl`, seconds), a fixed
 * time (`exp`), or none.
 *
 * @since 0.3.0
 * @category accessors
 */
export const expiryOf = (meta: Readonly<Record<string, string>>): DurableStore.Expiry =>
  meta.ttl !== undefined
    ? { _tag: "After", ms: Number(meta.ttl) * 1000 }
    : meta.exp !== undefined
    ? { _tag: "At", epochMs: Date.parse(meta.exp) }
    : { _tag: "Persist" }

/**
 * A stream that clients write, in the store (a fork reads through its source).
 *
 * @since 0.3.0
 * @category constructors
 */
export const storeSource = (store: DurableStore.DurableStoreService, name: string): Source => ({
  load: Effect.map(
    store.load(name),
    Option.map((state) => ({
      contentType: state.meta.ct ?? "application/octet-stream",
      tail: state.tail,
      closed: state.meta.closed === "1",
      meta: state.meta,
      signal: state.signal,
      gone: state.gone
    }))
  ),
  read: (after, count) => store.read(name, after, count),
  awaitChange: (view, timeoutMs) => Effect.asVoid(store.awaitChange(name, view.signal, timeoutMs)),
  touched: (view) => view.meta.ttl === undefined ? Effect.void : store.touch(name, expiryOf(view.meta))
})

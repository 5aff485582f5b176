/**
 * What a durable stream read needs from where the stream lives: a view of its state,
 * its entries after an id, and a wait for its next change. Two sources: a stream that
 * clients write (`DurableStore`), and a stream of a Sluice turn (Stream A or B in
 * `RedisStreams`, read-only, closed once the turn has ended).
 *
 * @internal
 */
import { type DurableStore, RedisStreams, StreamEntry } from "@sluice/redis"
import type { RedisError } from "@sluice/redis"
import { TurnEnding, TurnKeys } from "@sluice/turns"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as SharedTail from "../SharedTail.js"
import * as TurnFeed from "../TurnFeed.js"

/**
 * A stream's state as read: its content type, last entry id, whether it is closed,
 * its settings, and the signal to wait from.
 *
 * @internal
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

/** @internal */
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
 * @internal
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
 * @internal
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

const encoder = new TextEncoder()

/**
 * A turn entry as a JSON value: its fields, with the payload parsed.
 *
 * @internal
 */
export const turnValue = (entry: StreamEntry.StreamEntry): unknown => {
  const value = (name: string) => Option.getOrUndefined(StreamEntry.field(entry, name))
  const payload = value("payload")
  let parsed: unknown = payload
  try {
    parsed = payload === undefined ? null : JSON.parse(payload)
  } catch {
    // An entry the publisher did not write keeps its payload as text.
  }
  return {
    eventId: value("eventId"),
    timestamp: Number(value("timestamp")),
    turnId: value("turnId"),
    payloadType: value("payloadType"),
    payload: parsed
  }
}

/**
 * Stream A or B of a turn, read-only: JSON, one value per entry, closed once it holds
 * the turn's last entry (`TurnEnding.isLast`: `response_done`, `turn_completed`; not
 * the error entry before it). A wait that finds nothing checks the producer's lease (a
 * turn whose producer died is ended with `producer_lost`, as on the SSE routes).
 *
 * @internal
 */
export const turnSource = (
  redis: RedisStreams.RedisStreamsService,
  prefix: string,
  turnId: string,
  stream: TurnKeys.TurnStream,
  tails?: SharedTail.SharedTailService
): Source => {
  const key = TurnKeys.streamKey(prefix, turnId, stream)
  return {
    load: Effect.map(
      redis.xlast(key),
      Option.map((last) => ({
        contentType: "application/json",
        tail: last.id,
        closed: TurnEnding.isLast(last),
        meta: {},
        signal: last.id,
        gone: false
      }))
    ),
    read: (after, count) =>
      Effect.map(
        redis.xrange(key, `(${after}`, "+", count),
        (entries) =>
          entries.map((entry) => ({ id: entry.id, data: encoder.encode(`${JSON.stringify(turnValue(entry))},`) }))
      ),
    awaitChange: (view, timeoutMs) =>
      (tails === undefined ? redis.tail(key, { after: view.tail }) : tails.follow(key, view.tail)).pipe(
        Stream.take(1),
        Stream.runDrain,
        Effect.as(true),
        Effect.timeoutOrElse({ duration: timeoutMs, orElse: () => Effect.succeed(false) }),
        Effect.flatMap((changed) =>
          changed
            ? Effect.void
            : Effect.asVoid(
              Effect.provideService(TurnFeed.endIfProducerLost(prefix, turnId), RedisStreams.RedisStreams, redis)
            )
        )
      ),
    touched: () => Effect.void
  }
}

/**
 * The Durable Streams protocol's operations over a `DurableStore` (or any `Source`):
 * create a stream, fork one, append (and close), read (catch-up and long-poll), look
 * at its head, delete. Each takes the store and a parsed request and returns a typed
 * outcome, or fails with the one `DurableRefusal` (or the store's `RedisError`); the
 * HTTP routes (`DurableStreams.routes`) parse requests from headers and render the
 * outcomes, and the subscription engine calls the operations directly (a wake event is
 * an append).
 *
 * Each write decides over the stream's state as loaded and commits conditionally on
 * its version, again from a fresh load when another writer committed in between, so
 * the protocol's rules hold under concurrent writers.
 *
 * @since 0.3.0
 */
import type { RedisError } from "@sluice/redis"
import type * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as DurableRefusal from "./DurableRefusal.js"
import type { Source, View } from "./DurableSource.js"
import type * as DurableStore from "./DurableStore.js"
import * as Fork from "./internal/operationFork.js"
import * as Read from "./internal/operationRead.js"
import * as Write from "./internal/operationWrite.js"

/**
 * The deepest nesting of a JSON body that `create`, `fork` and `append` take for a
 * JSON stream (docs/http.md#json-nesting): `Json.defaultMaxDepth` (128) unless another
 * is provided (the routes provide their context's `maxJsonDepth`). A deeper body is
 * refused with 400 naming its depth and the limit, checked before it is parsed.
 *
 * @since 0.3.0
 * @category references
 */
export const MaxJsonDepth: Context.Reference<number> = Write.MaxJsonDepth

/**
 * What an operation fails with: a refusal of the protocol, or the store's error.
 *
 * @since 0.3.0
 * @category models
 */
export type Failure = DurableRefusal.DurableRefusal | RedisError.RedisError

/**
 * What a fork reads of its source: the source's name, the fork offset as an entry id
 * (none: the source's tail), and the sub-offset (bytes, or JSON values, of the
 * source's next entry to take as well; 0 for none).
 *
 * @since 0.3.0
 * @category models
 */
export interface ForkRequest {
  readonly source: string
  readonly at: string | undefined
  readonly sub: number
}

/**
 * The settings of a stream to create (`PUT`): its content type (and whether the
 * request named one: a fork inherits its source's else), TTL or expiry time, whether
 * it starts closed, its first body, and, for a fork, what it reads of its source.
 *
 * @since 0.3.0
 * @category models
 */
export interface CreateRequest {
  readonly contentType: string
  readonly typeGiven: boolean
  readonly ttl: string | undefined
  readonly expiresAt: string | undefined
  readonly closed: boolean
  readonly body: Uint8Array
  readonly fork: ForkRequest | undefined
}

/**
 * An idempotent producer's claim: its id, epoch and sequence number.
 *
 * @since 0.3.0
 * @category models
 */
export interface Producer {
  readonly id: string
  readonly epoch: number
  readonly seq: number
}

/**
 * The settings of an append (`POST`): the body's content type, the writer's
 * `Stream-Seq`, whether it closes the stream, the idempotent producer, the body.
 *
 * @since 0.3.0
 * @category models
 */
export interface AppendRequest {
  readonly contentType: string | undefined
  readonly seq: string | undefined
  readonly close: boolean
  readonly producer: Producer | undefined
  readonly body: Uint8Array
}

/**
 * What a read asks for: the offset (`-1` for the start, `now` for the tail, or an
 * offset; none: the start), whether it waits at the tail (`long-poll`; `sse` is served
 * by the routes over the same source), and the client's cursor.
 *
 * @since 0.3.0
 * @category models
 */
export interface ReadRequest {
  readonly offset: string | undefined
  readonly live: "long-poll" | "sse" | undefined
  readonly cursor: string | undefined
}

/**
 * A stream created (`Created`, HTTP 201) or found with the same settings (`Exists`,
 * HTTP 200): its content type, tail entry id and whether it is closed.
 *
 * @since 0.3.0
 * @category outcomes
 */
export interface CreateOutcome {
  readonly _tag: "Created" | "Exists"
  readonly contentType: string
  readonly tail: string
  readonly closed: boolean
}

/**
 * What an append did: `Appended` (the body, and the closure when asked, committed up
 * to `tail`), `AlreadyClosed` (a close of a closed stream, or the closing producer's
 * write again: nothing written), `Duplicate` (the producer's sequence number was
 * written before: nothing written again).
 *
 * @since 0.3.0
 * @category outcomes
 */
export type AppendOutcome =
  | {
    readonly _tag: "Appended"
    readonly tail: string
    readonly closed: boolean
    /** Whether the request only closed the stream (no body). */
    readonly closeOnly: boolean
    readonly producer: Producer | undefined
  }
  | { readonly _tag: "AlreadyClosed"; readonly tail: string; readonly producer: Producer | undefined }
  | { readonly _tag: "Duplicate"; readonly producer: Producer; readonly lastSeq: number }

/**
 * A stream deleted (a stream that forks read is kept, gone, until the last of them
 * goes).
 *
 * @since 0.3.0
 * @category outcomes
 */
export interface DeleteOutcome {
  readonly _tag: "Deleted"
}

/**
 * An entry read: its entry id and its data.
 *
 * @since 0.3.0
 * @category models
 */
export interface Entry {
  readonly id: string
  readonly data: Uint8Array
}

/**
 * What a read found: `AtTail` (offset `now` without waiting: nothing, at the tail),
 * `TimedOut` (a long-poll at the tail that saw nothing come, or a closed stream:
 * `offset` is where to read next), or `Entries` (the entries after the offset, up to a
 * page; `nextOffset` where to read next, `upToDate` at the tail, `closed` at the tail
 * of a closed stream). `cursor` is the long-poll cursor (none for a catch-up read).
 *
 * @since 0.3.0
 * @category outcomes
 */
export type ReadOutcome =
  | { readonly _tag: "AtTail"; readonly view: View }
  | { readonly _tag: "TimedOut"; readonly view: View; readonly offset: string; readonly cursor: string }
  | {
    readonly _tag: "Entries"
    readonly view: View
    readonly entries: ReadonlyArray<Entry>
    readonly nextOffset: string
    readonly upToDate: boolean
    readonly closed: boolean
    readonly cursor: string | undefined
  }

/**
 * Creates the stream `name` (`Created`), or confirms one created with the same
 * settings (`Exists`); a request with a `fork` creates a fork (see `fork`). Refused:
 * 409 for other settings, or over a stream kept gone for its forks; 400 for a JSON
 * body that is not JSON (or an empty array).
 *
 * @since 0.3.0
 * @category operations
 */
export const create = (
  store: DurableStore.DurableStoreService,
  name: string,
  request: CreateRequest
): Effect.Effect<CreateOutcome, Failure> =>
  request.fork === undefined ? Write.create(store, name, request) : Fork.create(store, name, request, request.fork)

/**
 * Creates the fork `name` of `fork.source` (`Created`), or confirms the same fork
 * (`Exists`). Refused: 404 when the source does not exist, 409 when it is gone
 * (deleted or expired, kept for its forks), has another content type, or the name is
 * taken by another stream; 400 for a fork offset past the source's tail or a
 * sub-offset past its entry.
 *
 * @since 0.3.0
 * @category operations
 */
export const fork: (
  store: DurableStore.DurableStoreService,
  name: string,
  request: CreateRequest,
  fork: ForkRequest
) => Effect.Effect<CreateOutcome, Failure> = Fork.create

/**
 * Appends the body, closes the stream when asked (with or without a body), and takes
 * a producer's repeated write as a duplicate. Refused: 400 without a body or a content
 * type, 404 no stream, 410 gone, 409 closed, another content type, a `Stream-Seq` not
 * after the last or a producer's sequence gap, 403 a stale producer epoch.
 *
 * @since 0.3.0
 * @category operations
 */
export const append: (
  store: DurableStore.DurableStoreService,
  name: string,
  request: AppendRequest
) => Effect.Effect<AppendOutcome, Failure> = Write.append

/**
 * Deletes the stream. Refused: 404 no stream, 410 already gone.
 *
 * @since 0.3.0
 * @category operations
 */
export const remove: (
  store: DurableStore.DurableStoreService,
  name: string
) => Effect.Effect<DeleteOutcome, Failure> = Write.remove

/**
 * The stream's head as it is now. Refused: 404 no stream, 410 gone.
 *
 * @since 0.3.0
 * @category operations
 */
export const head: (source: Source) => Effect.Effect<View, Failure> = Read.head

/**
 * Reads the entries after the offset from the stream's `view` (as `head` found it);
 * a long-poll at the tail waits up to `longPollMs` for the next ones.
 *
 * @since 0.3.0
 * @category operations
 */
export const read: (
  source: Source,
  view: View,
  request: ReadRequest,
  longPollMs: number
) => Effect.Effect<ReadOutcome, Failure> = Read.read

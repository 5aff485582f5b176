/**
 * A test client for the turn API over real HTTP: JSON requests, and SSE streams read
 * with `@sluice/core`'s `Sse.decode` over the fetch body. Closing the scope of a
 * stream aborts its request, as a client that goes away would.
 */
import { Sse } from "@sluice/core"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

export class ClientError extends Error {
  readonly _tag = "ClientError"
}

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

const toClientError = (cause: unknown) => new ClientError(cause instanceof Error ? cause.message : String(cause))

/** A request whose whole body is read; JSON bodies are parsed. */
export const request = (
  url: string,
  headers: Record<string, string> = {},
  method = "GET"
): Effect.Effect<Reply, ClientError> =>
  Effect.tryPromise({
    try: async () => {
      const response = await fetch(url, { method, headers })
      const text = await response.text()
      const json = response.headers.get("content-type")?.startsWith("application/json") === true
      return { status: response.status, headers: response.headers, body: json ? JSON.parse(text) : text }
    },
    catch: toClientError
  })

export interface Opened {
  readonly status: number
  readonly headers: Headers
  /** The body's bytes; read at most once. */
  readonly bytes: Stream.Stream<Uint8Array, ClientError>
  /** The body as SSE events; read at most once. */
  readonly events: Stream.Stream<Sse.SseEvent, ClientError | Sse.SseError>
  /** Goes away: aborts the request. */
  readonly abort: Effect.Effect<void>
}

/** Opens a request and hands out its body as a stream; the scope's end aborts it. */
export const open = (
  url: string,
  headers: Record<string, string> = {}
): Effect.Effect<Opened, ClientError, Scope.Scope> =>
  Effect.gen(function*() {
    const controller = yield* Effect.acquireRelease(
      Effect.sync(() => new AbortController()),
      (c) => Effect.sync(() => c.abort())
    )
    const response = yield* Effect.tryPromise({
      try: () => fetch(url, { headers, signal: controller.signal }),
      catch: toClientError
    })
    const body = response.body
    const bytes: Stream.Stream<Uint8Array, ClientError> = body === null
      ? Stream.empty
      : Stream.fromReadableStream({ evaluate: () => body, onError: toClientError })
    return {
      status: response.status,
      headers: response.headers,
      bytes,
      events: bytes.pipe(Sse.decode()),
      abort: Effect.sync(() => controller.abort())
    }
  })

/** An SSE event reduced to what the API sets. */
export interface Received {
  readonly id: string | undefined
  readonly event: string
  readonly data: string
}

export const received = (event: Sse.SseEvent): Received => ({ id: event.id, event: event.event, data: event.data })

/** Pulls from an SSE stream until `n` more events have arrived (a chunk may bring more). */
export const takeEvents = <E>(pull: Effect.Effect<ReadonlyArray<Sse.SseEvent>, E>, n: number) =>
  Effect.gen(function*() {
    const seen: Array<Received> = []
    while (seen.length < n) seen.push(...Array.from(yield* pull, received))
    return seen
  })

/** Reads a whole SSE stream (until the server closes it). */
export const readAll = (url: string, headers: Record<string, string> = {}) =>
  Effect.scoped(
    Effect.flatMap(open(url, headers), (opened) =>
      Effect.map(Stream.runCollect(opened.events), (events) => Array.from(events, received)))
  )

/** What a plain `fetch` answered: its status, content type and body as text. */
export interface Answer {
  readonly status: number
  readonly contentType: string | null
  readonly text: string
}

/** A `fetch` of `url`, its answer read whole as text (never fails: a test asserts the status). */
export const call = (url: string, init: RequestInit = {}): Effect.Effect<Answer> =>
  Effect.promise(async () => {
    const response = await fetch(url, init)
    return { status: response.status, contentType: response.headers.get("content-type"), text: await response.text() }
  })

/**
 * What the chat transport's tests feed it: a `fetch` that answers requests in order
 * and records them, SSE bodies (that end, break off, or stay open), and a reader of a
 * chunk stream to its end.
 */
import type { UIMessageChunk } from "ai"

/** A request as the scripted `fetch` recorded it (a JSON body parsed). */
export interface Sent {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: unknown
}

/** An answer to one request. */
export type Reply = (request: Sent) => Response

/** A body of SSE text pieces that ends (or breaks off, with `fail`) after them. */
export const body = (pieces: ReadonlyArray<string>, fail = false) => {
  let next = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const piece = pieces[next++]
      if (piece !== undefined) controller.enqueue(new TextEncoder().encode(piece))
      else if (fail) controller.error(new TypeError("network connection lost"))
      else controller.close()
    }
  }, { highWaterMark: 0 })
}

/** A body of SSE text pieces that stays open after them until the request is aborted. */
export const openBody = (pieces: ReadonlyArray<string>, signal: AbortSignal | undefined) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) controller.enqueue(new TextEncoder().encode(piece))
      signal?.addEventListener("abort", () => controller.error(new DOMException("aborted", "AbortError")), {
        once: true
      })
    }
  })

/** The headers of a UI message stream. */
export const uiHeaders = { "content-type": "text/event-stream", "x-vercel-ai-ui-message-stream": "v1" }

/** A `fetch` that answers the requests in order with `replies` and records them. */
export const scripted = (replies: ReadonlyArray<(request: Sent, signal: AbortSignal | undefined) => Response>) => {
  const sent: Array<Sent> = []
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const headers: Record<string, string> = {}
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value))
    const request: Sent = {
      method: init?.method ?? "GET",
      url: String(input),
      headers,
      body: typeof init?.body === "string" ? JSON.parse(init.body) : undefined
    }
    sent.push(request)
    const reply = replies[sent.length - 1]
    if (reply === undefined) throw new Error(`no reply for request ${sent.length}: ${request.method} ${request.url}`)
    if (init?.signal?.aborted === true) throw new DOMException("aborted", "AbortError")
    return reply(request, init?.signal ?? undefined)
  }
  return { fetch, sent }
}

/** One UI message stream frame (its chunk as JSON), with an event id when given. */
export const frame = (chunk: object, id?: string) =>
  `${id === undefined ? "" : `id: ${id}\n`}data: ${JSON.stringify(chunk)}\n\n`

/** Every chunk of a stream, read to its end. */
export const collect = async (stream: ReadableStream<UIMessageChunk>): Promise<ReadonlyArray<UIMessageChunk>> => {
  const out: Array<UIMessageChunk> = []
  const reader = stream.getReader()
  for (;;) {
    const next = await reader.read()
    if (next.done) return out
    out.push(next.value)
  }
}

/**
 * A real HTTP server on loopback for the live client's tests: it answers each request
 * with the next scripted reply (a paced SSE transcript, an error status, a dropped
 * connection, a transcript cut off or left hanging) and records what it received.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import * as TestClock from "effect/testing/TestClock"
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { sleeps, withSleeps } from "./clock/sleeps.js"
import { transcript } from "./fixtures/transcripts.js"

/**
 * A transcript of the shared fixtures (`<provider>/<name>`).
 *
 * @since 0.3.0
 */
export const fixture = (path: string): string => transcript(path)

/**
 * A body recorded by another project's test suite (`recorded/<provider>/<name>`).
 *
 * @since 0.3.0
 */
export const recorded = (path: string): string => transcript(join("recorded", path))

/**
 * What the loopback server answers one request with.
 *
 * @since 0.3.0
 */
export type Reply =
  /** 200 with the transcript, one SSE event per write, paced. */
  | { readonly _tag: "sse"; readonly body: string }
  /** The status with a body. */
  | {
    readonly _tag: "status"
    readonly status: number
    readonly headers?: Record<string, string>
    readonly body: string
  }
  /** The connection is destroyed before any byte of the response. */
  | { readonly _tag: "drop" }
  /** 200, the first `events` events of the transcript, then the connection is destroyed. */
  | { readonly _tag: "cut"; readonly body: string; readonly events: number }
  /** 200, the first `events` events, then nothing until the client goes. */
  | { readonly _tag: "hang"; readonly body: string; readonly events: number }
  /** No response at all (not even headers) until the client goes. */
  | { readonly _tag: "silent" }

/**
 * One request the server received: its method, URL, headers and body.
 *
 * @since 0.3.0
 */
export interface Recorded {
  readonly method: string
  readonly url: string
  readonly headers: IncomingHttpHeaders
  readonly body: unknown
}

/**
 * The running server: its URL, the requests it received, and when its hanging reply was written and closed.
 *
 * @since 0.3.0
 */
export interface Loopback {
  readonly url: string
  readonly requests: () => ReadonlyArray<Recorded>
  /** Completes when the connection of a `hang` or `silent` reply has closed. */
  readonly hungClosed: Effect.Effect<void>
  /** Completes once a `hang` reply has written its events. */
  readonly hungWritten: Effect.Effect<void>
}

const eventsOf = (body: string): Array<string> => body.split(/(?<=\n\n)/).filter((event) => event.trim() !== "")

/**
 * Lets real I/O (the loopback server, the client's socket) go on for a moment; never a test's timing.
 *
 * @since 0.3.0
 */
export const pause = () => new Promise<void>((resolve) => setTimeout(resolve, 1))

const writeEvents = async (response: ServerResponse, events: ReadonlyArray<string>): Promise<void> => {
  for (const event of events) {
    response.write(event)
    await pause()
  }
}

/**
 * Starts the server for the scope; replies are used in order, and a request past them gets a 418.
 *
 * @since 0.3.0
 */
export const serve = (replies: ReadonlyArray<Reply>): Effect.Effect<Loopback, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ readonly loopback: Loopback; readonly close: () => Promise<void> }>((resume) => {
      const requests: Array<Recorded> = []
      let resolveClosed: () => void = () => {}
      let resolveWritten: () => void = () => {}
      const closed = new Promise<void>((resolve) => (resolveClosed = resolve))
      const written = new Promise<void>((resolve) => (resolveWritten = resolve))
      const server = createServer((request, response) => {
        let text = ""
        request.setEncoding("utf8")
        request.on("data", (data: string) => (text += data))
        request.on("end", () => {
          let body: unknown = text
          try {
            body = JSON.parse(text)
          } catch {
            // kept as text
          }
          requests.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body })
          const reply = replies[requests.length - 1]
          const sse = () =>
            response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
          if (reply === undefined) {
            response.writeHead(418, { "content-type": "application/json" }).end(
              "{\"error\":{\"message\":\"no reply scripted\"}}"
            )
            return
          }
          switch (reply._tag) {
            case "sse":
              sse()
              void writeEvents(response, eventsOf(reply.body)).then(() => response.end())
              return
            case "status":
              response.writeHead(reply.status, { "content-type": "application/json", ...reply.headers }).end(reply.body)
              return
            case "drop":
              request.socket.destroy()
              return
            case "cut":
              sse()
              void writeEvents(response, eventsOf(reply.body).slice(0, reply.events)).then(() =>
                response.socket?.destroy()
              )
              return
            case "silent":
              response.on("close", () => resolveClosed())
              return
            case "hang":
              sse()
              response.on("close", () => resolveClosed())
              void writeEvents(response, eventsOf(reply.body).slice(0, reply.events)).then(() => resolveWritten())
              return
          }
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as AddressInfo).port
        resume(
          Effect.succeed({
            loopback: {
              url: `http://127.0.0.1:${port}`,
              requests: () => requests,
              hungClosed: Effect.promise(() => closed),
              hungWritten: Effect.promise(() => written)
            },
            close: () =>
              new Promise<void>((resolve) => {
                server.closeAllConnections()
                server.close(() => resolve())
              })
          })
        )
      })
    }),
    ({ close }) => Effect.promise(close)
  ).pipe(Effect.map(({ loopback }) => loopback))

/**
 * Runs an effect that sleeps on the TestClock while it waits for real I/O: whenever it
 * sleeps at most `ceiling` ms (a backoff), the clock is moved to its wake-up time;
 * longer sleeps (the client's idle timeouts, armed while it waits for bytes) are left
 * alone, so real I/O is never timed out by the test. Returns its exit and the delays
 * it slept, in milliseconds.
 *
 * @since 0.3.0
 */
export const drive = <A, E>(
  effect: Effect.Effect<A, E>,
  ceiling = 30_000
): Effect.Effect<{ readonly exit: Exit.Exit<A, E>; readonly delays: ReadonlyArray<number> }> =>
  withSleeps(Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(effect)
    const delays: Array<number> = []
    for (let polls = 0; polls < 20_000; polls++) {
      const exit = fiber.pollUnsafe()
      if (exit !== undefined) return { exit, delays }
      const pending = yield* sleeps
      const now = yield* Clock.currentTimeMillis
      const due = pending.find((at) => at - now <= ceiling)
      if (due !== undefined) {
        const delay = due - now
        delays.push(delay)
        yield* TestClock.adjust(delay)
      } else {
        yield* Effect.promise(pause)
      }
    }
    return yield* Effect.die(new Error("the client neither finished nor slept"))
  }))

/**
 * Transcripts in which only the provider ran tools (the caller has nothing to run):
 * each its provider, a name, the transcript, and the names of the tools it ran.
 *
 * @since 0.3.0
 */
export const hostedToolTranscripts: ReadonlyArray<
  readonly ["anthropic" | "openai-responses" | "gemini", string, string, ReadonlyArray<string>]
> = [
  ["anthropic", "recorded web-search", recorded("anthropic/web-search.sse"), ["web_search"]],
  ["anthropic", "recorded web-fetch", recorded("anthropic/web-fetch.sse"), ["web_fetch"]],
  ["anthropic", "recorded code-execution", recorded("anthropic/code-execution.sse"), [
    "text_editor_code_execution",
    "bash_code_execution"
  ]],
  ["anthropic", "server-tool", fixture("anthropic/server-tool.sse"), ["web_search"]],
  ["openai-responses", "recorded web-search", recorded("openai-responses/web-search.sse"), ["web_search_call"]],
  ["openai-responses", "recorded file-search", recorded("openai-responses/file-search.sse"), ["file_search_call"]],
  ["openai-responses", "recorded code-interpreter", recorded("openai-responses/code-interpreter.sse"), [
    "code_interpreter_call"
  ]],
  ["openai-responses", "recorded image-generation", recorded("openai-responses/image-generation.sse"), [
    "image_generation_call"
  ]],
  ["openai-responses", "web-search-citation", fixture("openai-responses/web-search-citation.sse"), ["web_search_call"]],
  [
    "openai-responses",
    "hosted-tools",
    fixture("openai-responses/hosted-tools.sse"),
    ["web_search_call", "file_search_call", "code_interpreter_call", "roll", "image_generation_call"]
  ],
  ["gemini", "code-execution", fixture("gemini/code-execution.sse"), ["code_execution"]],
  ["gemini", "grounding", fixture("gemini/grounding.sse"), ["google_search"]]
]

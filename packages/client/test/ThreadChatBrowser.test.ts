/**
 * `useChat` (`@ai-sdk/react`, React 19) on `SluiceChatTransport` in thread mode, two
 * pages of headless Chromium on one thread, against a real `sluice serve` (a process,
 * on its in-memory store) whose thread turns run the real pipeline against an
 * Anthropic stand-in on loopback that records each request and holds a reply until the
 * test lets it go on (docs/threads.md#browser):
 *
 * - a message sent on page A streams on page B (`followThread`, then `resumeStream`);
 * - page A reloaded mid-turn shows the whole conversation (the current branch), the
 *   turn goes on, its text once;
 * - a tool call answered with `addToolOutput` (`sendAutomaticallyWhen`) is the next
 *   turn, and the provider then receives the full history: the messages, the
 *   reasoning's signature, the tool call and its result;
 * - regenerate runs the turn again on the same history;
 * - stop on page B cancels the turn page A started;
 * - the thread token is refused (403) on another thread and on `/v1/turns`.
 *
 * Fails, saying what to install, when `/usr/bin/chromium` is missing (as the viewer
 * tests do).
 */
import { describe, expect, it, layer } from "@effect/vitest"
import * as ThreadToken from "@sluice/server/ThreadToken"
import { browserLayer, bundleApp, newPage, run, unavailable } from "@sluice/testing/browser"
import { serveProcess } from "@sluice/testing/serve"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"

// the page as the server's browser support opens it (playwright-core is the server's)
type Page = Effect.Success<typeof newPage>["page"]

const transportEntry = fileURLToPath(new URL("../src/aiSdk.ts", import.meta.url))
const testDir = fileURLToPath(new URL(".", import.meta.url))
const bearer = "thread-browser-bearer-token"
const threadId = "browser-thread-1"

// The app: one chat on the thread (its messages loaded first, resumed on load), which
// follows the turns other pages start; its state in `window.chatState`, its actions in
// `window.app`.
const appSource = `
import { createElement as h, useEffect } from "react"
import { createRoot } from "react-dom/client"
import { useChat } from "@ai-sdk/react"
import { lastAssistantMessageIsCompleteWithToolCalls } from "ai"
import { SluiceChatTransport } from ${JSON.stringify(transportEntry)}

const transport = new SluiceChatTransport({
  thread: { id: window.THREAD_ID, token: () => window.THREAD_TOKEN, body: { model: "claude-test" } },
  reconnect: { baseMs: 50, maxMs: 200 }
})

function App({ initial }) {
  const chat = useChat({
    id: window.THREAD_ID,
    transport,
    messages: initial,
    resume: true,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls
  })
  useEffect(() => {
    const following = new AbortController()
    transport.followThread({
      signal: following.signal,
      onTurnStarted: async () => {
        chat.setMessages(await transport.loadMessages())
        await chat.resumeStream()
      }
    }).catch((error) => { window.followError = String(error) })
    return () => following.abort()
  }, [])
  window.app = {
    send: (text) => { void chat.sendMessage({ text }) },
    stop: () => { void chat.stop() },
    regenerate: () => { void chat.regenerate() },
    answer: (toolCallId, output) => { void chat.addToolOutput({ tool: "get_weather", toolCallId, output }) }
  }
  window.chatState = { status: chat.status, messages: chat.messages, error: chat.error ? String(chat.error) : null }
  return h("pre", { id: "state" }, JSON.stringify(window.chatState))
}

transport.loadMessages().then(
  (initial) => createRoot(document.getElementById("root")).render(h(App, { initial })),
  (error) => { window.errors = String(error) }
)
`

const bundle = bundleApp({ source: appSource, resolveDir: testDir, sourcefile: "thread-chat-app.js" })

// Anthropic's Messages stream, event by event.
const sse = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
const messageStart = (id: string) =>
  sse("message_start", {
    message: {
      id,
      type: "message",
      role: "assistant",
      model: "claude-test",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 }
    }
  })
const textBlock = (index: number, pieces: ReadonlyArray<string>) => [
  sse("content_block_start", { index, content_block: { type: "text", text: "" } }),
  ...pieces.map((text) => sse("content_block_delta", { index, delta: { type: "text_delta", text } })),
  sse("content_block_stop", { index })
]
const thinkingBlock = (index: number, thinking: string, signature: string) => [
  sse("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } }),
  sse("content_block_delta", { index, delta: { type: "thinking_delta", thinking } }),
  sse("content_block_delta", { index, delta: { type: "signature_delta", signature } }),
  sse("content_block_stop", { index })
]
const toolBlock = (index: number, id: string, input: object) => [
  sse("content_block_start", { index, content_block: { type: "tool_use", id, name: "get_weather", input: {} } }),
  sse("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(input) } }),
  sse("content_block_stop", { index })
]
const messageEnd = (stopReason: string) => [
  sse("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } }),
  sse("message_stop", {})
]

interface Script {
  /** What is written at once. */
  readonly head: ReadonlyArray<string>
  /** What is written once the test lets the reply go on. */
  readonly tail: ReadonlyArray<string>
}

interface Provider {
  readonly url: string
  /** The request bodies received, in order. */
  readonly requests: Array<unknown>
  /** Lets the reply being held go on. */
  readonly release: () => void
}

// The Anthropic stand-in: the n-th request gets the n-th script's head, then its tail
// once `release` is called (a reply held when the client goes is dropped).
const provider = (scripts: ReadonlyArray<Script>): Effect.Effect<Provider, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ readonly provider: Provider; readonly close: () => void }>((resume) => {
      const requests: Array<unknown> = []
      const held: Array<() => void> = []
      const server = createServer((request, response: ServerResponse) => {
        let text = ""
        request.setEncoding("utf8")
        request.on("data", (data: string) => (text += data))
        request.on("end", () => {
          requests.push(JSON.parse(text))
          const script = scripts[requests.length - 1]
          if (script === undefined) {
            response.writeHead(500, { "content-type": "application/json" })
            response.end(JSON.stringify({ type: "error", error: { type: "api_error", message: "no script left" } }))
            return
          }
          response.writeHead(200, { "content-type": "text/event-stream" })
          for (const event of script.head) response.write(event)
          const rest = () => {
            if (response.writableEnded || response.destroyed) return
            for (const event of script.tail) response.write(event)
            response.end()
          }
          if (script.tail.length === 0) response.end()
          else held.push(rest)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({
          provider: {
            url: `http://127.0.0.1:${port}`,
            requests,
            release: () => held.shift()?.()
          },
          close: () => {
            server.closeAllConnections()
            server.close()
          }
        }))
      })
    }),
    ({ close }) => Effect.sync(close)
  ).pipe(Effect.map(({ provider }) => provider))

interface ChatState {
  readonly status: string
  readonly error: string | null
  readonly messages: ReadonlyArray<{
    readonly id: string
    readonly role: string
    readonly parts: ReadonlyArray<{
      readonly type: string
      readonly text?: string
      readonly state?: string
      readonly toolCallId?: string
    }>
  }>
}

// waits for the page to hold `expression`; past 60 s, fails with what the page holds
const waitFor = (page: Page, expression: string) =>
  run(() => page.waitForFunction(expression, undefined, { timeout: 60_000, polling: 50 })).pipe(
    Effect.asVoid,
    Effect.catch((error) =>
      Effect.flatMap(
        run(() =>
          page.evaluate<unknown>("({ chat: window.chatState, follow: window.followError, errors: window.errors })")
        ),
        (held) =>
          Effect.fail(new Error(`${expression}\nnot held; the page has ${JSON.stringify(held)}`, { cause: error }))
      )
    )
  )
const chatState = (page: Page) => run(() => page.evaluate<ChatState>("window.chatState"))
const act = (page: Page, call: string) => run(() => page.evaluate(call))
// the chat's text: each message's role and text parts
const transcript = `(window.chatState?.messages ?? []).map((m) => m.role + ": " +
  m.parts.filter((p) => p.type === "text").map((p) => p.text).join("")).join(" | ")`
const transcriptIs = (page: Page, text: string) => waitFor(page, `${transcript} === ${JSON.stringify(text)}`)
const ready = (page: Page) => waitFor(page, "window.chatState?.status === 'ready'")

const suite = layer(browserLayer, { timeout: 240_000, excludeTestServices: true })

if (unavailable !== undefined) {
  describe("useChat on a thread in headless Chromium", () => {
    it("needs Debian's chromium", () => {
      throw new Error(`cannot run the thread chat's browser tests: ${unavailable}`)
    })
  })
} else {
  suite("useChat on a thread in headless Chromium", (it) => {
    it.effect(
      "two pages on one thread: follow, reload, tool output, full history, regenerate, stop elsewhere, token scope",
      () =>
        Effect.gen(function*() {
          const anthropic = yield* provider([
            // 1: reasoning with a signature, then text held mid-way
            {
              head: [
                messageStart("msg_1"),
                ...thinkingBlock(0, "A greeting.", "sig-one"),
                sse("content_block_start", { index: 1, content_block: { type: "text", text: "" } }),
                sse("content_block_delta", { index: 1, delta: { type: "text_delta", text: "Hello" } })
              ],
              tail: [
                sse("content_block_delta", { index: 1, delta: { type: "text_delta", text: " world" } }),
                sse("content_block_stop", { index: 1 }),
                ...messageEnd("end_turn")
              ]
            },
            // 2: a call of get_weather
            {
              head: [
                messageStart("msg_2"),
                ...textBlock(0, ["Looking."]),
                ...toolBlock(1, "toolu_1", { city: "Oslo" })
              ],
              tail: messageEnd("tool_use")
            },
            // 3: the answer once the tool's result is in
            {
              head: [messageStart("msg_3"), ...textBlock(0, ["It is 3 degrees."]), ...messageEnd("end_turn")],
              tail: []
            },
            // 4: the same turn regenerated
            { head: [messageStart("msg_4"), ...textBlock(0, ["Three degrees."]), ...messageEnd("end_turn")], tail: [] },
            // 5: a long answer, stopped on the other page
            {
              head: [
                messageStart("msg_5"),
                sse("content_block_start", {
                  index: 0,
                  content_block: { type: "text", text: "" }
                }),
                sse("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Once upon" } })
              ],
              tail: [sse("content_block_stop", { index: 0 }), ...messageEnd("end_turn")]
            }
          ])
          const server = yield* serveProcess(
            { SLUICE_API_TOKENS: bearer, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: anthropic.url },
            "--thread-providers",
            "anthropic",
            "--thread-models",
            "claude-test"
          )
          const token = yield* ThreadToken.mint({ key: [bearer], threadId, scope: "write", expiresIn: "1 hour" })
          const script = yield* bundle
          const open = Effect.gen(function*() {
            const { page, errors } = yield* newPage
            yield* run(() =>
              page.route(`${server.base}/chat-test`, (route) =>
                route.fulfill({
                  contentType: "text/html",
                  body: `<!doctype html><title>chat</title><div id="root"></div><script>` +
                    `window.THREAD_ID = ${JSON.stringify(threadId)}; window.THREAD_TOKEN = ${JSON.stringify(token)}` +
                    `</script><script>${script}</script>`
                }))
            )
            yield* run(() => page.goto(`${server.base}/chat-test`))
            yield* ready(page)
            return { page, errors }
          })
          const a = yield* open
          const b = yield* open

          // a message sent on A streams on B
          yield* act(a.page, "window.app.send('Hi')")
          yield* transcriptIs(b.page, "user: Hi | assistant: Hello")
          // A reloaded mid-turn: the conversation, and the turn going on
          yield* run(() => a.page.reload())
          yield* transcriptIs(a.page, "user: Hi | assistant: Hello")
          expect((yield* chatState(a.page)).status).toBe("streaming")
          anthropic.release()
          yield* transcriptIs(a.page, "user: Hi | assistant: Hello world")
          yield* transcriptIs(b.page, "user: Hi | assistant: Hello world")
          yield* ready(a.page)
          yield* ready(b.page)

          // a tool call on B, answered with addToolOutput: the next turn sends its result
          yield* act(b.page, "window.app.send('Weather in Oslo?')")
          yield* transcriptIs(
            a.page,
            "user: Hi | assistant: Hello world | user: Weather in Oslo? | assistant: Looking."
          )
          anthropic.release()
          yield* waitFor(
            b.page,
            "window.chatState.status === 'ready' && window.chatState.messages.at(-1).parts.some((p) => p.state === 'input-available')"
          )
          const call = (yield* chatState(b.page)).messages.at(-1)!.parts.find((part) =>
            part.type === "tool-get_weather"
          )!
          yield* act(b.page, `window.app.answer(${JSON.stringify(call.toolCallId)}, { temperature: 3 })`)
          yield* transcriptIs(
            b.page,
            "user: Hi | assistant: Hello world | user: Weather in Oslo? | assistant: Looking.It is 3 degrees."
          )
          yield* ready(b.page)
          // the provider received the thread's whole history for the third turn
          const history = [
            { role: "user", content: [{ type: "text", text: "Hi" }] },
            {
              role: "assistant",
              content: [
                { type: "thinking", thinking: "A greeting.", signature: "sig-one" },
                { type: "text", text: "Hello world" }
              ]
            },
            { role: "user", content: [{ type: "text", text: "Weather in Oslo?" }] },
            {
              role: "assistant",
              content: [
                { type: "text", text: "Looking." },
                { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } }
              ]
            },
            {
              role: "user",
              content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "{\"temperature\":3}" }]
            }
          ]
          expect(anthropic.requests.length).toBe(3)
          expect(anthropic.requests[2]).toMatchObject({ model: "claude-test", messages: history })

          // regenerate on B: the same history again, a new answer
          yield* act(b.page, "window.app.regenerate()")
          yield* waitFor(b.page, `${transcript}.endsWith("assistant: Three degrees.")`)
          yield* ready(b.page)
          expect(anthropic.requests[3]).toMatchObject({ messages: history })

          // stop on B cancels the turn A started
          yield* ready(a.page)
          yield* act(a.page, "window.app.send('Tell me a story')")
          yield* waitFor(b.page, `${transcript}.endsWith("user: Tell me a story | assistant: Once upon")`)
          // A reloaded again: the whole conversation of the current branch (the regenerated turn, not the
          // one it replaced), then the running turn
          yield* run(() => a.page.reload())
          yield* transcriptIs(
            a.page,
            "user: Hi | assistant: Hello world | user: Weather in Oslo? | assistant: Looking. | " +
              "assistant: Three degrees. | user: Tell me a story | assistant: Once upon"
          )
          yield* act(b.page, "window.app.stop()")
          yield* ready(a.page)
          yield* ready(b.page)
          const thread = yield* run(() =>
            fetch(`${server.base}/v1/threads/${threadId}`, { headers: { authorization: `Bearer ${bearer}` } }).then(
              (answer): Promise<unknown> => answer.json()
            )
          )
          expect(thread).toMatchObject({ running: null, turnCount: 5 })
          const head = typeof thread === "object" && thread !== null && "head" in thread ? String(thread.head) : ""
          const stopped = yield* run(() =>
            fetch(`${server.base}/v1/turns/${head}`, { headers: { authorization: `Bearer ${bearer}` } }).then(
              (answer): Promise<unknown> => answer.json()
            )
          )
          expect(stopped).toMatchObject({ status: "cancelled" })
          expect(anthropic.requests.length).toBe(5)

          // the thread token reaches its thread only
          const statusOf = (path: string, method = "GET") =>
            act(
              a.page,
              `fetch(${JSON.stringify(path)}, { method: ${JSON.stringify(method)}, headers: { authorization: ` +
                `"Bearer " + window.THREAD_TOKEN, "content-type": "application/json" }, ` +
                `body: ${
                  method === "POST" ? "JSON.stringify({ message: { role: 'user', content: 'x' } })" : "undefined"
                } })` +
                `.then((answer) => answer.status)`
            )
          expect(yield* statusOf("/v1/threads/another-thread")).toBe(403)
          expect(yield* statusOf("/v1/threads/another-thread/turns", "POST")).toBe(403)
          expect(yield* statusOf("/v1/turns")).toBe(403)
          expect(yield* statusOf(`/v1/threads/${threadId}`)).toBe(200)
          expect(a.errors).toStrictEqual([])
          expect(b.errors).toStrictEqual([])
          expect(yield* act(a.page, "window.followError ?? null")).toBeNull()
        }),
      240_000
    )
  })
}

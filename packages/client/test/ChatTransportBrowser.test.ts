/**
 * `useChat` (`@ai-sdk/react`, React 19) on `SluiceChatTransport` in headless Chromium:
 * a tiny app bundled by esbuild, against a real server whose `TurnStarter` runs the
 * pipeline on a model stand-in the test drives, through a proxy that can cut every
 * connection. A message is sent and streams; a cut connection is resumed after the
 * last event (`Last-Event-ID`), the text never doubled; a page reloaded mid-turn
 * resumes the turn (replayed from its start) to its end, and the final message is
 * the turn's snapshot; stop cancels the turn on the server, and the next message
 * carries the conversation so far.
 *
 * Fails, saying what to install, when `/usr/bin/chromium` is missing (as the viewer
 * tests do).
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { TurnPipeline } from "@sluice/pipeline"
import type { LlmRequest } from "@sluice/providers"
import { RedisStreamsMemory } from "@sluice/redis"
import { TurnSnapshot } from "@sluice/server/TurnSnapshot"
import * as TurnStarter from "@sluice/server/TurnStarter"
import { browserLayer, bundleApp, newPage, proxy, run, unavailable } from "@sluice/testing/browser"
import { bearer, drivenStarter, prefix, request, serve, tokens } from "@sluice/testing/server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import { fileURLToPath } from "node:url"
import type { Page } from "playwright-core"

// The transport's messages are the turn request's: a client message is a providers' one.
const _agree = (message: import("@sluice/client/ai-sdk").TurnMessage): LlmRequest.Message => message
void _agree

const testDir = fileURLToPath(new URL(".", import.meta.url))

// The app: one chat (`useChat`, resumed on load) on the transport; its state in
// `window.chatState`, its actions in `window.app`.
const appSource = `
import { createElement as h } from "react"
import { createRoot } from "react-dom/client"
import { useChat } from "@ai-sdk/react"
import { SluiceChatTransport } from "@sluice/client/ai-sdk"

const transport = new SluiceChatTransport({
  body: { provider: "anthropic", model: "slow-model" },
  token: window.SLUICE_TOKEN,
  reconnect: { baseMs: 50, maxMs: 200 }
})

function App() {
  const chat = useChat({ id: "chat-1", transport, resume: true })
  window.app = {
    send: (text) => { void chat.sendMessage({ text }) },
    stop: () => { void chat.stop() }
  }
  window.chatState = { status: chat.status, messages: chat.messages, error: chat.error ? String(chat.error) : null }
  return h("pre", { id: "state" }, JSON.stringify(window.chatState))
}

createRoot(document.getElementById("root")).render(h(App))
`

const bundle = bundleApp({ source: appSource, resolveDir: testDir, sourcefile: "chat-app.js" })

interface ChatState {
  readonly status: string
  readonly error: string | null
  readonly messages: ReadonlyArray<{
    readonly id: string
    readonly role: string
    readonly parts: ReadonlyArray<{ readonly type: string; readonly text?: string; readonly state?: string }>
  }>
}

const pipeline = TurnPipeline.layer({ publisher: { prefix } }).pipe(Layer.provideMerge(RedisStreamsMemory.layer))
const decodeSnapshot = Schema.decodeUnknownEffect(TurnSnapshot)
const snapshotOf = (base: string, turnId: string) =>
  Effect.flatMap(request(`${base}/v1/turns/${turnId}`, bearer(tokens[0])), (reply) => decodeSnapshot(reply.body))

// A server with the driven starter, a proxy before it, and the app on the proxy's
// origin (routed by playwright: the app's requests are same-origin).
const chatPage = Effect.gen(function*() {
  const { starter, started } = yield* drivenStarter
  const base = yield* serve().pipe(Effect.provideService(TurnStarter.TurnStarter, starter))
  const relay = yield* proxy(base)
  const script = yield* bundle
  const { page, errors } = yield* newPage
  yield* run(() =>
    page.route(`${relay.url}/chat-test`, (route) =>
      route.fulfill({
        contentType: "text/html",
        body: `<!doctype html><title>chat</title><div id="root"></div>` +
          `<script>window.SLUICE_TOKEN = ${JSON.stringify(tokens[0])}</script><script>${script}</script>`
      }))
  )
  yield* run(() => page.goto(`${relay.url}/chat-test`))
  yield* waitFor(page, "window.chatState?.status === 'ready'")
  const next = Queue.take(started).pipe(
    Effect.timeoutOrElse({ duration: "30 seconds", orElse: () => Effect.die(new Error("no turn was started")) })
  )
  return { base, relay, page, errors, next }
})

const waitFor = (page: Page, expression: string) =>
  run(() => page.waitForFunction(expression, undefined, { timeout: 30_000, polling: 50 })).pipe(Effect.asVoid)
const chatState = (page: Page) => run(() => page.evaluate<ChatState>("window.chatState"))
const assistantText = `(window.chatState?.messages ?? []).filter((m) => m.role === "assistant")
  .flatMap((m) => m.parts).filter((p) => p.type === "text").map((p) => p.text).join("")`
const textIs = (page: Page, text: string) => waitFor(page, `${assistantText} === ${JSON.stringify(text)}`)
const send = (page: Page, text: string) => run(() => page.evaluate(`window.app.send(${JSON.stringify(text)})`))
const storedTurn = (page: Page) =>
  run(() => page.evaluate<string | null>("sessionStorage.getItem('sluice-chat-turn:chat-1')"))

const suite = layer(browserLayer, { timeout: 120_000, excludeTestServices: true })

if (unavailable !== undefined) {
  describe("useChat on SluiceChatTransport in headless Chromium", () => {
    it("needs Debian's chromium", () => {
      throw new Error(`cannot run the chat transport's browser tests: ${unavailable}`)
    })
  })
} else {
  suite("useChat on SluiceChatTransport in headless Chromium", (it) => {
    it.effect(
      "sends, resumes a cut stream after its last event, resumes after a reload, and ends with the turn's snapshot",
      () =>
        Effect.gen(function*() {
          const { base, relay, page, errors, next } = yield* chatPage
          yield* send(page, "Hi")
          const turn = yield* next
          expect(turn.request.provider).toBe("anthropic")
          expect(turn.request.request.model).toBe("slow-model")
          expect(turn.request.request.messages).toStrictEqual([{ _tag: "user", text: "Hi" }])
          yield* turn.say("Hel")
          yield* turn.say("lo")
          yield* textIs(page, "Hello")
          expect(JSON.parse((yield* storedTurn(page))!)).toMatchObject({ turnId: turn.turnId })
          // the connection is cut mid-turn: the transport reopens after the last event it handed out
          expect(yield* relay.cut).toBeGreaterThan(0)
          yield* turn.say(" wor")
          yield* textIs(page, "Hello wor")
          const resumed = relay.requests().filter((head) =>
            head.startsWith(`GET /v1/turns/${turn.turnId}/ui-message-stream`)
          )
          expect(resumed.length).toBeGreaterThan(0)
          expect(resumed[0]).toMatch(/\r\nlast-event-id: [0-9a-f-]{36}\r\n/i)
          // the page is reloaded mid-turn: useChat resumes the chat's turn from the storage
          yield* run(() => page.reload())
          yield* textIs(page, "Hello wor")
          expect((yield* chatState(page)).status).toBe("streaming")
          yield* turn.say("ld")
          yield* turn.finish
          yield* waitFor(page, "window.chatState?.status === 'ready'")
          yield* textIs(page, "Hello world")
          const state = yield* chatState(page)
          const snapshot = yield* snapshotOf(base, turn.turnId)
          expect(snapshot.status).toBe("complete")
          const assistants = state.messages.filter((message) => message.role === "assistant")
          expect(assistants.length).toBe(1)
          expect(assistants[0]!.id).toBe(turn.runId)
          // (the AI SDK's part also has `providerMetadata: undefined`)
          expect(assistants[0]!.parts.filter((part) => part.type === "text")).toEqual(
            snapshot.items.filter((item) => item.itemType === "message").map((item) => ({
              type: "text",
              text: item.content,
              state: "done"
            }))
          )
          expect(state.error).toBeNull()
          // the turn ended: the chat has none to resume
          expect(yield* storedTurn(page)).toBeNull()
          expect(errors).toStrictEqual([])
        }).pipe(Effect.provide(pipeline)),
      120_000
    )

    it.effect(
      "stop cancels the turn on the server; the next message carries the conversation so far",
      () =>
        Effect.gen(function*() {
          const { base, page, errors, next } = yield* chatPage
          yield* send(page, "Hi")
          const turn = yield* next
          yield* turn.say("Thinking")
          yield* textIs(page, "Thinking")
          yield* run(() => page.evaluate("window.app.stop()"))
          yield* waitFor(page, "window.chatState?.status === 'ready'")
          // the turn ends cancelled: its UI message stream, read whole, ends with the abort
          const replay = yield* Effect.promise(() =>
            fetch(`${base}/v1/turns/${turn.turnId}/ui-message-stream`, {
              headers: bearer(tokens[0]),
              signal: AbortSignal.timeout(30_000)
            }).then((reply) => reply.text())
          )
          expect(replay).toContain(`data: {"type":"abort","reason":"cancelled"}`)
          expect((yield* snapshotOf(base, turn.turnId)).status).toBe("cancelled")
          expect(yield* storedTurn(page)).toBeNull()
          yield* send(page, "Again")
          const second = yield* next
          expect(second.request.request.messages).toStrictEqual([
            { _tag: "user", text: "Hi" },
            { _tag: "assistant", parts: [{ _tag: "text", text: "Thinking" }] },
            { _tag: "user", text: "Again" }
          ])
          yield* second.say("Done")
          yield* second.finish
          yield* waitFor(page, "window.chatState?.status === 'ready'")
          yield* textIs(page, "ThinkingDone")
          expect(errors).toStrictEqual([])
        }).pipe(Effect.provide(pipeline)),
      120_000
    )
  })
}

/**
 * `SluiceChatTransport` over a scripted `fetch`: the turn request it sends (the chat's
 * messages mapped, the app's fields, the token, `prepareSendMessagesRequest`), the
 * chunks it hands out (an event's chunks only once its `id:` frame is in; a dropped
 * stream reopened after the last event handed out, nothing twice), what it remembers
 * per chat (the turn, then nothing once it ended), `reconnectToStream` (`null`
 * without a turn, a replay from the start on a new page, a continuation after a
 * disconnect it reported), and stop (cancel, or detach).
 */
import type { UIMessage, UIMessageChunk } from "ai"
import { readUIMessageStream } from "ai"
import { describe, expect, it } from "vitest"
import {
  type ActiveTurn,
  type ChatTurnStorage,
  ClientError,
  memoryStorage,
  SluiceChatTransport,
  toTurnConversation,
  webStorage
} from "../src/aiSdk.js"
import { body, collect, frame, type Reply, scripted, type Sent, uiHeaders } from "./support/scripted.js"

const turnId = "6f1c2b7e-0c3a-4d5e-8f90-1a2b3c4d5e6f"
const base = "http://sluice.test"

// A turn's chunks by event: each event's chunks, its last frame with the event's id.
const events: ReadonlyArray<{ readonly id: string; readonly chunks: ReadonlyArray<UIMessageChunk> }> = [
  { id: "0-1", chunks: [{ type: "start", messageId: "resp-1" }, { type: "start-step" }] },
  { id: "0-2", chunks: [{ type: "text-start", id: "m1" }, { type: "text-delta", id: "m1", delta: "Hel" }] },
  { id: "0-3", chunks: [{ type: "text-delta", id: "m1", delta: "lo" }] },
  { id: "0-4", chunks: [{ type: "text-end", id: "m1" }] },
  { id: "0-5", chunks: [{ type: "finish-step" }, { type: "finish", finishReason: "stop" }] }
]
const allChunks = events.flatMap((event) => event.chunks)
const framesOf = (from: number, to = events.length) =>
  events.slice(from, to).map((event) =>
    event.chunks.map((chunk, i) => frame(chunk, i === event.chunks.length - 1 ? event.id : undefined)).join("")
  )
const done = "data: [DONE]\n\n"

const started: Reply = () =>
  new Response(body([...framesOf(0), done]), { headers: { ...uiHeaders, "x-sluice-turn-id": turnId } })

const user = (id: string, text: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] })

const send = (transport: SluiceChatTransport, signal?: AbortSignal, messages = [user("u1", "Hi")]) =>
  transport.sendMessages({
    trigger: "submit-message",
    chatId: "chat-1",
    messageId: undefined,
    messages,
    abortSignal: signal
  })

const noWait = { sleep: () => Promise.resolve(), random: () => 0 }

describe("toTurnConversation", () => {
  it("maps text, tool calls with their results step by step, and system text; leaves the rest out", () => {
    const messages: Array<UIMessage> = [
      { id: "s", role: "system", parts: [{ type: "text", text: "Be brief." }] },
      {
        id: "u",
        role: "user",
        parts: [{ type: "text", text: "Weather?" }, { type: "file", mediaType: "image/png", url: "data:," }, {
          type: "text",
          text: "In Paris."
        }]
      },
      {
        id: "a",
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "reasoning", text: "Let me look.", state: "done" },
          { type: "text", text: "Looking.", state: "done" },
          {
            type: "tool-get_weather",
            toolCallId: "c1",
            state: "output-available",
            input: { city: "Paris" },
            output: { temp: 21 }
          },
          {
            type: "dynamic-tool",
            toolName: "lookup",
            toolCallId: "c2",
            state: "output-error",
            input: {},
            errorText: "down"
          },
          { type: "tool-pending", toolCallId: "c3", state: "input-available", input: {} },
          {
            type: "tool-web_search",
            toolCallId: "c4",
            state: "output-available",
            input: {},
            output: "x",
            providerExecuted: true
          },
          { type: "source-url", sourceId: "s1", url: "https://example.com" },
          { type: "step-start" },
          { type: "text", text: "It is 21°C.", state: "done" }
        ]
      }
    ]
    expect(toTurnConversation(messages)).toStrictEqual({
      system: "Be brief.",
      messages: [
        { _tag: "user", text: "Weather?\n\nIn Paris." },
        {
          _tag: "assistant",
          parts: [
            { _tag: "text", text: "Looking." },
            { _tag: "tool_call", id: "c1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" },
            { _tag: "tool_call", id: "c2", name: "lookup", arguments: "{}" }
          ]
        },
        {
          _tag: "tool",
          results: [
            { callId: "c1", name: "get_weather", output: "{\"temp\":21}" },
            { callId: "c2", name: "lookup", output: "down", isError: true }
          ]
        },
        { _tag: "assistant", parts: [{ _tag: "text", text: "It is 21°C." }] }
      ]
    })
    const withReasoning = toTurnConversation(messages, { reasoning: true }).messages[1]
    expect(withReasoning?._tag === "assistant" ? withReasoning.parts[0] : undefined).toStrictEqual({
      _tag: "reasoning",
      text: "Let me look."
    })
  })
})

describe("SluiceChatTransport", () => {
  it("starts a turn with the mapped messages, the app's fields and token, and reads it to its end", async () => {
    const { fetch, sent } = scripted([started])
    const storage = memoryStorage()
    const transport = new SluiceChatTransport({
      baseUrl: base,
      fetch,
      storage,
      token: () => "secret-token",
      headers: { "x-app": "1" },
      body: { provider: "anthropic", model: "claude-sonnet-4-5", system: "Be brief.", tools: [{ name: "t" }] }
    })
    const stream = await send(transport)
    expect(await storage.get("chat-1")).toStrictEqual({ turnId })
    expect(await collect(stream)).toStrictEqual(allChunks)
    expect(sent).toStrictEqual([{
      method: "POST",
      url: `${base}/v1/turns`,
      headers: { "content-type": "application/json", "x-app": "1", authorization: "Bearer secret-token" },
      body: {
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        system: "Be brief.",
        tools: [{ name: "t" }],
        messages: [{ _tag: "user", text: "Hi" }]
      }
    }])
    // the turn ended: the chat has none to resume
    expect(await storage.get("chat-1")).toBeUndefined()
    expect(await transport.reconnectToStream({ chatId: "chat-1" })).toBeNull()
  })

  it("asks again for a start refused at_capacity, after the server's Retry-After and some jitter", async () => {
    const refused = (retryAfter?: string): Reply => () =>
      new Response(JSON.stringify({ error: { code: "at_capacity", message: "this process runs 1000 turns" } }), {
        status: 503,
        headers: {
          "content-type": "application/json",
          ...(retryAfter === undefined ? {} : { "retry-after": retryAfter })
        }
      })
    const { fetch, sent } = scripted([refused("2"), refused(), started])
    const waits: Array<number> = []
    const transport = new SluiceChatTransport({
      baseUrl: base,
      fetch,
      storage: memoryStorage(),
      body: { provider: "anthropic", model: "claude-sonnet-4-5" },
      sleep: (ms) => Promise.resolve(void waits.push(ms)),
      random: () => 0.5
    })
    expect(await collect(await send(transport))).toStrictEqual(allChunks)
    // 2 s from the server, then its default of 1 s, each with half as much again
    expect(waits).toStrictEqual([3_000, 1_500])
    expect(sent.map((request) => [request.method, request.url])).toStrictEqual([
      ["POST", `${base}/v1/turns`],
      ["POST", `${base}/v1/turns`],
      ["POST", `${base}/v1/turns`]
    ])
    expect(new Set(sent.map((request) => JSON.stringify(request.body))).size).toBe(1)
  })

  it("gives the chat the refusal after startAttempts, and asks only once for any other error", async () => {
    const answer = (code: string): Reply => () =>
      new Response(JSON.stringify({ error: { code, message: `${code} here` } }), {
        status: 503,
        headers: { "content-type": "application/json", "retry-after": "1" }
      })
    const capacity = scripted([answer("at_capacity"), answer("at_capacity"), started])
    const limited = new SluiceChatTransport({ baseUrl: base, fetch: capacity.fetch, startAttempts: 2, ...noWait })
    const error = await send(limited).catch((thrown: unknown) => thrown)
    expect(error).toBeInstanceOf(ClientError)
    expect(error).toMatchObject({ code: "at_capacity", status: 503, retryAfterMs: 1_000, retryable: true })
    expect(capacity.sent.length).toBe(2)

    const provider = scripted([answer("provider_unavailable"), started])
    const once = new SluiceChatTransport({ baseUrl: base, fetch: provider.fetch, ...noWait })
    expect(await send(once).catch((thrown: unknown) => thrown)).toMatchObject({ code: "provider_unavailable" })
    expect(provider.sent.length).toBe(1)
  })

  it("refuses a startAttempts that is not a positive integer", () => {
    for (const startAttempts of [0, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new SluiceChatTransport({ startAttempts })).toThrow(
        `startAttempts must be a positive integer, got ${startAttempts}`
      )
    }
  })

  it("stops asking again once the chat is stopped during a wait", async () => {
    const refused: Reply = () =>
      new Response(JSON.stringify({ error: { code: "at_capacity", message: "full" } }), { status: 503 })
    const { fetch, sent } = scripted([refused, started])
    const abort = new AbortController()
    const transport = new SluiceChatTransport({
      baseUrl: base,
      fetch,
      sleep: () => Promise.resolve(abort.abort()),
      random: () => 0
    })
    expect(await send(transport, abort.signal).catch((thrown: unknown) => thrown)).toMatchObject({
      code: "at_capacity"
    })
    expect(sent.length).toBe(1)
  })

  it("hands out chunks without ids at the turn's end (a server that names no events)", async () => {
    const plain = allChunks.map((chunk) => frame(chunk))
    const { fetch } = scripted([
      () => new Response(body([...plain, done]), { headers: { ...uiHeaders, "x-sluice-turn-id": turnId } })
    ])
    const transport = new SluiceChatTransport({ baseUrl: base, fetch, storage: memoryStorage() })
    expect(await collect(await send(transport))).toStrictEqual(allChunks)
  })

  it("lets the app reshape the request", async () => {
    const { fetch, sent } = scripted([started])
    const transport = new SluiceChatTransport({
      baseUrl: base,
      fetch,
      storage: memoryStorage(),
      body: { provider: "openai", model: "gpt" },
      prepareSendMessagesRequest: (request) => ({
        body: { ...request.body, threadId: request.chatId, extra: request.messages.length },
        headers: { ...request.headers, "x-chat": request.chatId }
      })
    })
    await collect(await send(transport))
    expect(sent[0]!.body).toStrictEqual({
      provider: "openai",
      model: "gpt",
      messages: [{ _tag: "user", text: "Hi" }],
      threadId: "chat-1",
      extra: 1
    })
    expect(sent[0]!.headers["x-chat"]).toBe("chat-1")
  })

  it("reopens a dropped stream after the last event handed out: each chunk once, in order", async () => {
    const partOfNext = frame(events[2]!.chunks[0]!) // 0-3's chunk, without its id frame
    const { fetch, sent } = scripted([
      // the start: two events whole, then a piece of the third, then the connection breaks
      () =>
        new Response(body([...framesOf(0, 2), partOfNext], true), {
          headers: { ...uiHeaders, "x-sluice-turn-id": turnId }
        }),
      // refused once (503), then the rest after 0-2
      () => Response.json({ error: { code: "redis_unavailable", message: "later" } }, { status: 503 }),
      () => new Response(body([...framesOf(2), done]), { headers: uiHeaders })
    ])
    const storage = memoryStorage()
    const transport = new SluiceChatTransport({ baseUrl: base, fetch, storage, token: "t", ...noWait })
    const stream = await send(transport)
    expect(await collect(stream)).toStrictEqual(allChunks)
    expect(sent.slice(1).map((request) => [request.method, request.url, request.headers["last-event-id"]]))
      .toStrictEqual([
        ["GET", `${base}/v1/turns/${turnId}/ui-message-stream`, "0-2"],
        ["GET", `${base}/v1/turns/${turnId}/ui-message-stream`, "0-2"]
      ])
    expect(sent[1]!.headers["authorization"]).toBe("Bearer t")
    // what the AI SDK makes of the chunks: one message, its text once
    const chunks = new ReadableStream<UIMessageChunk>({
      start(controller) {
        for (const chunk of allChunks) controller.enqueue(chunk)
        controller.close()
      }
    })
    let last: UIMessage | undefined
    for await (const message of readUIMessageStream({ stream: chunks })) last = message
    expect(last?.parts).toEqual([{ type: "step-start" }, { type: "text", text: "Hello", state: "done" }])
  })

  it("remembers the turn per chat: a new page replays it from the start", async () => {
    const stored = new Map<string, string>()
    const storage = webStorage({
      getItem: (key) => stored.get(key) ?? null,
      setItem: (key, value) => void stored.set(key, value),
      removeItem: (key) => void stored.delete(key)
    })
    const first = scripted([
      () =>
        new Response(body(framesOf(0, 3), true), {
          headers: { ...uiHeaders, "x-sluice-turn-id": turnId }
        })
    ])
    const page = new SluiceChatTransport({ baseUrl: base, fetch: first.fetch, storage, reconnect: { maxAttempts: 0 } })
    const reader = (await send(page)).getReader()
    for (let i = 0; i < 5; i++) await reader.read()
    expect(await storage.get("chat-1")).toStrictEqual<ActiveTurn>({ turnId, lastEventId: "0-3" })
    expect(JSON.parse(stored.get("sluice-chat-turn:chat-1")!)).toStrictEqual({ turnId, lastEventId: "0-3" })
    // the page is reloaded: a new transport on the same storage finds the turn and replays it
    const second = scripted([() => new Response(body([...framesOf(0), done]), { headers: uiHeaders })])
    const reloaded = new SluiceChatTransport({ baseUrl: base, fetch: second.fetch, storage })
    const replay = await reloaded.reconnectToStream({ chatId: "chat-1" })
    expect(second.sent[0]!.headers["last-event-id"]).toBeUndefined()
    expect(await collect(replay!)).toStrictEqual(allChunks)
    expect(await storage.get("chat-1")).toBeUndefined()
    // a value that is not a turn reads as none
    stored.set("sluice-chat-turn:chat-2", "{\"turn\":1}")
    expect(await storage.get("chat-2")).toBeUndefined()
  })

  it("after a disconnect it reported, a resume continues after the last event handed out", async () => {
    const { fetch, sent } = scripted([
      () => new Response(body(framesOf(0, 2), true), { headers: { ...uiHeaders, "x-sluice-turn-id": turnId } }),
      () => new Response(body([]), { headers: uiHeaders }), // closed at once, without the turn's end
      () => new Response(body([...framesOf(2), done]), { headers: uiHeaders })
    ])
    const transport = new SluiceChatTransport({
      baseUrl: base,
      fetch,
      storage: memoryStorage(),
      reconnect: { maxAttempts: 1 },
      ...noWait
    })
    const stream = await send(transport)
    const error = await collect(stream).then(() => undefined, (thrown: unknown) => thrown)
    // a TypeError naming the network, which the AI SDK's chat takes for a disconnect
    expect(error).toBeInstanceOf(TypeError)
    expect(String(error)).toMatch(/network/)
    const resumed = await transport.reconnectToStream({ chatId: "chat-1" })
    expect(sent[2]!.headers["last-event-id"]).toBe("0-2")
    expect(await collect(resumed!)).toStrictEqual(events.slice(2).flatMap((event) => event.chunks))
  })

  it("resumes nothing for a chat without a turn, or a turn the server does not know", async () => {
    const { fetch } = scripted([
      () => Response.json({ error: { code: "turn_not_found", message: "no" } }, { status: 404 })
    ])
    const storage: ChatTurnStorage = memoryStorage()
    const transport = new SluiceChatTransport({ baseUrl: base, fetch, storage })
    expect(await transport.reconnectToStream({ chatId: "chat-1" })).toBeNull()
    await storage.set("chat-1", { turnId })
    expect(await transport.reconnectToStream({ chatId: "chat-1" })).toBeNull()
    expect(await storage.get("chat-1")).toBeUndefined()
  })

  it("stop cancels the turn on the server; detached, the turn stays the chat's", async () => {
    let resolveCancel: (request: Sent) => void = () => undefined
    const cancelled = { promise: new Promise<Sent>((resolve) => (resolveCancel = resolve)) }
    const held = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(framesOf(0, 1)[0]!))
          }
        }),
        { headers: { ...uiHeaders, "x-sluice-turn-id": turnId } }
      )
    const { fetch, sent } = scripted([held, (request) => {
      resolveCancel(request)
      return Response.json({ turnId, cancel: "requested" }, { status: 202 })
    }])
    const storage = memoryStorage()
    const transport = new SluiceChatTransport({ baseUrl: base, fetch, storage, token: "t" })
    const stop = new AbortController()
    const reader = (await send(transport, stop.signal)).getReader()
    await reader.read()
    stop.abort()
    const cancel = await cancelled.promise
    expect([cancel.method, cancel.url, cancel.headers["authorization"]]).toStrictEqual([
      "POST",
      `${base}/v1/turns/${turnId}/cancel`,
      "Bearer t"
    ])
    await reader.cancel()
    await expect.poll(() => storage.get("chat-1"), { timeout: 5_000 }).toBeUndefined()
    expect(sent.length).toBe(2)

    const detachedFetch = scripted([held])
    const detachedStorage = memoryStorage()
    const detached = new SluiceChatTransport({
      baseUrl: base,
      fetch: detachedFetch.fetch,
      storage: detachedStorage,
      onStop: "detach"
    })
    const detach = new AbortController()
    const detachedReader = (await send(detached, detach.signal)).getReader()
    await detachedReader.read()
    detach.abort()
    await detachedReader.cancel()
    expect(detachedFetch.sent.length).toBe(1)
    expect(await detachedStorage.get("chat-1")).toStrictEqual({ turnId, lastEventId: "0-1" })
  })
})

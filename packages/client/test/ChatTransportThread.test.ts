/**
 * `SluiceChatTransport` in thread mode over a scripted `fetch` (docs/threads.md#browser):
 * a send carries only what is new (the user's message, the results of the tool calls
 * the chat answered, `regenerate: true`) with the thread's fields and token; the
 * thread's messages load for `useChat`; `reconnectToStream` reattaches to the thread's
 * running turn; the token is asked for again when it expires or the server answers
 * 401; stop cancels with the thread token; `followThread` reports the turns another
 * tab started, resuming after the last event.
 */
import type { UIMessage, UIMessageChunk } from "ai"
import { describe, expect, it } from "vitest"
import { ClientError, memoryStorage, SluiceChatTransport, type ThreadEvent } from "../src/aiSdk.js"
import { body, collect, frame, openBody, type Reply, scripted, uiHeaders } from "./support/scripted.js"

const base = "http://sluice.test"
const threadId = "chat-7f3a"
const turnId = "t-2"
const farFuture = 4_102_444_800_000 // 2100
const token = (n: number, expiresAt = farFuture) => `th1.${expiresAt}.write.Y2hhdC03ZjNh.mac${n}`
const timeout = 20_000

const chunks: ReadonlyArray<UIMessageChunk> = [
  { type: "start", messageId: "resp-2" },
  { type: "start-step" },
  { type: "text-start", id: "m1" },
  { type: "text-delta", id: "m1", delta: "Sunny." },
  { type: "text-end", id: "m1" },
  { type: "finish-step" },
  { type: "finish", finishReason: "stop" }
]
const turnFrames = [...chunks.map((chunk, i) => frame(chunk, `0-${i + 1}`)), "data: [DONE]\n\n"]
const startedTurn = (id = turnId): Reply => () =>
  new Response(body(turnFrames), { headers: { ...uiHeaders, "x-sluice-turn-id": id } })

const user = (id: string, text: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] })
// the first turn's answer: a call of get_weather, answered by the chat (`addToolOutput`)
const called = (state: "input-available" | "output-available"): UIMessage => ({
  id: "resp-1",
  role: "assistant",
  parts: [
    { type: "step-start" },
    { type: "text", text: "Looking.", state: "done" },
    ...(state === "output-available"
      ? [{
        type: "tool-get_weather" as const,
        toolCallId: "call-1",
        state,
        input: { city: "Oslo" },
        output: { temperature: 3 }
      }]
      : [{ type: "tool-get_weather" as const, toolCallId: "call-1", state, input: { city: "Oslo" } }])
  ]
})

const threadJson = (overrides: object = {}) => ({
  threadId,
  createdAt: 1,
  updatedAt: 2,
  head: "t-1",
  turnCount: 1,
  lastEventId: "5-0",
  running: null,
  messages: [user("u1", "Weather in Oslo?"), called("output-available")],
  ...overrides
})

const submit = (transport: SluiceChatTransport, messages: Array<UIMessage>, signal?: AbortSignal) =>
  transport.sendMessages({
    trigger: "submit-message",
    chatId: "c",
    messageId: undefined,
    messages,
    abortSignal: signal
  })

const transportOn = (fetch: typeof globalThis.fetch, thread: object = {}) =>
  new SluiceChatTransport({
    baseUrl: base,
    fetch,
    storage: memoryStorage(),
    sleep: () => Promise.resolve(),
    random: () => 0,
    thread: { id: threadId, token: token(1), ...thread }
  })

describe("SluiceChatTransport, thread mode", () => {
  it("sends only the user's new message, with the thread's fields and token", async () => {
    const { fetch, sent } = scripted([startedTurn()])
    const transport = transportOn(fetch, { body: () => ({ model: "claude-sonnet-4-5", tools: ["get_weather"] }) })
    const messages = [user("u1", "Hi"), { id: "a1", role: "assistant" as const, parts: [] }, user("u2", "Weather?")]
    expect(await collect(await submit(transport, messages))).toStrictEqual(chunks)
    expect(sent).toStrictEqual([{
      method: "POST",
      url: `${base}/v1/threads/${threadId}/turns`,
      headers: { "content-type": "application/json", authorization: `Bearer ${token(1)}` },
      body: { model: "claude-sonnet-4-5", tools: ["get_weather"], message: user("u2", "Weather?") }
    }])
  }, timeout)

  it("sends the tool outputs the chat added, once, and continues the assistant's message", async () => {
    const { fetch, sent } = scripted([startedTurn(), startedTurn("t-3")])
    const transport = transportOn(fetch)
    const answered = [user("u1", "Weather in Oslo?"), called("output-available")]
    const continuation = await collect(await submit(transport, answered))
    expect(sent[0]!.body).toStrictEqual({ toolResults: [{ toolCallId: "call-1", output: { temperature: 3 } }] })
    // the chat keeps adding to its last message: the start names no other message
    expect(continuation[0]).toStrictEqual({ type: "start" })
    expect(continuation.slice(1)).toStrictEqual(chunks.slice(1))
    // the next message does not send the results again
    await collect(await submit(transport, [...answered, user("u2", "And Bergen?")]))
    expect(sent[1]!.body).toStrictEqual({ message: user("u2", "And Bergen?") })
  }, timeout)

  it("sends no result the loaded thread already has, and refuses a send with nothing new", async () => {
    const { fetch, sent } = scripted([() => Response.json(threadJson()), startedTurn()])
    const transport = transportOn(fetch)
    const messages = await transport.loadMessages()
    expect(messages).toStrictEqual(threadJson().messages)
    const error = await submit(transport, messages).catch((thrown: unknown) => thrown)
    expect(error).toBeInstanceOf(ClientError)
    expect(error).toMatchObject({ code: "invalid_request", message: expect.stringMatching(/nothing new to send/) })
    await collect(await submit(transport, [...messages, user("u2", "Thanks")]))
    expect(sent.map((request) => [request.method, request.url, request.body])).toStrictEqual([
      ["GET", `${base}/v1/threads/${threadId}`, undefined],
      ["POST", `${base}/v1/threads/${threadId}/turns`, { message: user("u2", "Thanks") }]
    ])
  }, timeout)

  it("regenerates with regenerate: true and no message", async () => {
    const { fetch, sent } = scripted([startedTurn()])
    const transport = transportOn(fetch, { body: { provider: "anthropic" } })
    await collect(
      await transport.sendMessages({
        trigger: "regenerate-message",
        chatId: "c",
        messageId: "resp-1",
        messages: [user("u1", "Weather in Oslo?")],
        abortSignal: undefined
      })
    )
    expect(sent[0]!.body).toStrictEqual({ provider: "anthropic", regenerate: true })
  }, timeout)

  it("loads nothing for a thread not started yet, and refuses an answer that is not a thread", async () => {
    const { fetch } = scripted([
      () => Response.json({ error: { code: "thread_not_found", message: "no thread" } }, { status: 404 }),
      () => Response.json({ threadId, messages: [{ id: 1 }] })
    ])
    const transport = transportOn(fetch)
    expect(await transport.loadMessages()).toStrictEqual([])
    expect(await transport.loadThread().catch((thrown: unknown) => thrown)).toMatchObject({
      code: "unexpected_body",
      message: "the server sent something that is not a thread"
    })
  }, timeout)

  it("reattaches to the thread's running turn from its start, or resumes nothing", async () => {
    const running = { turnId, uiMessageStream: "", events: "", cancel: "" }
    const { fetch, sent } = scripted([
      () => Response.json(threadJson({ running })),
      () => new Response(body(turnFrames), { headers: uiHeaders }),
      () => Response.json(threadJson())
    ])
    const transport = transportOn(fetch)
    const stream = await transport.reconnectToStream({ chatId: "c" })
    expect(await collect(stream!)).toStrictEqual(chunks)
    expect([sent[1]!.url, sent[1]!.headers["last-event-id"], sent[1]!.headers["authorization"]]).toStrictEqual([
      `${base}/v1/turns/${turnId}/ui-message-stream`,
      undefined,
      `Bearer ${token(1)}`
    ])
    expect(await transport.reconnectToStream({ chatId: "c" })).toBeNull()
  }, timeout)

  it("asks for a fresh token when the one it has expired, and once again on 401", async () => {
    const given: Array<string> = [token(1, 1), token(2), token(3), token(4)]
    const calls: Array<string> = []
    const source = () => {
      const next = given.shift()!
      calls.push(next)
      return Promise.resolve(next)
    }
    const unauthorized: Reply = () =>
      Response.json({ error: { code: "unauthorized", message: "expired" } }, { status: 401 })
    const { fetch, sent } = scripted([
      () => Response.json(threadJson()),
      unauthorized,
      () => Response.json(threadJson()),
      unauthorized,
      unauthorized
    ])
    const transport = transportOn(fetch, { token: source })
    await transport.loadThread() // token 1 expired at once: token 2 is asked for on the next request
    await transport.loadThread() // token 2 refused (401): token 3, and the request again
    // token 3 refused, token 4 too: asked again only once, then the caller gets the 401
    expect(await transport.loadThread().catch((thrown: unknown) => thrown)).toMatchObject({
      code: "unauthorized",
      status: 401
    })
    expect(calls).toStrictEqual([token(1, 1), token(2), token(3), token(4)])
    expect(sent.map((request) => request.headers["authorization"])).toStrictEqual(
      [token(1, 1), token(2), token(3), token(3), token(4)].map((value) => `Bearer ${value}`)
    )
  }, timeout)

  it("reads a token's expiry on the transport's now", async () => {
    let clock = 0
    const given = [token(1, 60_000), token(2)]
    const { fetch, sent } = scripted([
      () => Response.json(threadJson()),
      () => Response.json(threadJson()),
      () => Response.json(threadJson())
    ])
    const timed = new SluiceChatTransport({
      baseUrl: base,
      fetch,
      storage: memoryStorage(),
      now: () => clock,
      thread: { id: threadId, token: () => Promise.resolve(given.shift()!) }
    })
    await timed.loadThread()
    clock = 50_000 // 10 s left: still good
    await timed.loadThread()
    clock = 56_000 // within 5 s of its end: a new one
    await timed.loadThread()
    expect(sent.map((request) => request.headers["authorization"])).toStrictEqual(
      [token(1, 60_000), token(1, 60_000), token(2)].map((value) => `Bearer ${value}`)
    )
  }, timeout)

  it("sends only the fields the server takes (model, provider, tools)", async () => {
    const { fetch, sent } = scripted([startedTurn()])
    const transport = transportOn(fetch, { body: () => ({ model: "m", temperature: 0.2 }) })
    await collect(
      await transport.sendMessages({
        trigger: "submit-message",
        chatId: "c",
        messageId: undefined,
        messages: [user("u1", "Hi")],
        abortSignal: undefined,
        body: { tools: ["get_weather"], system: "be brief" }
      })
    )
    expect(sent[0]!.body).toStrictEqual({ model: "m", tools: ["get_weather"], message: user("u1", "Hi") })
  }, timeout)

  it("stop cancels the turn with the thread token", async () => {
    let cancelled: (url: string) => void = () => undefined
    const cancel = new Promise<string>((resolve) => (cancelled = resolve))
    const { fetch, sent } = scripted([
      (_, signal) =>
        new Response(openBody([frame(chunks[0]!, "0-1")], signal), {
          headers: { ...uiHeaders, "x-sluice-turn-id": turnId }
        }),
      (request) => {
        cancelled(request.url)
        return Response.json({ turnId, cancel: "requested" }, { status: 202 })
      }
    ])
    const transport = transportOn(fetch)
    const stop = new AbortController()
    const reader = (await submit(transport, [user("u1", "Hi")], stop.signal)).getReader()
    await reader.read()
    stop.abort()
    expect(await cancel).toBe(`${base}/v1/turns/${turnId}/cancel`)
    await reader.cancel()
    expect(sent[1]!.headers["authorization"]).toBe(`Bearer ${token(1)}`)
  }, timeout)

  it("names the running turn of a thread that refused another", async () => {
    const { fetch } = scripted([
      () => Response.json({ error: { code: "turn_running", message: "a turn runs", turnId: "t-9" } }, { status: 409 })
    ])
    expect(await submit(transportOn(fetch), [user("u1", "Hi")]).catch((thrown: unknown) => thrown)).toMatchObject({
      code: "turn_running",
      status: 409,
      turnId: "t-9"
    })
  }, timeout)

  it("refuses a thread id the server would refuse, and thread calls outside thread mode", async () => {
    expect(() => new SluiceChatTransport({ thread: { id: "a/b" } })).toThrow(/thread.id: a thread id is 1 to 128/)
    const plain = new SluiceChatTransport({ storage: memoryStorage() })
    expect(await plain.loadMessages().catch((thrown: unknown) => thrown)).toMatchObject({ code: "not_thread_mode" })
  }, timeout)
})

describe("followThread", () => {
  const event = (id: string, value: ThreadEvent) =>
    `id: ${id}\nevent: ${value.type}\ndata: ${JSON.stringify(value)}\n\n`
  const startedBy = (id: string, message?: UIMessage): ThreadEvent => ({
    type: "turn_started",
    turnId: id,
    parentId: null,
    prefix: "sluice",
    input: { ...(message === undefined ? {} : { message }), toolResults: [], approvals: [] },
    at: 1
  })
  const events = (pieces: ReadonlyArray<string>, fail = false): Reply => () =>
    new Response(body([": connected\n\n", ...pieces], fail), { headers: { "content-type": "text/event-stream" } })

  it("reports the turns others started, after the thread's last event, resuming where it broke off", async () => {
    const { fetch, sent } = scripted([
      () => Response.json(threadJson()),
      startedTurn("own"),
      events(
        [event("6-0", startedBy("own", user("u2", "mine"))), event("7-0", startedBy("other", user("u3", "B")))],
        true
      ),
      () => Response.json({ error: { code: "redis_unavailable", message: "later" } }, { status: 503 }),
      events([
        event("8-0", { type: "turn_ended", turnId: "other", end: { status: "completed" }, at: 2 }),
        "event: future_event\ndata: {\"type\":\"future_event\"}\n\n",
        event("9-0", { type: "thread_deleted", at: 3 })
      ])
    ])
    const transport = transportOn(fetch)
    await transport.loadThread()
    await collect(await submit(transport, [user("u2", "mine")]))
    const seen: Array<string> = []
    const others: Array<unknown> = []
    await transport.followThread({
      onEvent: (value, id) => void seen.push(`${id} ${value.type}`),
      onTurnStarted: (turn) => void others.push(turn)
    })
    expect(seen).toStrictEqual(["6-0 turn_started", "7-0 turn_started", "8-0 turn_ended", "9-0 thread_deleted"])
    expect(others).toStrictEqual([{ turnId: "other", message: user("u3", "B") }])
    expect(sent.slice(2).map((request) => [request.url, request.headers["last-event-id"]])).toStrictEqual([
      [`${base}/v1/threads/${threadId}/events`, "5-0"],
      [`${base}/v1/threads/${threadId}/events`, "7-0"],
      [`${base}/v1/threads/${threadId}/events`, "7-0"]
    ])
  }, timeout)

  it("resumes the turn it reported even when it ended before the resume, once", async () => {
    const { fetch, sent } = scripted([
      events([event("6-0", startedBy("other", user("u3", "B"))), event("7-0", { type: "thread_deleted", at: 3 })]),
      () => Response.json(threadJson()), // no running turn: it ended meanwhile
      () => new Response(body(turnFrames), { headers: uiHeaders }),
      () => Response.json(threadJson())
    ])
    const transport = transportOn(fetch)
    await transport.followThread({ after: "5-0", onTurnStarted: () => undefined })
    expect(await collect((await transport.reconnectToStream({ chatId: "c" }))!)).toStrictEqual(chunks)
    expect(sent[2]!.url).toBe(`${base}/v1/turns/other/ui-message-stream`)
    expect(await transport.reconnectToStream({ chatId: "c" })).toBeNull()
  }, timeout)

  const notFound: Reply = () => Response.json({ error: { code: "thread_not_found", message: "no" } }, { status: 404 })

  it("waits for a thread not started yet, and gives up on a refusal", async () => {
    const { fetch, sent } = scripted([
      notFound, // loadThread: none yet, so from the start
      notFound,
      events([
        event("0-1", { type: "thread_created", threadId, at: 1 }),
        event("1-0", { type: "thread_deleted", at: 2 })
      ]),
      () => Response.json({ error: { code: "forbidden", message: "another thread" } }, { status: 403 })
    ])
    const transport = transportOn(fetch)
    await transport.followThread()
    expect(sent.slice(1, 3).map((request) => request.headers["last-event-id"])).toStrictEqual([undefined, undefined])
    expect(await transport.followThread({ after: "1-0" }).catch((thrown: unknown) => thrown)).toMatchObject({
      code: "forbidden"
    })
  }, timeout)

  it("ends on thread_not_found once the thread was followed (its deletion missed)", async () => {
    const { fetch, sent } = scripted([
      events([event("6-0", startedBy("other"))], true),
      notFound, // deleted while the stream was down: its thread_deleted never read
      notFound
    ])
    const transport = transportOn(fetch)
    // (was: retried for good)
    await transport.followThread({ after: "5-0" })
    expect(sent.map((request) => request.headers["last-event-id"])).toStrictEqual(["5-0", "6-0"])
  }, timeout)

  it("waits for a thread's creation at most waitForCreationMs, by the transport's now", async () => {
    let clock = 0
    const { fetch, sent } = scripted([notFound, notFound, notFound, notFound, notFound])
    const transport = new SluiceChatTransport({
      baseUrl: base,
      fetch,
      storage: memoryStorage(),
      sleep: () => Promise.resolve(void (clock += 400)),
      random: () => 0,
      now: () => clock,
      thread: { id: threadId, token: token(1) }
    })
    // (was: waited for good)
    expect(await transport.followThread({ waitForCreationMs: 1_000 }).catch((thrown: unknown) => thrown))
      .toMatchObject({ code: "thread_not_found" })
    // loadThread, then tries at 0, 400, 800 and 1200 (past the wait)
    expect(sent.length).toBe(5)
  }, timeout)

  it("marks the results another tab sent answered (toolCallIds), and sends them no more", async () => {
    const sentByOther: ThreadEvent = {
      type: "turn_started",
      turnId: "t-other",
      parentId: "t-1",
      prefix: "sluice",
      input: {
        toolResults: [{ callId: "toolu_01", name: "get_weather", output: "{\"temperature\":3}" }],
        approvals: [],
        toolCallIds: ["call-1"]
      },
      at: 1
    }
    const { fetch, sent } = scripted([
      events([event("6-0", sentByOther), event("7-0", { type: "thread_deleted", at: 2 })]),
      startedTurn()
    ])
    const transport = transportOn(fetch)
    await transport.followThread({ after: "5-0" })
    const answered = [user("u1", "Weather in Oslo?"), called("output-available")]
    // (was: the results sent again, which the server refuses)
    expect(await submit(transport, answered).catch((thrown: unknown) => thrown)).toMatchObject({
      code: "invalid_request"
    })
    await collect(await submit(transport, [...answered, user("u2", "Thanks")]))
    expect(sent[1]!.body).toStrictEqual({ message: user("u2", "Thanks") })
  }, timeout)
})

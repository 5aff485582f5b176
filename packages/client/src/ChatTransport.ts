/**
 * `useChat` on Sluice: a `ChatTransport` for the AI SDK (`ai` 7) that starts each
 * turn on the turn server (`POST /v1/turns`) and reads it as the AI SDK's UI message
 * stream, resuming where the chat left off.
 *
 * - `sendMessages` maps the chat's UI messages to the turn request's messages
 *   (`toTurnConversation`), adds the app's fields (provider, model, tools, ...), and
 *   returns the started turn's chunks. The turn's id (header `x-sluice-turn-id`) and
 *   the last event applied are kept per chat in a `ChatTurnStorage`
 *   (`sessionStorage` when the page has one, else memory).
 * - Each frame that ends an event's chunks names the event (`id:`). The transport
 *   hands the chat an event's chunks only once that frame has arrived, so what it
 *   handed out always ends on an event; when the connection drops mid-turn it opens
 *   `GET /v1/turns/:turnId/ui-message-stream` with `Last-Event-ID` and goes on with
 *   the chunks after it, in the same stream (the chat sees no break), with backoff.
 * - `reconnectToStream` (`useChat`'s `resume`) finds the chat's turn in the storage:
 *   `null` when there is none. After a disconnect this transport reported (the chat
 *   kept its partial message) it continues after the last event handed out; else (a
 *   reloaded page, a new chat object) it replays the turn from its start, which the
 *   chat folds into a fresh message (`resumeStreamIsReplay`: a continuation holds no
 *   `start` chunk, so the chat keeps its state then).
 * - Stopping (the chat's abort signal) cancels the turn on the server
 *   (`POST /v1/turns/:turnId/cancel`), or with `onStop: "detach"` only stops reading.
 *   Once the turn's end is read, the chat's turn is forgotten.
 * - Thread mode (`thread: { id, token }`, docs/threads.md#browser): the server keeps
 *   the conversation. `loadMessages` gives the chat its messages; each send is
 *   `POST /v1/threads/:threadId/turns` with only what is new (the user's message, the
 *   results of the tool calls the chat answered, or `regenerate: true`);
 *   `reconnectToStream` reattaches to the thread's running turn, whichever tab or
 *   device started it; `followThread` tells the app of the turns started elsewhere. The
 *   thread token is sent on every request, asked for again when it expires or the
 *   server answers 401.
 *
 * @since 0.3.0
 */
import { isThreadId, threadIdRule, threadTokenExpiresAt } from "@sluice/core/ThreadId"
import type { ChatTransport, UIMessage, UIMessageChunk } from "ai"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import { ClientError, fromResponse, fromThrown } from "./ClientError.js"
import { apiUrl, turnUrl } from "./internal/http.js"
import { platformSleep } from "./internal/sleep.js"
import {
  answeredCalls,
  isThreadEvent,
  isThreadSnapshot,
  isUIMessage,
  newInput,
  type RunningTurn,
  type ThreadEvent,
  type ThreadSnapshot,
  type ThreadToolResult
} from "./internal/thread.js"
import {
  toTurnConversation,
  type TurnAssistantPart,
  type TurnConversation,
  type TurnMessage,
  type TurnToolResult
} from "./internal/turnMessages.js"
import * as Reconnect from "./Reconnect.js"

export type {
  /**
   * @since 0.3.0
   */
  RunningTurn,
  /**
   * @since 0.3.0
   */
  ThreadEvent,
  /**
   * @since 0.3.0
   */
  ThreadSnapshot,
  /**
   * @since 0.3.0
   */
  ThreadToolResult,
  /**
   * @since 0.3.0
   */
  TurnAssistantPart,
  /**
   * @since 0.3.0
   */
  TurnConversation,
  /**
   * @since 0.3.0
   */
  TurnMessage,
  /**
   * @since 0.3.0
   */
  TurnToolResult
}

/**
 * A chat's UI messages as a turn request's conversation: a user message's text parts
 * as user text; an assistant message step by step (its `step-start` parts), each its
 * text and tool calls, then a tool message with the calls' results (an output as its
 * JSON text, an error or a denial as an error result); system messages' text as the
 * request's `system`. Left out: files, sources, data and custom parts,
 * provider-executed calls (the provider's own items are not in a UI message), calls
 * without a result, reasoning (unless `reasoning: true`: a UI message holds no
 * reasoning signature, which some providers ask for) and provider metadata.
 *
 * @since 0.3.0
 * @category messages
 */
export { toTurnConversation }

/**
 * The header that names a started turn.
 *
 * @since 0.3.0
 * @category constants
 */
export const turnIdHeader = "x-sluice-turn-id"

/**
 * A thread token, or what gives a fresh one (the app's backend route that mints it):
 * called for the first request, again once the token it gave expires (a thread
 * token's `expiresAt`), and again when the server answers 401.
 *
 * @since 0.3.0
 * @category models
 */
export type ThreadTokenSource = string | (() => string | Promise<string>)

/**
 * The fields of a thread turn request other than its input (`ThreadInput.TurnRequest`
 * of `@sluice/core`): `model`, `provider` and `tools` (names), each within what the
 * server allows. These are all the server takes: the transport sends only these three
 * (from `thread.body`, then a request's own `body`), never any other field.
 *
 * @since 0.3.0
 * @category models
 */
export interface ThreadTurnFields {
  readonly model?: string | undefined
  readonly provider?: string | undefined
  readonly tools?: ReadonlyArray<string> | undefined
}

const threadFieldNames = ["model", "provider", "tools"] as const

// The fields of a thread turn the server takes, from what the app gave.
const threadFields = (...given: ReadonlyArray<object | undefined>): Record<string, unknown> => {
  const fields: Record<string, unknown> = {}
  for (const source of given) {
    for (const name of threadFieldNames) {
      const value: unknown = source === undefined ? undefined : Reflect.get(source, name)
      if (value !== undefined) fields[name] = value
    }
  }
  return fields
}

/**
 * Thread mode: `id` the thread (the server creates it with its first turn), `token` a
 * thread token (`ThreadToken.mint` on the app's backend) or a function that gives one,
 * `body` the request's fields (a function is called for every send).
 *
 * @since 0.3.0
 * @category models
 */
export interface ThreadOptions {
  readonly id: string
  readonly token?: ThreadTokenSource | undefined
  readonly body?: Lazy<ThreadTurnFields> | undefined
}

/**
 * A turn of the thread that another tab, device or backend started: its id and the
 * user's message it started from (none for a turn of tool results or a
 * regeneration).
 *
 * @since 0.3.0
 * @category models
 */
export interface ThreadTurnStarted {
  readonly turnId: string
  readonly message: UIMessage | undefined
}

/**
 * What `followThread` calls: `onEvent` for each event of the thread's log (with its
 * entry id), `onTurnStarted` for each turn this transport did not start (the app loads
 * the messages and resumes the chat's stream: docs/threads.md#browser). `after` is the
 * entry id to follow after (default: the thread's last event when `followThread` is
 * called, or what `loadThread` read); `signal` ends the following.
 * `waitForCreationMs` (default 10 minutes, by the transport's `now`) is how long a
 * thread not started yet is waited for before `followThread` rejects with
 * `thread_not_found`.
 *
 * @since 0.3.0
 * @category models
 */
export interface FollowThreadOptions {
  readonly onEvent?: ((event: ThreadEvent, id: string) => void | Promise<void>) | undefined
  readonly onTurnStarted?: ((turn: ThreadTurnStarted) => void | Promise<void>) | undefined
  readonly after?: string | undefined
  readonly signal?: AbortSignal | undefined
  readonly waitForCreationMs?: number | undefined
}

/**
 * A chat's running turn as the transport remembers it: its id, and the last event
 * whose chunks it handed to the chat (an entry id or an event id, as the frames name
 * them).
 *
 * @since 0.3.0
 * @category models
 */
export interface ActiveTurn {
  readonly turnId: string
  readonly lastEventId?: string | undefined
}

/**
 * Where the transport keeps each chat's running turn, by chat id: synchronous or not.
 *
 * @since 0.3.0
 * @category storage
 */
export interface ChatTurnStorage {
  readonly get: (chatId: string) => ActiveTurn | undefined | Promise<ActiveTurn | undefined>
  readonly set: (chatId: string, turn: ActiveTurn) => void | Promise<void>
  readonly remove: (chatId: string) => void | Promise<void>
}

/**
 * A storage in this object's memory: lost with the page.
 *
 * @since 0.3.0
 * @category storage
 */
export const memoryStorage = (): ChatTurnStorage => {
  const turns = new Map<string, ActiveTurn>()
  return {
    get: (chatId) => turns.get(chatId),
    set: (chatId, turn) => void turns.set(chatId, turn),
    remove: (chatId) => void turns.delete(chatId)
  }
}

const isActiveTurn = (value: unknown): value is ActiveTurn =>
  typeof value === "object" && value !== null && "turnId" in value && typeof value.turnId === "string" &&
  (!("lastEventId" in value) || value.lastEventId === undefined || typeof value.lastEventId === "string")

/**
 * A storage in a Web Storage (`sessionStorage`, `localStorage`), as JSON under
 * `<keyPrefix><chatId>`: a reloaded page finds its chats' turns there. A value that
 * is not a turn reads as none; a storage that refuses a write (full, disabled) is
 * left as it was.
 *
 * @since 0.3.0
 * @category storage
 */
export const webStorage = (storage: WebStorage, keyPrefix = "sluice-chat-turn:"): ChatTurnStorage => ({
  get: (chatId) => {
    try {
      const text = storage.getItem(keyPrefix + chatId)
      const value: unknown = text === null ? undefined : JSON.parse(text)
      return isActiveTurn(value) ? { turnId: value.turnId, lastEventId: value.lastEventId } : undefined
    } catch {
      return undefined
    }
  },
  set: (chatId, turn) => {
    try {
      storage.setItem(keyPrefix + chatId, JSON.stringify(turn))
    } catch {
      // a full or disabled storage: the turn is not found after a reload
    }
  },
  remove: (chatId) => {
    try {
      storage.removeItem(keyPrefix + chatId)
    } catch {
      // as above
    }
  }
})

/**
 * `sessionStorage` when the environment has a usable one (a browser tab), else a
 * storage in memory.
 *
 * @since 0.3.0
 * @category storage
 */
export const defaultStorage = (): ChatTurnStorage => {
  try {
    const session: unknown = Reflect.get(globalThis, "sessionStorage")
    if (isWebStorage(session)) {
      session.getItem("sluice-chat-turn:")
      return webStorage(session)
    }
  } catch {
    // no access to it (a sandboxed frame)
  }
  return memoryStorage()
}

/**
 * A tool the model may call: `parameters` is a JSON Schema object.
 *
 * @since 0.3.0
 * @category models
 */
export interface TurnTool {
  readonly name: string
  readonly description?: string | undefined
  readonly parameters?: Readonly<Record<string, unknown>> | undefined
}

/**
 * The fields of a turn request other than its messages (`TurnRequestBody` on the
 * server: `provider`, `model`, `system`, `tools`, `temperature`, `maxTokens`,
 * `reasoning`, `threadId`), plus whatever else the server's `TurnStarter` reads.
 *
 * @since 0.3.0
 * @category models
 */
export interface TurnRequestFields {
  readonly provider?: string | undefined
  readonly model?: string | undefined
  readonly system?: string | undefined
  readonly tools?: ReadonlyArray<TurnTool> | undefined
  readonly temperature?: number | undefined
  readonly maxTokens?: number | undefined
  readonly threadId?: string | undefined
  readonly [field: string]: unknown
}

/**
 * What `prepareSendMessagesRequest` is given: the chat, its messages, why it sends,
 * and the request as the transport would send it.
 *
 * @since 0.3.0
 * @category models
 */
export interface SendMessagesRequest<UI_MESSAGE extends UIMessage> {
  readonly chatId: string
  readonly messages: ReadonlyArray<UI_MESSAGE>
  readonly trigger: "submit-message" | "regenerate-message"
  readonly messageId: string | undefined
  readonly requestMetadata: unknown
  /** The body: the app's fields, the call's `body`, the mapped messages and `system`. */
  readonly body: TurnRequestFields & { readonly messages: ReadonlyArray<TurnMessage> }
  /** The headers: the transport's, the call's, and `authorization` for `token`. */
  readonly headers: Readonly<Record<string, string>>
}

/**
 * What `prepareReconnectToStreamRequest` is given.
 *
 * @since 0.3.0
 * @category models
 */
export interface ReconnectRequest {
  readonly chatId: string
  readonly turnId: string
  readonly requestMetadata: unknown
  readonly headers: Readonly<Record<string, string>>
}

type Lazy<A> = A | (() => A | Promise<A>)

/**
 * Headers as `fetch` takes them.
 *
 * @since 0.3.0
 * @category models
 */
export type HeadersInit = ConstructorParameters<typeof Headers>[0]

/**
 * The part of a Web Storage (`sessionStorage`, `localStorage`) the transport uses.
 *
 * @since 0.3.0
 * @category storage
 */
export interface WebStorage {
  readonly getItem: (key: string) => string | null
  readonly setItem: (key: string, value: string) => void
  readonly removeItem: (key: string) => void
}

const isWebStorage = (value: unknown): value is WebStorage =>
  typeof value === "object" && value !== null && "getItem" in value && typeof value.getItem === "function" &&
  "setItem" in value && typeof value.setItem === "function" && "removeItem" in value &&
  typeof value.removeItem === "function"

/**
 * The transport's options. `baseUrl` is the server's address (the page's own origin
 * when empty, the default); `body` the request's fields (at least `provider` and
 * `model` for `sluice serve`'s starter); `token` a bearer token; `headers` more
 * headers; each may be a function, called for every request.
 * `prepareSendMessagesRequest` may replace the body or the headers of a start,
 * `prepareReconnectToStreamRequest` the headers of a reconnect. `toTurnConversation`
 * replaces the mapping of messages (`reasoning: true` keeps reasoning text in it).
 * `onStop` is what the chat's stop does to the turn (`"cancel"`, the default, or
 * `"detach"`); `reconnect` how a dropped stream is opened again (full jitter from
 * `baseMs` 500 to `maxMs` 5,000, `maxAttempts` 8 in a row, then the chat is told of a
 * disconnect and may resume); `startAttempts` (4) how many times a start the server
 * refused `at_capacity` is asked in all (nothing was started, so it cannot start
 * twice; each wait is the server's `Retry-After` plus up to as much again, then the
 * chat gets the `ClientError`, as it does when it stops during a wait; a value that is
 * not a positive integer is a `RangeError` here); `sleep` and `random` are the waits
 * and their jitter
 * (a wait ends early when the chat stops; tests pass their own, as to `followTurn`).
 * `thread` turns on thread mode (`body`, `token`, `toTurnConversation`, `reasoning`
 * and `prepareSendMessagesRequest` are then not used: the thread's own `body` and
 * `token` are).
 *
 * @since 0.3.0
 * @category models
 */
export interface SluiceChatTransportOptions<UI_MESSAGE extends UIMessage = UIMessage> {
  readonly baseUrl?: string | undefined
  readonly body?: Lazy<TurnRequestFields> | undefined
  readonly token?: Lazy<string | undefined> | undefined
  readonly headers?: Lazy<HeadersInit | undefined> | undefined
  readonly fetch?: typeof globalThis.fetch | undefined
  readonly credentials?: RequestInit["credentials"] | undefined
  readonly prepareSendMessagesRequest?:
    | ((request: SendMessagesRequest<UI_MESSAGE>) =>
      | { readonly body?: object | undefined; readonly headers?: HeadersInit | undefined }
      | undefined
      | Promise<{ readonly body?: object | undefined; readonly headers?: HeadersInit | undefined } | undefined>)
    | undefined
  readonly prepareReconnectToStreamRequest?:
    | ((request: ReconnectRequest) =>
      | { readonly headers?: HeadersInit | undefined }
      | undefined
      | Promise<{ readonly headers?: HeadersInit | undefined } | undefined>)
    | undefined
  readonly toTurnConversation?: ((messages: ReadonlyArray<UI_MESSAGE>) => TurnConversation) | undefined
  readonly reasoning?: boolean | undefined
  readonly storage?: ChatTurnStorage | undefined
  readonly onStop?: "cancel" | "detach" | undefined
  readonly reconnect?: Reconnect.ReconnectOptions | undefined
  readonly startAttempts?: number | undefined
  readonly sleep?: ((ms: number, signal: AbortSignal) => Promise<void>) | undefined
  readonly random?: (() => number) | undefined
  /** The time in ms since the epoch (default `Date.now`): thread tokens' expiry, waits. */
  readonly now?: (() => number) | undefined
  readonly thread?: ThreadOptions | undefined
}

// Sound for the values given here (fields, headers, a token), none of them a function.
const isThunk = <A>(value: Lazy<A>): value is () => A | Promise<A> => typeof value === "function"

const resolve = async <A>(value: Lazy<A>): Promise<A> => (isThunk(value) ? await value() : value)

const headerRecord = (init: HeadersInit | undefined): Record<string, string> => {
  const record: Record<string, string> = {}
  if (init !== undefined) new Headers(init).forEach((value, name) => (record[name] = value))
  return record
}

// The chunk types the turn server sends (`UiMessageStream.UiMessageChunk`).
const chunkTypes: ReadonlySet<string> = new Set([
  "start",
  "start-step",
  "text-start",
  "text-delta",
  "text-end",
  "reasoning-start",
  "reasoning-delta",
  "reasoning-end",
  "tool-input-start",
  "tool-input-delta",
  "tool-input-available",
  "tool-output-available",
  "tool-output-error",
  "source-url",
  "error",
  "finish-step",
  "finish",
  "abort"
])

// A chunk the server sent: checked for a known type; its fields are the server's.
const isChunk = (value: unknown): value is UIMessageChunk =>
  typeof value === "object" && value !== null && "type" in value && typeof value.type === "string" &&
  chunkTypes.has(value.type)

const parseChunk = (data: string): UIMessageChunk => {
  let value: unknown
  try {
    value = JSON.parse(data)
  } catch {
    throw new ClientError("unexpected_body", `a UI message stream frame is not JSON: ${data.slice(0, 80)}`)
  }
  if (!isChunk(value)) {
    throw new ClientError("unexpected_body", `a UI message stream frame is not a chunk: ${data.slice(0, 80)}`)
  }
  return value
}

// What the transport remembers of a chat in this page: the turn it follows, the last
// event it handed out, and whether its stream ended in a disconnect (the chat then
// keeps its partial message, and a resume continues it).
interface Followed {
  readonly turnId: string
  lastEventId: string | undefined
  disconnected: boolean
}

interface Following {
  readonly chatId: string
  readonly turnId: string
  readonly headers: Readonly<Record<string, string>>
  readonly signal: AbortSignal | undefined
  readonly abort: AbortController
  readonly followed: Followed
  /** The turn continues the chat's last assistant message (it sends tool results). */
  readonly continues?: boolean
}

// A continuation's `start` without its `messageId`: the chat then keeps adding to its
// last assistant message instead of pushing a copy of it under the new id.
const continued = (chunk: UIMessageChunk): UIMessageChunk =>
  chunk.type === "start" && chunk.messageId !== undefined
    ? { type: "start", ...(chunk.messageMetadata === undefined ? {} : { messageMetadata: chunk.messageMetadata }) }
    : chunk

type FetchInit = {
  readonly method: string
  readonly headers: Record<string, string>
  readonly body?: string
  readonly signal: AbortSignal | undefined
}

/**
 * The AI SDK's `ChatTransport` on the turn server. `new SluiceChatTransport({ body:
 * { provider: "anthropic", model: "claude-sonnet-4-5" }, token })` and `useChat({
 * transport, resume: true })`.
 *
 * @since 0.3.0
 * @category transport
 */
export class SluiceChatTransport<UI_MESSAGE extends UIMessage = UIMessage> implements ChatTransport<UI_MESSAGE> {
  /**
   * A reconnect that does not continue this transport's own stream replays the turn
   * from its start; a continuation holds no `start` chunk, so the chat keeps its
   * message then.
   *
   * @since 0.3.0
   */
  readonly resumeStreamIsReplay = true
  readonly #options: SluiceChatTransportOptions<UI_MESSAGE>
  readonly #storage: ChatTurnStorage
  readonly #chats = new Map<string, Followed>()
  // thread mode: the token in use, the calls whose result the server has, the turns
  // this transport started (and the starts under way), the last thread event read
  #token: Promise<string | undefined> | undefined
  readonly #answered = new Set<string>()
  readonly #own = new Set<string>()
  readonly #starting = new Set<Promise<unknown>>()
  #threadEventId: string | undefined
  // the last turn `onTurnStarted` reported, for the resume that follows it
  #elsewhere: string | undefined

  constructor(options: SluiceChatTransportOptions<UI_MESSAGE> = {}) {
    const attempts = options.startAttempts
    if (attempts !== undefined && !(Number.isSafeInteger(attempts) && attempts >= 1)) {
      throw new RangeError(`startAttempts must be a positive integer, got ${attempts}`)
    }
    if (options.thread !== undefined && !isThreadId(options.thread.id)) {
      throw new RangeError(`thread.id: ${threadIdRule}, got ${JSON.stringify(options.thread.id)}`)
    }
    this.#options = options
    this.#storage = options.storage ?? defaultStorage()
  }

  /**
   * Starts a turn with the chat's messages (`POST /v1/turns`) and returns its chunks.
   *
   * @since 0.3.0
   */
  async sendMessages(options: Parameters<ChatTransport<UI_MESSAGE>["sendMessages"]>[0]): Promise<
    ReadableStream<UIMessageChunk>
  > {
    if (this.#options.thread !== undefined) return this.#sendToThread(options, this.#options.thread)
    const fields = await resolve(this.#options.body ?? {})
    const conversation = (this.#options.toTurnConversation ??
      ((messages: ReadonlyArray<UI_MESSAGE>) => toTurnConversation(messages, { reasoning: this.#options.reasoning })))(
        options.messages
      )
    const system = [fields.system, conversation.system].filter((text) => text !== undefined && text !== "")
    const body = {
      ...fields,
      ...options.body,
      ...(system.length === 0 ? {} : { system: system.join("\n\n") }),
      messages: conversation.messages
    }
    const headers = await this.#headers(options.headers)
    const prepared = await this.#options.prepareSendMessagesRequest?.({
      chatId: options.chatId,
      messages: options.messages,
      trigger: options.trigger,
      messageId: options.messageId,
      requestMetadata: options.metadata,
      body,
      headers
    })
    const sentHeaders = prepared?.headers === undefined ? headers : headerRecord(prepared.headers)
    const response = await this.#start(apiUrl(this.#options.baseUrl ?? "", "/v1/turns"), {
      method: "POST",
      headers: { "content-type": "application/json", ...sentHeaders },
      body: JSON.stringify(prepared?.body ?? body),
      signal: options.abortSignal
    })
    return this.#begin(options.chatId, sentHeaders, options.abortSignal, response, false)
  }

  // The started turn's chunks, remembered for the chat.
  async #begin(
    chatId: string,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
    response: Response,
    continues: boolean
  ): Promise<ReadableStream<UIMessageChunk>> {
    const turnId = response.headers.get(turnIdHeader)
    if (turnId === null || turnId === "") {
      await response.body?.cancel().catch(() => undefined)
      throw new ClientError("unexpected_body", `the server's answer names no turn (${turnIdHeader})`, response.status)
    }
    const followed: Followed = { turnId, lastEventId: undefined, disconnected: false }
    this.#chats.set(chatId, followed)
    await this.#storage.set(chatId, { turnId })
    return this.#stream(
      { chatId, turnId, headers, signal, abort: new AbortController(), followed, continues },
      response
    )
  }

  // Thread mode: only what is new (the user's message, the results of the calls the
  // chat answered, or `regenerate: true`) to `POST /v1/threads/:threadId/turns`.
  async #sendToThread(
    options: Parameters<ChatTransport<UI_MESSAGE>["sendMessages"]>[0],
    thread: ThreadOptions
  ): Promise<ReadableStream<UIMessageChunk>> {
    const regenerate = options.trigger === "regenerate-message"
    const input = regenerate ? { message: undefined, toolResults: [] } : newInput(options.messages, this.#answered)
    if (!regenerate && input.message === undefined && input.toolResults.length === 0) {
      throw new ClientError(
        "invalid_request",
        "nothing new to send: the chat's last message is not the user's, and no tool call of the last step has an " +
          "output the server does not have"
      )
    }
    const body = {
      ...threadFields(await resolve(thread.body ?? {}), options.body),
      ...(regenerate ? { regenerate: true } : {}),
      ...(input.message === undefined ? {} : { message: input.message }),
      ...(input.toolResults.length === 0 ? {} : { toolResults: input.toolResults })
    }
    const headers = await this.#headers(options.headers)
    this.#elsewhere = undefined
    const response = this.#start(this.#threadUrl(thread, "/turns"), {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
      signal: options.abortSignal
    })
    // a follower that reads this turn's `turn_started` first waits for its id
    const started = response.then((answer) => answer.headers.get(turnIdHeader), () => null)
    this.#starting.add(started)
    try {
      const answer = await response
      const turnId = answer.headers.get(turnIdHeader)
      if (turnId !== null) this.#own.add(turnId)
      for (const result of input.toolResults) this.#answered.add(result.toolCallId)
      const continues = !regenerate && options.messages.at(-1)?.role === "assistant"
      return await this.#begin(options.chatId, headers, options.abortSignal, answer, continues)
    } finally {
      this.#starting.delete(started)
    }
  }

  #threadUrl(thread: ThreadOptions, suffix: string): string {
    return apiUrl(this.#options.baseUrl ?? "", `/v1/threads/${encodeURIComponent(thread.id)}${suffix}`)
  }

  /**
   * Thread mode: the thread as the server has it (`GET /v1/threads/:threadId`): its
   * messages (the current branch as UI messages), its running turn, its last event;
   * `undefined` for a thread not started yet. Rejects with a `ClientError` otherwise
   * (`forbidden` for a token of another thread, `network`, ...), and outside thread
   * mode.
   *
   * @since 0.3.0
   */
  async loadThread(options: { readonly signal?: AbortSignal | undefined } = {}): Promise<
    ThreadSnapshot | undefined
  > {
    const thread = this.#threadOptions("loadThread")
    let response: Response
    try {
      response = await this.#fetch(this.#threadUrl(thread, ""), {
        method: "GET",
        headers: await this.#headers(undefined),
        signal: options.signal
      })
    } catch (error) {
      if (error instanceof ClientError && error.code === "thread_not_found") return undefined
      throw error
    }
    let value: unknown
    try {
      value = await response.json()
    } catch {
      throw new ClientError("unexpected_body", "the thread's answer is not JSON", response.status)
    }
    if (!isThreadSnapshot(value)) {
      throw new ClientError("unexpected_body", "the server sent something that is not a thread", response.status)
    }
    for (const id of answeredCalls(value.messages)) this.#answered.add(id)
    this.#threadEventId = value.lastEventId
    return value
  }

  /**
   * Thread mode: the thread's messages, for `useChat`'s `messages` (`[]` for a thread
   * not started yet). A running turn's user message is there; its answer comes from
   * `resume: true` (`reconnectToStream`).
   *
   * @since 0.3.0
   */
  async loadMessages(options: { readonly signal?: AbortSignal | undefined } = {}): Promise<Array<UIMessage>> {
    return [...((await this.loadThread(options))?.messages ?? [])]
  }

  #threadOptions(what: string): ThreadOptions {
    if (this.#options.thread === undefined) {
      throw new ClientError("not_thread_mode", `${what} needs thread mode: new SluiceChatTransport({ thread })`)
    }
    return this.#options.thread
  }

  /**
   * Thread mode: follows the thread's events (`GET /v1/threads/:threadId/events`,
   * resuming with `Last-Event-ID` and backoff when the stream drops, waiting for a
   * thread not started yet, at most `waitForCreationMs`) and calls `onEvent` for each,
   * `onTurnStarted` for each turn another tab, device or backend started. Resolves when
   * `signal` aborts or the thread is deleted (its `thread_deleted` read, or
   * `thread_not_found` once it was followed); rejects with a `ClientError` the server
   * will not answer otherwise (`forbidden`, `unauthorized` after a fresh token,
   * `thread_not_found` when the wait for its creation is over).
   *
   * @since 0.3.0
   */
  async followThread(options: FollowThreadOptions = {}): Promise<void> {
    const thread = this.#threadOptions("followThread")
    const signal = options.signal ?? new AbortController().signal
    const reconnect = { ...Reconnect.defaults, ...this.#options.reconnect, maxAttempts: Infinity }
    const sleep = this.#options.sleep ?? platformSleep
    const random = this.#options.random ?? Math.random
    const now = this.#options.now ?? Date.now
    let after = options.after ?? this.#threadEventId ?? (await this.loadThread({ signal }))?.lastEventId
    const waitUntil = now() + (options.waitForCreationMs ?? 600_000)
    let failures = 0
    while (!signal.aborted) {
      let response: Response
      try {
        response = await this.#fetch(this.#threadUrl(thread, "/events"), {
          method: "GET",
          headers: {
            ...(await this.#headers(undefined)),
            accept: "text/event-stream",
            ...(after === undefined ? {} : { "last-event-id": after })
          },
          signal
        })
      } catch (error) {
        const failure = fromThrown(error)
        if (signal.aborted) return
        if (failure.code === "thread_not_found") {
          // a thread followed before: deleted (its `thread_deleted` missed)
          if (after !== undefined) return
          // a thread not started yet: its first turn creates it, waited for a while
          if (now() >= waitUntil) throw failure
        } else if (!failure.retryable) {
          throw failure
        }
        await sleep(Reconnect.delayMs(failures++, reconnect, random), signal)
        continue
      }
      const frames: Array<EventSourceMessage> = []
      const parser = createParser({ onEvent: (frame) => frames.push(frame) })
      const reader = response.body?.getReader()
      const decoder = new TextDecoder()
      try {
        reading: while (reader !== undefined) {
          const read = await reader.read()
          if (read.done) break
          parser.feed(decoder.decode(read.value, { stream: true }))
          while (frames.length > 0) {
            const frame = frames.shift()!
            // `server_closing`, `stream_error`: the server goes away, or could not go on
            if (frame.event === "server_closing" || frame.event === "stream_error") break reading
            let value: unknown
            try {
              value = JSON.parse(frame.data)
            } catch {
              throw new ClientError("unexpected_body", `a thread event is not JSON: ${frame.data.slice(0, 80)}`)
            }
            // an event of a later server: skipped
            if (!isThreadEvent(value) || frame.id === undefined) continue
            after = frame.id
            failures = 0
            await this.#threadEvent(value, frame.id, options)
            if (value.type === "thread_deleted") return
          }
        }
      } catch (error) {
        if (error instanceof ClientError && error.code === "unexpected_body") throw error
        if (signal.aborted) return
        // the stream broke off: opened again after the last event read
      } finally {
        await reader?.cancel().catch(() => undefined)
      }
      if (signal.aborted) return
      await sleep(Reconnect.delayMs(failures++, reconnect, random), signal)
    }
  }

  async #threadEvent(event: ThreadEvent, id: string, options: FollowThreadOptions): Promise<void> {
    this.#threadEventId = id
    if (event.type === "turn_started") {
      // the calls as the sending tab named them (a stored result names the provider's call)
      for (const id of event.input.toolCallIds ?? []) this.#answered.add(id)
    }
    await options.onEvent?.(event, id)
    if (event.type !== "turn_started" || options.onTurnStarted === undefined) return
    // a start of this transport under way may be this turn's
    await Promise.all(this.#starting)
    const followed = [...this.#chats.values()].some((chat) => chat.turnId === event.turnId)
    if (this.#own.has(event.turnId) || followed) return
    this.#elsewhere = event.turnId
    await options.onTurnStarted({
      turnId: event.turnId,
      message: isUIMessage(event.input.message) ? event.input.message : undefined
    })
  }

  /**
   * Resumes the chat's running turn: `null` when the chat has none. After a
   * disconnect of this transport's own stream, the chunks after the last event it
   * handed out; else the turn from its start. In thread mode, the thread's running
   * turn, whoever started it, or else the turn `followThread` reported last (once).
   *
   * @since 0.3.0
   */
  async reconnectToStream(
    options: Parameters<ChatTransport<UI_MESSAGE>["reconnectToStream"]>[0]
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    let turnId: string
    if (this.#options.thread !== undefined) {
      // the thread's running turn, whoever started it
      // the thread's running turn, or the turn `followThread` reported last when it
      // ended meanwhile (replayed: the chat replaces the message it loaded by its id)
      const running = (await this.loadThread({ signal: options.abortSignal }))?.running?.turnId ?? this.#elsewhere
      this.#elsewhere = undefined
      if (running === undefined) return null
      turnId = running
    } else {
      const stored = await this.#storage.get(options.chatId)
      if (stored === undefined) return null
      turnId = stored.turnId
    }
    return this.#reattach(options, turnId)
  }

  async #reattach(
    options: Parameters<ChatTransport<UI_MESSAGE>["reconnectToStream"]>[0],
    turnId: string
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    const known = this.#chats.get(options.chatId)
    const continues = known !== undefined && known.turnId === turnId && known.disconnected &&
      known.lastEventId !== undefined
    const followed: Followed = {
      turnId,
      lastEventId: continues ? known.lastEventId : undefined,
      disconnected: false
    }
    const headers = await this.#headers(options.headers)
    const prepared = await this.#options.prepareReconnectToStreamRequest?.({
      chatId: options.chatId,
      turnId,
      requestMetadata: options.metadata,
      headers
    })
    const following: Following = {
      chatId: options.chatId,
      turnId,
      headers: prepared?.headers === undefined ? headers : headerRecord(prepared.headers),
      signal: options.abortSignal,
      abort: new AbortController(),
      followed
    }
    let response: Response
    try {
      response = await this.#open(following)
    } catch (error) {
      if (error instanceof ClientError && error.code === "turn_not_found") {
        await this.#forget(following)
        return null
      }
      throw error
    }
    this.#chats.set(options.chatId, followed)
    return this.#stream(following, response)
  }

  async #headers(call: HeadersInit | undefined): Promise<Record<string, string>> {
    // thread mode: the thread token, set by `#fetch` on each request
    const token = this.#options.thread === undefined ? await resolve(this.#options.token) : undefined
    return {
      ...headerRecord(await resolve(this.#options.headers)),
      ...headerRecord(call),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
    }
  }

  // `POST /v1/turns`, asked again while the server refuses it `at_capacity`: nothing
  // was started, so another try cannot start the turn twice. Each wait is the server's
  // `Retry-After` (1 s when it names none) plus up to as much again, so that chats
  // refused together do not all come back at once.
  async #start(url: string, init: FetchInit & { readonly body: string }): Promise<Response> {
    const attempts = this.#options.startAttempts ?? 4
    const sleep = this.#options.sleep ?? platformSleep
    const random = this.#options.random ?? Math.random
    for (let attempt = 1;; attempt++) {
      try {
        return await this.#fetch(url, init)
      } catch (error) {
        if (!(error instanceof ClientError && error.code === "at_capacity") || attempt >= attempts) throw error
        const wait = error.retryAfterMs ?? 1000
        await sleep(Math.round(wait * (1 + random())), init.signal ?? new AbortController().signal)
        if (init.signal?.aborted === true) throw error
      }
    }
  }

  // Thread mode: the request with the thread token, asked for again (and the request
  // sent again once) when the server answers 401 and the token is a function's.
  async #fetch(url: string, init: FetchInit): Promise<Response> {
    const source = this.#options.thread?.token
    if (source === undefined) return this.#fetchOnce(url, init)
    const token = await this.#threadToken(source, false)
    const authorized = (value: string | undefined): FetchInit => ({
      ...init,
      headers: { ...init.headers, ...(value === undefined ? {} : { authorization: `Bearer ${value}` }) }
    })
    try {
      return await this.#fetchOnce(url, authorized(token))
    } catch (error) {
      if (!(error instanceof ClientError && error.status === 401 && typeof source === "function")) throw error
      return this.#fetchOnce(url, authorized(await this.#threadToken(source, true)))
    }
  }

  // The thread token: the one in use until it expires (or `fresh` is asked for).
  async #threadToken(source: ThreadTokenSource, fresh: boolean): Promise<string | undefined> {
    if (typeof source === "string") return source
    const current = this.#token === undefined ? undefined : await this.#token.catch(() => undefined)
    const expiresAt = current === undefined ? undefined : threadTokenExpiresAt(current)
    const now = this.#options.now ?? Date.now
    // a token that ends within the next 5 s is as good as expired
    if (fresh || current === undefined || (expiresAt !== undefined && expiresAt - 5_000 <= now())) {
      const next = Promise.resolve().then(source)
      this.#token = next
      return next
    }
    return current
  }

  async #fetchOnce(url: string, init: FetchInit): Promise<Response> {
    let response: Response
    try {
      response = await (this.#options.fetch ?? globalThis.fetch)(url, {
        method: init.method,
        headers: init.headers,
        ...(init.body === undefined ? {} : { body: init.body }),
        ...(this.#options.credentials === undefined ? {} : { credentials: this.#options.credentials }),
        ...(init.signal === undefined ? {} : { signal: init.signal })
      })
    } catch (thrown) {
      throw fromThrown(thrown)
    }
    if (!response.ok) {
      throw fromResponse(
        response.status,
        await response.json().catch(() => undefined),
        response.headers.get("retry-after")
      )
    }
    return response
  }

  // `GET /v1/turns/:turnId/ui-message-stream`, after the last event handed out if any.
  #open(following: Following): Promise<Response> {
    const resumeAt = following.followed.lastEventId
    return this.#fetch(turnUrl(this.#options.baseUrl ?? "", following.turnId, "/ui-message-stream"), {
      method: "GET",
      headers: { ...following.headers, ...(resumeAt === undefined ? {} : { "last-event-id": resumeAt }) },
      signal: following.abort.signal
    })
  }

  async #forget(following: Following): Promise<void> {
    if (this.#chats.get(following.chatId) === following.followed) this.#chats.delete(following.chatId)
    const stored = await this.#storage.get(following.chatId)
    if (stored?.turnId === following.turnId) await this.#storage.remove(following.chatId)
  }

  async #handedOut(following: Following, id: string): Promise<void> {
    following.followed.lastEventId = id
    // a chat that stopped has forgotten the turn (or kept it as it was, detached)
    if (following.abort.signal.aborted) return
    await this.#storage.set(following.chatId, { turnId: following.turnId, lastEventId: id })
  }

  // The chat stopped: the turn is cancelled (or, detached, left running and known).
  #stopped(following: Following): void {
    following.abort.abort()
    if (this.#options.onStop === "detach") return
    void this.#fetch(turnUrl(this.#options.baseUrl ?? "", following.turnId, "/cancel"), {
      method: "POST",
      headers: following.headers,
      signal: undefined
    }).then((response) => response.body?.cancel(), () => undefined)
    void this.#forget(following)
  }

  #stream(following: Following, first: Response): ReadableStream<UIMessageChunk> {
    const signal = following.signal
    let ended = false
    const onAbort = () => {
      if (!ended) this.#stopped(following)
    }
    if (signal?.aborted === true) onAbort()
    else signal?.addEventListener("abort", onAbort, { once: true })
    const chunks = this.#chunks(following, first)
    const finish = () => {
      ended = true
      signal?.removeEventListener("abort", onAbort)
    }
    return new ReadableStream<UIMessageChunk>({
      pull: async (controller) => {
        try {
          const next = await chunks.next()
          if (next.done === true) {
            finish()
            controller.close()
          } else {
            controller.enqueue(following.continues === true ? continued(next.value) : next.value)
          }
        } catch (error) {
          finish()
          controller.error(error)
        }
      },
      cancel: async () => {
        following.abort.abort()
        await chunks.return(undefined)
      }
    }, { highWaterMark: 0 })
  }

  // The turn's chunks, event by event, reopening the stream after the last event
  // handed out when it drops, until the turn's end.
  async *#chunks(following: Following, first: Response): AsyncGenerator<UIMessageChunk, void, undefined> {
    const reconnect = {
      baseMs: this.#options.reconnect?.baseMs ?? Reconnect.defaults.baseMs,
      maxMs: this.#options.reconnect?.maxMs ?? 5_000,
      maxAttempts: this.#options.reconnect?.maxAttempts ?? 8
    }
    const sleep = this.#options.sleep ?? platformSleep
    const random = this.#options.random ?? Math.random
    const stopped = () => following.abort.signal.aborted || following.signal?.aborted === true
    let response: Response | undefined = first
    let failures = 0
    let lastFailure: ClientError | undefined
    for (;;) {
      if (response === undefined) {
        try {
          response = await this.#open(following)
        } catch (error) {
          if (stopped()) return
          const failure = fromThrown(error)
          if (!failure.retryable) {
            if (failure.code === "turn_not_found") await this.#forget(following)
            throw failure
          }
          lastFailure = failure
          failures++
          if (failures > reconnect.maxAttempts) throw this.#disconnected(following, lastFailure)
          await sleep(Reconnect.delayMs(failures - 1, reconnect, random), following.abort.signal)
          continue
        }
      }
      const body = response.body
      response = undefined
      if (body === null) throw new ClientError("unexpected_body", "the UI message stream has no body")
      const frames: Array<EventSourceMessage> = []
      const parser = createParser({ onEvent: (frame) => frames.push(frame) })
      const reader = body.getReader()
      const decoder = new TextDecoder()
      let pending: Array<UIMessageChunk> = []
      let done = false
      let broken: ClientError | undefined
      try {
        while (!done) {
          let read: Awaited<ReturnType<typeof reader.read>>
          try {
            read = await reader.read()
          } catch (error) {
            broken = fromThrown(error)
            break
          }
          if (read.done) break
          parser.feed(decoder.decode(read.value, { stream: true }))
          while (frames.length > 0) {
            const frame = frames.shift()!
            if (frame.data === "[DONE]") {
              // the turn's end (chunks without an id, from a server that sends none, go first)
              done = true
              yield* pending
              pending = []
              continue
            }
            pending.push(parseChunk(frame.data))
            if (frame.id === undefined || frame.id === "") continue
            // the event's chunks are all here: hand them out
            const released = pending
            pending = []
            failures = 0
            await this.#handedOut(following, frame.id)
            yield* released
          }
        }
      } finally {
        await reader.cancel().catch(() => undefined)
      }
      if (done) {
        await this.#forget(following)
        return
      }
      if (stopped()) return
      if (broken === undefined && pending.some((chunk) => chunk.type === "error")) {
        // the server closed the stream saying why (an error chunk): passed on as it is
        yield* pending
        return
      }
      lastFailure = broken ?? new ClientError("network", "the UI message stream ended before the turn")
      failures++
      if (failures > reconnect.maxAttempts) throw this.#disconnected(following, lastFailure)
      await sleep(Reconnect.delayMs(failures - 1, reconnect, random), following.abort.signal)
    }
  }

  // Past the attempts: the chat is told of a network failure (a `TypeError`, which it
  // takes for a disconnect and keeps its message for a resume), and a resume then
  // continues after the last event handed out.
  #disconnected(following: Following, failure: ClientError): TypeError {
    following.followed.disconnected = true
    return new TypeError(`network error: failed to fetch the turn ${following.turnId}: ${failure.message}`)
  }
}

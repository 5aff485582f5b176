/**
 * The thread mode of the chat transport (docs/threads.md#browser): what is new in a
 * chat's messages (the user's last message, the results of the last step's tool
 * calls), the checks that hold the thread routes' answers to their types, and the
 * thread token's expiry.
 *
 * @internal
 */
import type { UIMessage } from "ai"

/**
 * The result of one tool call the client ran, as `POST /v1/threads/:threadId/turns`
 * takes it.
 *
 * @internal
 */
export interface ThreadToolResult {
  readonly toolCallId: string
  readonly output: unknown
  readonly isError?: boolean
}

/**
 * What a submit sends: the user's message and the tool results, each when there is one.
 *
 * @internal
 */
export interface NewInput {
  readonly message?: UIMessage | undefined
  readonly toolResults: ReadonlyArray<ThreadToolResult>
}

type Part = UIMessage["parts"][number]

// The parts of a message's last step (after its last `step-start`): one turn's output.
const lastStep = (message: UIMessage): ReadonlyArray<Part> => {
  let at = 0
  message.parts.forEach((part, i) => {
    if (part.type === "step-start") at = i + 1
  })
  return message.parts.slice(at)
}

/**
 * The results of the tool calls of the assistant's last step that the client answered
 * (`addToolOutput`), leaving out provider-executed calls and the calls in `known` (the
 * results the server has, or this transport sent).
 *
 * @internal
 */
export const toolResultsOf = (message: UIMessage, known: ReadonlySet<string>): ReadonlyArray<ThreadToolResult> =>
  lastStep(message).flatMap((part): ReadonlyArray<ThreadToolResult> => {
    if (!("toolCallId" in part) || part.providerExecuted === true || known.has(part.toolCallId)) return []
    switch (part.state) {
      case "output-available":
        return [{ toolCallId: part.toolCallId, output: part.output ?? null }]
      case "output-error":
        return [{ toolCallId: part.toolCallId, output: part.errorText, isError: true }]
      case "output-denied":
        return [{ toolCallId: part.toolCallId, output: "the tool call was denied", isError: true }]
      default:
        return []
    }
  })

/**
 * What is new in the chat's messages: its last message when it is the user's, and the
 * tool results of the last assistant message before it (or of the last message, when
 * it is the assistant's: `addToolOutput` then `sendAutomaticallyWhen`).
 *
 * @internal
 */
export const newInput = (messages: ReadonlyArray<UIMessage>, known: ReadonlySet<string>): NewInput => {
  const last = messages.at(-1)
  if (last === undefined) return { toolResults: [] }
  if (last.role === "assistant") return { toolResults: toolResultsOf(last, known) }
  const before = messages.at(-2)
  return {
    ...(last.role === "user" ? { message: last } : {}),
    toolResults: before?.role === "assistant" ? toolResultsOf(before, known) : []
  }
}

/**
 * The ids of the tool calls whose result a message holds (the server's, once loaded).
 *
 * @internal
 */
export const answeredCalls = (messages: ReadonlyArray<UIMessage>): ReadonlyArray<string> =>
  messages.flatMap((message) =>
    message.parts.flatMap((part) =>
      "toolCallId" in part &&
        (part.state === "output-available" || part.state === "output-error" || part.state === "output-denied")
        ? [part.toolCallId]
        : []
    )
  )

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/**
 * A UI message as the server sends it: an id, a role, and parts that each have a type.
 *
 * @internal
 */
export const isUIMessage = (value: unknown): value is UIMessage =>
  isObject(value) && typeof value["id"] === "string" &&
  (value["role"] === "user" || value["role"] === "assistant" || value["role"] === "system") &&
  Array.isArray(value["parts"]) &&
  value["parts"].every((part: unknown) => isObject(part) && typeof part["type"] === "string")

/**
 * A thread's running turn, with the paths of its streams.
 *
 * @internal
 */
export interface RunningTurn {
  readonly turnId: string
  readonly uiMessageStream: string
  readonly events: string
  readonly cancel: string
}

/**
 * `GET /v1/threads/:threadId`.
 *
 * @internal
 */
export interface ThreadSnapshot<UI_MESSAGE extends UIMessage = UIMessage> {
  readonly threadId: string
  readonly createdAt: number
  readonly updatedAt: number
  readonly head: string | null
  readonly turnCount: number
  readonly lastEventId: string
  readonly running: RunningTurn | null
  readonly messages: ReadonlyArray<UI_MESSAGE>
}

const isRunning = (value: unknown): value is RunningTurn =>
  isObject(value) && typeof value["turnId"] === "string" && typeof value["uiMessageStream"] === "string" &&
  typeof value["events"] === "string" && typeof value["cancel"] === "string"

/**
 * Holds a body to `ThreadSnapshot` (its messages to `isUIMessage`).
 *
 * @internal
 */
export const isThreadSnapshot = (value: unknown): value is ThreadSnapshot =>
  isObject(value) && typeof value["threadId"] === "string" && typeof value["createdAt"] === "number" &&
  typeof value["updatedAt"] === "number" && (value["head"] === null || typeof value["head"] === "string") &&
  typeof value["turnCount"] === "number" && typeof value["lastEventId"] === "string" &&
  (value["running"] === null || isRunning(value["running"])) && Array.isArray(value["messages"]) &&
  value["messages"].every(isUIMessage)

/**
 * An event of a thread's log, as `GET /v1/threads/:threadId/events` sends it
 * (docs/threads.md: `ThreadLog.ThreadEvent` of `@sluice/turns`).
 *
 * @internal
 */
export type ThreadEvent =
  | { readonly type: "thread_created"; readonly threadId: string; readonly at: number }
  | {
    readonly type: "turn_started"
    readonly turnId: string
    readonly parentId: string | null
    readonly prefix: string
    readonly input: {
      readonly message?: unknown
      readonly toolResults: ReadonlyArray<unknown>
      readonly approvals: ReadonlyArray<unknown>
      /** The calls the results answer, as the client that sent them named them (UI `toolCallId`s). */
      readonly toolCallIds?: ReadonlyArray<string> | undefined
    }
    readonly at: number
  }
  | {
    readonly type: "turn_ended"
    readonly turnId: string
    readonly end: { readonly status: string; readonly [field: string]: unknown }
    readonly at: number
  }
  | {
    readonly type: "turns_superseded"
    readonly turnIds: ReadonlyArray<string>
    readonly by: string
    readonly at: number
  }
  | { readonly type: "thread_deleted"; readonly at: number }

const isStrings = (value: unknown): value is ReadonlyArray<string> =>
  Array.isArray(value) && value.every((item) => typeof item === "string")

/**
 * Holds a parsed frame to `ThreadEvent` (the fields the transport and an app read).
 *
 * @internal
 */
export const isThreadEvent = (value: unknown): value is ThreadEvent => {
  if (!isObject(value) || typeof value["at"] !== "number") return false
  switch (value["type"]) {
    case "thread_created":
      return typeof value["threadId"] === "string"
    case "turn_started": {
      const input = value["input"]
      return typeof value["turnId"] === "string" && typeof value["prefix"] === "string" &&
        (value["parentId"] === null || typeof value["parentId"] === "string") && isObject(input) &&
        Array.isArray(input["toolResults"]) && Array.isArray(input["approvals"]) &&
        (input["toolCallIds"] === undefined || isStrings(input["toolCallIds"]))
    }
    case "turn_ended": {
      const end = value["end"]
      return typeof value["turnId"] === "string" && isObject(end) && typeof end["status"] === "string"
    }
    case "turns_superseded":
      return isStrings(value["turnIds"]) && typeof value["by"] === "string"
    case "thread_deleted":
      return true
    default:
      return false
  }
}

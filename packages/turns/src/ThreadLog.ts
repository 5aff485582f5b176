/**
 * A thread's log (docs/threads.md#the-log): every event of the thread, in order, one
 * stream entry each, and what they add up to. The log is the thread's only record:
 * its turns (a tree: each turn has a parent), the input each started from, the final
 * items each ended with, which turn runs, and the current path, the branch last
 * written. A follower reads the same entries as the thread's events.
 *
 * @since 0.3.0
 */
import { Turn } from "@sluice/accumulator"
import { Json, OutputItem, ThreadInput, ToolCallId, UIMessage } from "@sluice/core"
import * as LlmRequest from "@sluice/providers/LlmRequest"
import * as RoundTrip from "@sluice/providers/RoundTrip"
import type { StreamEntry } from "@sluice/redis/StreamEntry"
import { field } from "@sluice/redis/StreamEntry"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaParser from "effect/SchemaParser"
import * as TurnEnding from "./TurnEnding.js"

/**
 * How a turn ended: `completed`, `cancelled` (asked to stop), `failed` (the provider or
 * the pipeline failed), `producer_lost` (its producer died and someone else ended it).
 *
 * @since 0.3.0
 * @category schemas
 */
export const TurnOutcome = Schema.Literals(["completed", "cancelled", "failed", "producer_lost"]).annotate({
  identifier: "TurnOutcome"
})

/**
 * @since 0.3.0
 * @category models
 */
export type TurnOutcome = typeof TurnOutcome.Type

/**
 * A turn's input as the thread keeps it: the user's message as a `UIMessage`, the
 * tool results resolved against the parent turn's calls (named after them, with the
 * provider's call id), the approval answers, and `toolCallIds`, the calls the results
 * answer as the client named them (a UI tool part's `toolCallId`), so that another tab
 * marks them answered.
 *
 * @since 0.3.0
 * @category schemas
 */
export const StoredInput = Schema.Struct({
  message: Schema.optionalKey(UIMessage.UIMessage),
  toolResults: Schema.Array(LlmRequest.ToolResult),
  approvals: Schema.Array(ThreadInput.ApprovalInput),
  toolCallIds: Schema.optionalKey(Schema.Array(Schema.String))
}).annotate({ identifier: "StoredInput" })

/**
 * @since 0.3.0
 * @category models
 */
export type StoredInput = typeof StoredInput.Type

/**
 * What ended a failed turn.
 *
 * @since 0.3.0
 * @category schemas
 */
export const TurnFailure = Schema.Struct({ code: Schema.String, message: Schema.String }).annotate({
  identifier: "TurnFailure"
})

/**
 * A turn's ending: its outcome, the provider that answered (`provider_id` of its
 * `response_start`), its response id, and its final items (`Turn.finalItems` of
 * `@sluice/accumulator`; what a cancelled or failed turn had finished).
 *
 * @since 0.3.0
 * @category schemas
 */
export const TurnEnd = Schema.Struct({
  status: TurnOutcome,
  provider: Schema.optionalKey(Schema.String),
  responseId: Schema.optionalKey(Schema.String),
  items: Schema.Array(OutputItem.OutputItem),
  error: Schema.optionalKey(TurnFailure)
}).annotate({ identifier: "TurnEnd" })

/**
 * @since 0.3.0
 * @category models
 */
export type TurnEnd = typeof TurnEnd.Type

/**
 * A turn's ending as its thread records it, from the turn folded from its Stream A
 * (`Turn` of `@sluice/accumulator`): `completed` (the provider ended it, `incomplete`
 * included), `failed` (it ended with an error: the first), `producer_lost` (ended by
 * `TurnEnding` after its producer's lease lapsed), `cancelled` (asked to stop; `aborted`
 * as the error's code when it was stopped without being asked, as a server shuts down);
 * the provider that answered (else `provider`), the response id, and the items
 * (`Turn.keptItems`: what a turn cut short had said is kept). A turn that has not ended
 * (its stream holds no last entry) is `producer_lost`.
 *
 * @since 0.3.0
 * @category conversions
 */
export const endOf = (turn: Turn.Turn, provider: string): TurnEnd => {
  const common = {
    provider: turn.providerId ?? provider,
    ...(turn.runId === undefined ? {} : { responseId: turn.runId }),
    items: Turn.keptItems(turn)
  }
  const lost = turn.errors.find((error) => error.code === TurnEnding.producerLost.code)
  if (lost !== undefined || !Turn.isEnded(turn)) {
    return {
      ...common,
      status: "producer_lost",
      error: {
        code: TurnEnding.producerLost.code,
        message: lost?.message ?? "the turn's stream ended without its last entry"
      }
    }
  }
  switch (turn.status) {
    case "error": {
      const first = turn.errors[0]
      return {
        ...common,
        status: "failed",
        error: { code: first?.code ?? "error", message: first?.message ?? "the turn failed" }
      }
    }
    case "cancelled":
      return { ...common, status: "cancelled" }
    case "aborted":
      return { ...common, status: "cancelled", error: { code: "aborted", message: "the turn was aborted" } }
    default:
      return { ...common, status: "completed" }
  }
}

/**
 * One event of a thread. `at` is the writer's clock, in ms.
 *
 * - `thread_created`: the log's first entry;
 * - `turn_started`: a turn began from `input` under `parentId` (`null`: the first
 *   turn of a branch from the thread's start); its streams are under `prefix`
 *   (`TurnKeys`);
 * - `turn_ended`: the running turn ended;
 * - `turns_superseded`: a new branch (turn `by`) left these turns off the current path;
 * - `thread_deleted`: the thread is gone; a follower's events end here.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ThreadEvent = Schema.Union([
  Schema.Struct({ type: Schema.Literal("thread_created"), threadId: Schema.String, at: Schema.Number }),
  Schema.Struct({
    type: Schema.Literal("turn_started"),
    turnId: Schema.String,
    parentId: Schema.NullOr(Schema.String),
    prefix: Schema.String,
    input: StoredInput,
    at: Schema.Number
  }),
  Schema.Struct({ type: Schema.Literal("turn_ended"), turnId: Schema.String, end: TurnEnd, at: Schema.Number }),
  Schema.Struct({
    type: Schema.Literal("turns_superseded"),
    turnIds: Schema.Array(Schema.String),
    by: Schema.String,
    at: Schema.Number
  }),
  Schema.Struct({ type: Schema.Literal("thread_deleted"), at: Schema.Number })
]).annotate({ identifier: "ThreadEvent" })

/**
 * @since 0.3.0
 * @category models
 */
export type ThreadEvent = typeof ThreadEvent.Type

/**
 * A thread event and its log entry's id (what a follower resumes after).
 *
 * @since 0.3.0
 * @category models
 */
export interface ThreadEventEntry {
  readonly id: string
  readonly event: ThreadEvent
}

const decodeEvent = SchemaParser.decodeUnknownResult(Schema.fromJsonString(ThreadEvent))

/**
 * The fields of an event's log entry: `type`, and the event as JSON in `event`.
 *
 * @since 0.3.0
 * @category encoding
 */
export const fields = (event: ThreadEvent): ReadonlyArray<readonly [string, string]> => [
  ["type", event.type],
  ["event", JSON.stringify(event)]
]

/**
 * Reads a log entry's event; `None` for an entry that is not one.
 *
 * @since 0.3.0
 * @category decoding
 */
export const toEvent = (entry: StreamEntry): Option.Option<ThreadEvent> =>
  Option.flatMap(field(entry, "event"), (json) => Result.getSuccess(decodeEvent(json)))

/**
 * Whether a log entry is the thread's deletion, its last.
 *
 * @since 0.3.0
 * @category decoding
 */
export const isDeletion = (entry: StreamEntry): boolean =>
  Option.isSome(Option.filter(field(entry, "type"), (type) => type === "thread_deleted"))

/**
 * One turn of a thread.
 *
 * @since 0.3.0
 * @category models
 */
export interface ThreadTurn {
  readonly turnId: string
  readonly parentId: string | null
  readonly prefix: string
  readonly input: StoredInput
  readonly startedAt: number
  /** `None` while the turn runs. */
  readonly end: Option.Option<TurnEnd>
  readonly endedAt: Option.Option<number>
}

/**
 * What a thread's log adds up to: its turns by id in the order they started, the head
 * of the current path (the turn last started), the running turn.
 *
 * @since 0.3.0
 * @category models
 */
export interface ThreadState {
  readonly threadId: string
  readonly createdAt: number
  readonly updatedAt: number
  readonly turns: ReadonlyMap<string, ThreadTurn>
  readonly head: string | null
  readonly running: string | null
  readonly deleted: boolean
  /** The id of the log's last entry, what the next write must follow. */
  readonly lastId: string
}

/**
 * Folds a thread's log entries. `None` for an empty log.
 *
 * @since 0.3.0
 * @category folding
 */
export const fold = (threadId: string, entries: ReadonlyArray<StreamEntry>): Option.Option<ThreadState> => {
  const last = entries.at(-1)
  if (last === undefined) return Option.none()
  const turns = new Map<string, ThreadTurn>()
  let createdAt = 0
  let updatedAt = 0
  let head: string | null = null
  let running: string | null = null
  let deleted = false
  for (const entry of entries) {
    const decoded = toEvent(entry)
    if (Option.isNone(decoded)) continue
    const event = decoded.value
    updatedAt = Math.max(updatedAt, event.at)
    switch (event.type) {
      case "thread_created":
        createdAt = event.at
        break
      case "turn_started":
        turns.set(event.turnId, {
          turnId: event.turnId,
          parentId: event.parentId,
          prefix: event.prefix,
          input: event.input,
          startedAt: event.at,
          end: Option.none(),
          endedAt: Option.none()
        })
        head = event.turnId
        running = event.turnId
        break
      case "turn_ended": {
        const turn = turns.get(event.turnId)
        if (turn !== undefined) {
          turns.set(event.turnId, { ...turn, end: Option.some(event.end), endedAt: Option.some(event.at) })
        }
        if (running === event.turnId) running = null
        break
      }
      case "turns_superseded":
        break
      case "thread_deleted":
        deleted = true
        break
    }
  }
  return Option.some({ threadId, createdAt, updatedAt, turns, head, running, deleted, lastId: last.id })
}

/**
 * The turns from the thread's start to `turnId` (included), first to last.
 *
 * @since 0.3.0
 * @category folding
 */
export const pathTo = (state: ThreadState, turnId: string | null): ReadonlyArray<ThreadTurn> => {
  const path: Array<ThreadTurn> = []
  let at = turnId === null ? undefined : state.turns.get(turnId)
  while (at !== undefined) {
    path.push(at)
    at = at.parentId === null ? undefined : state.turns.get(at.parentId)
  }
  return path.reverse()
}

/**
 * The finished turn `RoundTrip` takes: the ending's provider and items.
 *
 * @since 0.3.0
 * @category conversions
 */
export const finishedTurn = (end: TurnEnd): RoundTrip.FinishedTurn => ({
  provider: end.provider ?? "unknown",
  items: end.items
})

const userMessages = (input: StoredInput): ReadonlyArray<LlmRequest.Message> => {
  if (input.message === undefined) return []
  const text = UIMessage.text(input.message)
  return text === "" ? [] : [{ _tag: "user", text }]
}

/**
 * The provider messages of the ended turns of `path`, in order: each turn's user
 * message, then its assistant message (its approval answers at its end) and the tool
 * results of the turn after it. `next` is the input of a turn about to start after the
 * path's last (its tool results and approvals follow the last assistant message, its
 * user message closes the list). A turn still running, and everything after it, is left
 * out. An assistant message with no parts (a turn that failed before saying anything)
 * is left out.
 *
 * @since 0.3.0
 * @category conversions
 */
export const messages = (
  path: ReadonlyArray<ThreadTurn>,
  next?: StoredInput
): Result.Result<ReadonlyArray<LlmRequest.Message>, RoundTrip.RoundTripError> => {
  const out: Array<LlmRequest.Message> = []
  for (let i = 0; i < path.length; i++) {
    const turn = path[i]!
    if (Option.isNone(turn.end)) return Result.succeed(out)
    out.push(...userMessages(turn.input))
    const after = i + 1 < path.length ? path[i + 1]!.input : next
    const answers = RoundTrip.approvalResponses(finishedTurn(turn.end.value), after?.approvals ?? [])
    if (Result.isFailure(answers)) return Result.fail(answers.failure)
    const assistant = RoundTrip.assistantMessage(finishedTurn(turn.end.value))
    const parts = [...assistant.parts, ...answers.success]
    if (parts.length > 0) out.push({ _tag: "assistant", parts })
    const results = after?.toolResults ?? []
    if (results.length > 0) out.push({ _tag: "tool", results })
  }
  if (next !== undefined) out.push(...userMessages(next))
  return Result.succeed(out)
}

const jsonOrText = (text: string): Json.JsonValue => Json.parseOrUndefined(text) ?? text

const toolPart = (
  item: OutputItem.FunctionCallItem,
  result: { readonly output: string; readonly isError: boolean } | undefined
): UIMessage.UIPart => {
  const input = jsonOrText(item.arguments)
  const base = {
    type: `tool-${item.name}` as const,
    toolCallId: item.id,
    input,
    ...(item.provider_executed === true ? { providerExecuted: true } : {})
  }
  if (result === undefined) return { ...base, state: "input-available" }
  return result.isError
    ? { ...base, state: "output-error", errorText: result.output }
    : { ...base, state: "output-available", output: jsonOrText(result.output) }
}

/**
 * A turn's assistant message as a `UIMessage`: its id the turn's response id (the
 * `messageId` its UI message stream started with) or the turn id; a `step-start`, then
 * text, reasoning, sources and tool parts in the items' order (a tool part's
 * `toolCallId` is the call's item id, as the stream gives it), each tool call with its
 * result: the provider's own in the turn, or the client's in `next` (the input of the
 * turn after it).
 *
 * @since 0.3.0
 * @category conversions
 */
export const assistantUIMessage = (
  turn: ThreadTurn,
  end: TurnEnd,
  next: StoredInput | undefined
): UIMessage.UIMessage => {
  const results = new Map<string, { readonly output: string; readonly isError: boolean }>()
  for (const item of end.items) {
    if (item.type === "function_call_output") {
      results.set(ToolCallId.fromHistory(item.call_id), { output: item.output, isError: !item.success })
    }
  }
  for (const result of next?.toolResults ?? []) {
    results.set(ToolCallId.fromHistory(result.callId), { output: result.output, isError: result.isError === true })
  }
  const parts: Array<UIMessage.UIPart> = [{ type: "step-start" }]
  for (const item of end.items) {
    switch (item.type) {
      case "message":
        if (item.content !== "") parts.push({ type: "text", text: item.content, state: "done" })
        for (const source of item.sources ?? []) {
          if (source.url !== undefined) {
            parts.push({
              type: "source-url",
              sourceId: source.url,
              url: source.url,
              ...(source.title === undefined ? {} : { title: source.title })
            })
          }
        }
        break
      case "reasoning":
        if (item.content !== "") parts.push({ type: "reasoning", text: item.content, state: "done" })
        break
      case "function_call":
        parts.push(toolPart(item, results.get(ToolCallId.fromHistory(item.call_id))))
        break
      default:
        break
    }
  }
  return { id: end.responseId ?? turn.turnId, role: "assistant", parts }
}

/**
 * The thread's current path as `UIMessage`s: each turn's user message (a running
 * turn's too), and each ended turn's assistant message.
 *
 * @since 0.3.0
 * @category conversions
 */
export const uiMessages = (path: ReadonlyArray<ThreadTurn>): ReadonlyArray<UIMessage.UIMessage> =>
  path.flatMap((turn, i) => {
    const user = turn.input.message === undefined ? [] : [turn.input.message]
    return Option.match(turn.end, {
      onNone: () => user,
      onSome: (end) => [...user, assistantUIMessage(turn, end, path[i + 1]?.input)]
    })
  })

/**
 * Turns as scripts of items for the accumulator's and the views' tests: an envelope
 * with a deterministic event id, generated items cut into deltas at any points, and
 * the events of a whole turn.
 */
import type { OutputItem } from "@sluice/core"
import { StreamEvent, Usage } from "@sluice/core"
import * as FastCheck from "fast-check"

const runId = "5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69"
const turnId = "0c8d3f6e-2b1a-4d5c-8e7f-9a0b1c2d3e4f"
const threadId = "7e6d5c4b-3a29-4817-a6b5-c4d3e2f1a0b9"
let counter = 0

/**
 * An envelope with a fresh deterministic event id.
 *
 * @since 0.3.0
 */
export const event = (payload: StreamEvent.Payload): StreamEvent.StreamEvent =>
  StreamEvent.envelope(
    { runId },
    payload,
    `00000000-0000-4000-8000-${String(counter++).padStart(12, "0")}`,
    1_700_000_000_000
  )

/**
 * One item of a generated turn: its final form and its content cut into deltas.
 *
 * @since 0.3.0
 */
export interface ItemScript {
  readonly id: string
  readonly final: OutputItem.OutputItem
  readonly deltas: ReadonlyArray<string>
}

const cut = (text: string, cuts: ReadonlyArray<number>): Array<string> => {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b)
  const parts: Array<string> = []
  let from = 0
  for (const point of points) {
    if (point > from) parts.push(text.slice(from, point))
    from = point
  }
  if (from < text.length) parts.push(text.slice(from))
  return parts
}

const contentOf = (item: OutputItem.OutputItem): string =>
  item.type === "function_call"
    ? item.arguments
    : item.type === "message" || item.type === "reasoning"
    ? item.content
    : ""

/**
 * Items of a turn: messages, reasoning with a signature, tool calls.
 *
 * @since 0.3.0
 */
export const itemsArbitrary: FastCheck.Arbitrary<ReadonlyArray<OutputItem.OutputItem>> = FastCheck.array(
  FastCheck.oneof(
    FastCheck.string({ maxLength: 60 }).map(
      (content): OutputItem.OutputItem => ({ type: "message", id: "", content, origin: "agent" })
    ),
    FastCheck.tuple(FastCheck.string({ maxLength: 60 }), FastCheck.base64String({ maxLength: 16 })).map(
      ([content, signature]): OutputItem.OutputItem => ({ type: "reasoning", id: "", content, signature })
    ),
    FastCheck.tuple(FastCheck.stringMatching(/^[a-z_]{1,8}$/), FastCheck.jsonValue()).map(
      ([name, args]): OutputItem.OutputItem => ({
        type: "function_call",
        id: "",
        call_id: `call_${name}`,
        name,
        arguments: JSON.stringify({ value: args })
      })
    )
  ),
  { maxLength: 6 }
).map((items) => items.map((item, i) => ({ ...item, id: `item_${i}` })))

/**
 * Scripts the items with their content cut at the given points.
 *
 * @since 0.3.0
 */
export const script = (items: ReadonlyArray<OutputItem.OutputItem>, cuts: ReadonlyArray<number>): Array<ItemScript> =>
  items.map((final) => ({ id: final.id, final, deltas: cut(contentOf(final), cuts) }))

/**
 * The events of a whole turn, items one after another.
 *
 * @since 0.3.0
 */
export const turnEvents = (items: ReadonlyArray<ItemScript>): Array<StreamEvent.StreamEvent> => {
  const events: Array<StreamEvent.StreamEvent> = [
    event({
      type: "response_start",
      response_id: runId,
      turn_id: turnId,
      thread_id: threadId,
      model_id: "model",
      provider_id: "test",
      created_at: 1
    })
  ]
  for (const item of items) {
    events.push(
      event({
        type: "item_start",
        item_id: item.id,
        item_type: item.final.type,
        ...(item.final.type === "function_call" ? { name: item.final.name } : {})
      })
    )
    for (const delta of item.deltas) events.push(event({ type: "item_delta", item_id: item.id, delta_content: delta }))
    events.push(event({ type: "item_done", item_id: item.id, final_item: item.final }))
  }
  events.push(
    event({
      type: "response_done",
      response_id: runId,
      status: "complete",
      usage: Usage.make({ input: 3, output: 4 }),
      finish_reason: "stop"
    })
  )
  return events
}

/**
 * An approval request of an MCP server (docs/events.md#output-items).
 *
 * @since 0.3.0
 */
export const approval: OutputItem.ApprovalRequestItem = {
  type: "approval_request",
  id: "mcpr_1",
  provider_id: "mcpr_682d498e3bd4819196a0ce1664f8e77b",
  server_label: "deepwiki",
  name: "ask_question",
  arguments: "{\"repoName\":\"modelcontextprotocol/modelcontextprotocol\",\"question\":\"What transports?\"}"
}

/**
 * A client tool call beside the approval request.
 *
 * @since 0.3.0
 */
export const approvalCall: OutputItem.FunctionCallItem = {
  type: "function_call",
  id: "fc_1",
  call_id: "call_1",
  name: "lookup",
  arguments: "{\"q\":1}"
}

/**
 * A turn with an approval request (with or without its `item_start`) and a client
 * tool call.
 *
 * @since 0.3.0
 */
export const approvalEvents = (withStart: boolean): Array<StreamEvent.StreamEvent> => [
  event({
    type: "response_start",
    response_id: runId,
    turn_id: turnId,
    thread_id: threadId,
    model_id: "gpt-test",
    provider_id: "openai-responses",
    created_at: 1
  }),
  ...(withStart
    ? [event({ type: "item_start", item_id: approval.id, item_type: "approval_request", name: approval.name })]
    : []),
  event({ type: "item_done", item_id: approval.id, final_item: approval }),
  event({ type: "item_start", item_id: approvalCall.id, item_type: "function_call", name: approvalCall.name }),
  event({ type: "item_done", item_id: approvalCall.id, final_item: approvalCall }),
  event({
    type: "response_done",
    response_id: runId,
    status: "complete",
    usage: Usage.make({ input: 10, output: 5 }),
    finish_reason: "stop"
  })
]

/**
 * The events of a turn around the given payloads: a `response_start` before them, a
 * complete `response_done` after.
 *
 * @since 0.3.0
 */
export const framedTurn = (middle: ReadonlyArray<StreamEvent.Payload>): Array<StreamEvent.StreamEvent> => [
  event({
    type: "response_start",
    response_id: runId,
    turn_id: turnId,
    thread_id: threadId,
    model_id: "m",
    provider_id: "test",
    created_at: 1
  }),
  ...middle.map(event),
  event({ type: "response_done", response_id: runId, status: "complete", usage: Usage.empty, finish_reason: "stop" })
]

/**
 * Thoughts of both kinds: one Responses-like reasoning item holding a summary and raw
 * reasoning text, then a Gemini-like thought that arrives whole, then reasoning of no
 * stated kind, then the message.
 *
 * @since 0.3.0
 */
export const mixedThoughts = framedTurn([
  { type: "item_start", item_id: "r", item_type: "reasoning", reasoning_kind: "summary" },
  { type: "item_delta", item_id: "r", delta_content: "Plan: add." },
  { type: "item_delta", item_id: "r", delta_content: "1 + 1 is 2", reasoning_kind: "raw" },
  { type: "item_done", item_id: "r", final_item: { type: "reasoning", id: "r", content: "Plan: add.1 + 1 is 2" } },
  {
    type: "item_done",
    item_id: "g",
    final_item: { type: "reasoning", id: "g", content: "Thinking about sums", reasoning_kind: "summary" }
  },
  { type: "item_start", item_id: "x", item_type: "reasoning" },
  { type: "item_delta", item_id: "x", delta_content: "hmm" },
  { type: "item_done", item_id: "x", final_item: { type: "reasoning", id: "x", content: "hmm, yes" } },
  { type: "item_done", item_id: "m", final_item: { type: "message", id: "m", content: "2", origin: "agent" } }
])

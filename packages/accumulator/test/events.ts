import type { OutputItem } from "@sluice/core"
import { StreamEvent, Usage } from "@sluice/core"
import * as FastCheck from "fast-check"

const runId = "5d3f1c2a-8a61-4c4e-9f3b-1e2d3c4b5a69"
const turnId = "0c8d3f6e-2b1a-4d5c-8e7f-9a0b1c2d3e4f"
const threadId = "7e6d5c4b-3a29-4817-a6b5-c4d3e2f1a0b9"
let counter = 0

/** An envelope with a fresh deterministic event id. */
export const event = (payload: StreamEvent.Payload): StreamEvent.StreamEvent =>
  StreamEvent.envelope(
    { runId },
    payload,
    `00000000-0000-4000-8000-${String(counter++).padStart(12, "0")}`,
    1_700_000_000_000
  )

/** One item of a generated turn: its final form and its content cut into deltas. */
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

/** Items of a turn: messages, reasoning with a signature, tool calls. */
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

/** Scripts the items with their content cut at the given points. */
export const script = (items: ReadonlyArray<OutputItem.OutputItem>, cuts: ReadonlyArray<number>): Array<ItemScript> =>
  items.map((final) => ({ id: final.id, final, deltas: cut(contentOf(final), cuts) }))

/** The events of a whole turn, items one after another. */
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

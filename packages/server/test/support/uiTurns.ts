/**
 * A turn's Stream A with every kind of part a UI message holds (reasoning, text with
 * sources, a tool call and its output, a provider-executed tool call and its output,
 * and a user message that an assistant message leaves out), and what the AI SDK's
 * reader must make of it.
 */
import { StreamEvent } from "@sluice/core"
import { randomUUID } from "node:crypto"

/** The events of the turn, ending as `ending` says (`response_error` then `response_done`, status `error`, for an error). */
export const uiTurn = (
  turnId: string,
  ending: StreamEvent.PayloadOf<"response_done"> | StreamEvent.PayloadOf<"response_error"> | undefined = undefined
): Array<StreamEvent.StreamEvent> => {
  const context = { runId: randomUUID() }
  const responseId = context.runId
  const payloads: Array<StreamEvent.Payload> = [
    {
      type: "response_start",
      response_id: responseId,
      turn_id: turnId,
      thread_id: randomUUID(),
      model_id: "model",
      provider_id: "test",
      created_at: 1_700_000_000_000
    },
    { type: "item_start", item_id: "u1", item_type: "message", origin: "user", initial_content: "Weather in Paris?" },
    {
      type: "item_done",
      item_id: "u1",
      final_item: { type: "message", id: "u1", content: "Weather in Paris?", origin: "user" }
    },
    { type: "item_start", item_id: "r1", item_type: "reasoning" },
    { type: "item_delta", item_id: "r1", delta_content: "Let me " },
    { type: "item_delta", item_id: "r1", delta_content: "think." },
    { type: "item_done", item_id: "r1", final_item: { type: "reasoning", id: "r1", content: "Let me think." } },
    { type: "item_start", item_id: "m1", item_type: "message", origin: "agent" },
    { type: "item_delta", item_id: "m1", delta_content: "Checking" },
    {
      type: "item_done",
      item_id: "m1",
      final_item: { type: "message", id: "m1", content: "Checking", origin: "agent" }
    },
    { type: "item_start", item_id: "fc1", item_type: "function_call", name: "get_weather" },
    { type: "item_delta", item_id: "fc1", delta_content: "{\"city\":" },
    { type: "item_delta", item_id: "fc1", delta_content: "\"Paris\"}" },
    {
      type: "item_done",
      item_id: "fc1",
      final_item: {
        type: "function_call",
        id: "fc1",
        call_id: "call_1",
        name: "get_weather",
        arguments: "{\"city\":\"Paris\"}"
      }
    },
    { type: "item_start", item_id: "fo1", item_type: "function_call_output" },
    {
      type: "item_done",
      item_id: "fo1",
      final_item: { type: "function_call_output", id: "fo1", call_id: "call_1", output: "{\"temp\":21}", success: true }
    },
    { type: "item_start", item_id: "ws1", item_type: "function_call", name: "web_search" },
    {
      type: "item_done",
      item_id: "ws1",
      final_item: {
        type: "function_call",
        id: "ws1",
        call_id: "ws_call",
        name: "web_search",
        arguments: "{\"query\":\"paris weather\"}",
        provider_executed: true
      }
    },
    {
      type: "item_done",
      item_id: "wo1",
      final_item: {
        type: "function_call_output",
        id: "wo1",
        call_id: "ws_call",
        output: "{\"results\":2}",
        success: true,
        provider_executed: true
      }
    },
    { type: "item_start", item_id: "m2", item_type: "message", origin: "agent" },
    { type: "item_delta", item_id: "m2", delta_content: "It is 21°C " },
    { type: "item_delta", item_id: "m2", delta_content: "in <b>Paris</b>." },
    {
      type: "item_done",
      item_id: "m2",
      final_item: {
        type: "message",
        id: "m2",
        content: "It is 21°C in <b>Paris</b>.",
        origin: "agent",
        sources: [{ kind: "url", url: "https://example.com/paris", title: "Paris weather" }, {
          kind: "document",
          title: "notes"
        }]
      }
    },
    ...(ending === undefined
      ? [{
        type: "response_done" as const,
        response_id: responseId,
        status: "complete" as const,
        finish_reason: "stop" as const
      }]
      : ending.type === "response_error"
      // a failed turn ends as producers end it: `response_done` (status `error`) after the error
      ? [ending, {
        type: "response_done" as const,
        response_id: responseId,
        status: "error" as const,
        finish_reason: "error" as const
      }]
      : [ending])
  ]
  return payloads.map((payload, i) => StreamEvent.envelope(context, payload, randomUUID(), 1_700_000_000_000 + i))
}

/** What the parts of the UI message read from `uiTurn` must be (their telling fields). */
export const expectedParts = [
  { type: "step-start" },
  { type: "reasoning", text: "Let me think.", state: "done" },
  { type: "text", text: "Checking", state: "done" },
  {
    type: "tool-get_weather",
    toolCallId: "fc1",
    state: "output-available",
    input: { city: "Paris" },
    output: { temp: 21 },
    providerExecuted: undefined
  },
  {
    type: "tool-web_search",
    toolCallId: "ws1",
    state: "output-available",
    input: { query: "paris weather" },
    output: { results: 2 },
    providerExecuted: true
  },
  { type: "text", text: "It is 21°C in <b>Paris</b>.", state: "done" },
  { type: "source-url", sourceId: "m2:0", url: "https://example.com/paris", title: "Paris weather" }
]

/** The telling fields of a UI message part, to compare with `expectedParts`. */
export const partFields = (part: Record<string, unknown>): Record<string, unknown> => {
  switch (true) {
    case part["type"] === "step-start":
      return { type: part["type"] }
    case part["type"] === "reasoning" || part["type"] === "text":
      return { type: part["type"], text: part["text"], state: part["state"] }
    case part["type"] === "source-url":
      return { type: part["type"], sourceId: part["sourceId"], url: part["url"], title: part["title"] }
    default:
      return {
        type: part["type"],
        toolCallId: part["toolCallId"],
        state: part["state"],
        input: part["input"],
        output: part["output"],
        providerExecuted: part["providerExecuted"]
      }
  }
}

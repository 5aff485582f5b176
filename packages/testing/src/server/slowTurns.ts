/**
 * Turns for `TurnPipeline` in tests that wait on a slow model: the events that open a
 * message, for the context's ids.
 */
import type { StreamEvent } from "@sluice/core"
import type { TurnContext } from "@sluice/pipeline"

/** `response_start` and the `item_start` of message `msg-1`. */
export const openingPayloads = (context: TurnContext.TurnContext): ReadonlyArray<StreamEvent.Payload> => [
  {
    type: "response_start",
    response_id: context.runId,
    turn_id: context.turnId,
    thread_id: context.threadId,
    model_id: "slow-model",
    provider_id: "test",
    created_at: 1_700_000_000_000
  },
  { type: "item_start", item_id: "msg-1", item_type: "message" }
]

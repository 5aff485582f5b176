import { Turn } from "@sluice/accumulator"
import type { StreamEvent } from "@sluice/core"
import { TurnEnding } from "@sluice/turns"
import type { StopReason } from "../StopReason.js"
import type { TurnContext } from "../TurnContext.js"

/**
 * How the pipeline's input came to its end.
 *
 * @internal
 */
export type Ending =
  | { readonly _tag: "Ended" }
  | { readonly _tag: "Stopped"; readonly reason: StopReason }
  | { readonly _tag: "Failed"; readonly code: string; readonly message: string }

const ended = (status: Turn.TurnStatus): boolean => status !== "pending" && status !== "streaming"

/**
 * The payloads that end a turn the input did not end: a `response_start` if it never
 * started, each open item closed (text kept, a partial tool call cancelled), then the
 * ending, whose last payload is always the turn's last event (core's `LastEntry`:
 * `response_done`), after a `response_error` for a failure. The ending's payloads, and
 * the `producer_lost` code and message, are `TurnEnding`'s, the one home of a turn's
 * closing payloads. Nothing for a turn that has
 * ended (its `response_done` was folded; a `response_error` alone does not end it).
 *
 * @internal
 */
export const closingPayloads = (
  turn: Turn.Turn,
  ending: Ending,
  context: TurnContext,
  now: number
): Array<StreamEvent.Payload> => {
  if (ended(turn.status)) return []
  const responseId = turn.runId ?? context.runId
  const out: Array<StreamEvent.Payload> = []
  if (turn.status === "pending") {
    out.push({
      type: "response_start",
      response_id: responseId,
      turn_id: context.turnId,
      thread_id: context.threadId,
      model_id: turn.modelId ?? "unknown",
      provider_id: turn.providerId ?? "unknown",
      created_at: now
    })
  }
  const reason = ending._tag === "Stopped" ? ending.reason : ending._tag === "Failed" ? "failed" : "ended"
  for (const item of turn.items) {
    if (item.status !== "in_progress") continue
    const kept = Turn.keptItem(item)
    out.push(
      kept === undefined
        ? { type: "item_cancelled", item_id: item.id, reason: `turn ${reason}` }
        : { type: "item_done", item_id: item.id, final_item: kept }
    )
  }
  switch (ending._tag) {
    case "Ended":
      out.push(TurnEnding.lastPayload(responseId, "aborted"))
      break
    case "Stopped":
      if (ending.reason === "producer_lost") out.push(...TurnEnding.streamAEnding(responseId, TurnEnding.producerLost))
      else out.push(TurnEnding.lastPayload(responseId, ending.reason))
      break
    case "Failed":
      out.push(...TurnEnding.streamAEnding(responseId, ending))
      break
  }
  return out
}

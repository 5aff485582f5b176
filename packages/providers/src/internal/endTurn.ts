import type { FinishReason, OutputItem, ProviderError, StreamEvent, Usage } from "@sluice/core"
import * as ErrorClassification from "../ErrorClassification.js"
import type { TurnBuilder } from "./turnBuilder.js"

type Out = Array<StreamEvent.StreamEvent>

/**
 * Ends a turn that stopped without the provider's terminal event, like
 * `TurnBuilder.endTruncated`, but keeping the usage that arrived before the cut.
 * Every open item is closed with what it received (`close` builds its final form).
 *
 * @internal
 */
export const endTruncated = (
  builder: TurnBuilder,
  out: Out,
  providerId: string,
  close: (itemId: string, content: string) => OutputItem.OutputItem,
  usage: Usage.Usage
): void => {
  if (builder.isFinished) return
  for (const itemId of builder.openItems()) builder.done(out, itemId, close(itemId, builder.content(itemId)))
  builder.error(out, ErrorClassification.truncated(providerId))
  builder.finish(out, { finishReason: "error", usage })
}

/**
 * Ends a turn with an error event first (when there is one) and then `response_done`.
 *
 * @internal
 */
export const finishWith = (
  builder: TurnBuilder,
  out: Out,
  end: {
    readonly finishReason: FinishReason.FinishReason
    readonly usage: Usage.Usage
    readonly error?: ProviderError.ProviderError | undefined
  }
): void => {
  if (end.error !== undefined) builder.error(out, end.error)
  builder.finish(out, { finishReason: end.finishReason, usage: end.usage })
}

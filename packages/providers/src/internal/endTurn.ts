import type { FinishReason, Json, OutputItem, ProviderError, StreamEvent, TurnBuilder, Usage } from "@sluice/core"
import * as ErrorClassification from "../ErrorClassification.js"

type Out = Array<StreamEvent.StreamEvent>

/**
 * Ends a turn that stopped without the provider's terminal event
 * (`TurnBuilder.endTruncated` with the provider's `stream_truncated` error), keeping the
 * usage that arrived before the cut. Every open item is closed with what it received
 * (`close` builds its final form).
 *
 * @internal
 */
export const endTruncated = (
  builder: TurnBuilder.TurnBuilder,
  out: Out,
  providerId: string,
  close: (itemId: string, content: string) => OutputItem.OutputItem,
  usage: Usage.Usage
): void => {
  if (builder.isFinished) return
  builder.endTruncated(out, ErrorClassification.truncated(providerId), (item) => close(item.id, item.content), usage)
}

/**
 * Ends a turn with an error event first (when there is one) and then `response_done`.
 * `raw` is the provider's own error object for an error that arrived inside the
 * stream: it rides along as the error event's `raw` (docs/events.md#output-items).
 *
 * @internal
 */
export const finishWith = (
  builder: TurnBuilder.TurnBuilder,
  out: Out,
  end: {
    readonly finishReason: FinishReason.FinishReason
    readonly usage: Usage.Usage
    readonly error?: ProviderError.ProviderError | undefined
    readonly raw?: Json.JsonValue | undefined
  }
): void => {
  if (end.error !== undefined) builder.error(out, end.error, end.raw)
  builder.finish(out, { finishReason: end.finishReason, usage: end.usage })
}

/**
 * A reasoning item's text: summary parts and raw `reasoning_text` parts, folded once each. (the OpenAI Responses normalizer, `OpenAiResponses`).
 *
 * @internal
 */
import { OutputItem } from "@sluice/core"

// ---------------------------------------------------------------------------
// Reasoning text
// ---------------------------------------------------------------------------

/** A reasoning item's two kinds of text: `summary` parts and raw `reasoning_text` content parts. */
export type PartKind = OutputItem.ReasoningKind

/**
 * The reasoning text of one item, part by part, as it stands. Every source of a part's
 * text (its deltas, its `.done` event, the content part's `.done`, the finished item)
 * folds into the same slot: a later whole text that extends what arrived adds only the
 * rest, and one that equals it adds nothing, so each piece of text counts once.
 *
 * Both kinds stream, each delta saying its kind (`reasoning_kind`); the item's content
 * is its parts in the order their text began, a blank line between parts.
 */
export interface ReasoningText {
  /** each part's text, by `summary:<summary_index>` / `raw:<content_index>` */
  readonly parts: Map<string, string>
  /** the parts in the order their text began */
  readonly order: Array<{ readonly kind: PartKind; readonly slot: string }>
}

export const emptyReasoning = (): ReasoningText => ({ parts: new Map(), order: [] })

/** The non-empty texts of one kind's parts, by index. */
export const textsOf = (state: ReasoningText, kind: PartKind): Array<string> =>
  [...state.parts.entries()]
    .filter(([slot, text]) => slot.startsWith(`${kind}:`) && text !== "")
    .map(([slot, text]) => [Number(slot.slice(kind.length + 1)), text] as const)
    .sort(([a], [b]) => a - b)
    .map(([, text]) => text)

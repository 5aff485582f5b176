/**
 * A turn as far as its events go: ordered items with their content, the final items,
 * usage, finish reason, status and errors. `step` folds one StreamEvent into a Turn;
 * it is pure, and it never copies an item's content (appending to a string is the only
 * work a delta does), so folding is linear in the size of the stream.
 *
 * @since 0.1.0
 */
import type { FinishReason } from "@sluice/core"
import { EventOrder, OutputItem, StreamEvent, Text, Usage } from "@sluice/core"
import * as Result from "effect/Result"
import { AccumulatorError } from "./AccumulatorError.js"

/**
 * `in_progress` until its `item_done` (`done`), `item_error` (`error`) or
 * `item_cancelled` (`cancelled`).
 *
 * @since 0.1.0
 * @category models
 */
export type ItemStatus = "in_progress" | "done" | "error" | "cancelled"

/**
 * A reasoning item's text kept apart by kind (docs/events.md#output-items): the
 * summaries the provider wrote of the model's thinking, and the raw thinking. Text of
 * no stated kind is raw.
 *
 * @since 0.3.0
 * @category models
 */
export interface ReasoningParts {
  readonly summary: string
  readonly raw: string
}

/**
 * One item of a turn. `contentIndex` is its position among the turn's items, assigned
 * when it starts (docs/views.md#messageaccumulator-over-event-patches). `content` is what its deltas carried (for a function call,
 * the argument text); `final` is the item from its `item_done`. A reasoning item also
 * has `reasoningKind`, the kind its start stated, and `reasoning`, its text by kind
 * (both since 0.2.0).
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnItem {
  readonly id: string
  readonly type: OutputItem.ItemType
  readonly contentIndex: number
  readonly status: ItemStatus
  readonly content: string
  readonly name?: string | undefined
  readonly final?: OutputItem.OutputItem | undefined
  readonly error?: StreamEvent.ErrorObject | undefined
  readonly reasoningKind?: OutputItem.ReasoningKind | undefined
  readonly reasoning?: ReasoningParts | undefined
}

/**
 * `pending` before any event, `streaming` until `response_done`, then that event's
 * status.
 *
 * @since 0.1.0
 * @category models
 */
export type TurnStatus = "pending" | "streaming" | StreamEvent.ResponseStatus

/**
 * The turn so far.
 *
 * @since 0.1.0
 * @category models
 */
export interface Turn {
  readonly runId: string | undefined
  readonly turnId: string | undefined
  readonly threadId: string | undefined
  readonly modelId: string | undefined
  readonly providerId: string | undefined
  readonly status: TurnStatus
  readonly items: ReadonlyArray<TurnItem>
  readonly usage: Usage.Usage
  readonly finishReason: FinishReason.FinishReason | null
  readonly errors: ReadonlyArray<StreamEvent.ErrorObject>
  /**
   * The `provider_metadata` of the turn's `response_done`: what the provider said of the
   * whole response (Anthropic's code-execution `container`).
   *
   * @since 0.3.0
   */
  readonly providerMetadata?: StreamEvent.PayloadOf<"response_done">["provider_metadata"]
  /** item id -> position in `items` */
  readonly index: ReadonlyMap<string, number>
}

/**
 * The turn before any event.
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: Turn = {
  runId: undefined,
  turnId: undefined,
  threadId: undefined,
  modelId: undefined,
  providerId: undefined,
  status: "pending",
  items: [],
  usage: Usage.empty,
  finishReason: null,
  errors: [],
  index: new Map()
}

// The order rules are core's (`EventOrder`); a refusal keeps the accumulator's reason
// names: `TurnEnded` is `EventAfterResponseDone`, `ItemEnded` is `ItemAlreadyDone`.
const refuse = (violation: EventOrder.OrderViolation): Result.Result<Turn, AccumulatorError> =>
  Result.fail(
    new AccumulatorError({
      reason: violation.rule === "TurnEnded"
        ? "EventAfterResponseDone"
        : violation.rule === "ItemEnded"
        ? "ItemAlreadyDone"
        : violation.rule,
      eventId: violation.eventId,
      eventType: violation.eventType,
      message: violation.message,
      ...(violation.itemId === undefined ? {} : { itemId: violation.itemId })
    })
  )

const phaseOf = (status: TurnStatus): EventOrder.TurnPhase =>
  status === "pending" ? "before_start" : status === "streaming" ? "started" : "finished"

const itemStateOf = (item: TurnItem | undefined): EventOrder.ItemState =>
  item === undefined ? "unknown" : item.status === "in_progress" ? "open" : item.status

const noReasoning: ReasoningParts = { summary: "", raw: "" }

// Text of one kind added to a reasoning item's parts (no stated kind is raw).
const addReasoning = (
  parts: ReasoningParts,
  kind: OutputItem.ReasoningKind | undefined,
  text: string
): ReasoningParts =>
  text === ""
    ? parts
    : kind === "summary"
    ? { summary: Text.append(parts.summary, text), raw: parts.raw }
    : { summary: parts.summary, raw: Text.append(parts.raw, text) }

// A reasoning item's parts once its final form came: what streamed when the final
// content is what streamed; the rest of a final content that extends it, of the final's
// kind (else the start's); otherwise the final content whole, of that kind.
const finalReasoning = (
  current: TurnItem | undefined,
  final: OutputItem.ReasoningItem
): ReasoningParts => {
  const kind = final.reasoning_kind ?? current?.reasoningKind
  if (current === undefined) return addReasoning(noReasoning, kind, final.content)
  const parts = current.reasoning ?? noReasoning
  if (final.content === current.content) return parts
  if (final.content.startsWith(current.content)) {
    return addReasoning(parts, kind, final.content.slice(current.content.length))
  }
  return addReasoning(noReasoning, kind, final.content)
}

// Puts `item` at `position`. The order rules already made sure an item is there.
const replaceItem = (turn: Turn, position: number, item: TurnItem): Turn => {
  const items = turn.items.slice()
  items[position] = item
  return { ...turn, items }
}

/**
 * Folds one event into the turn, or refuses it with an `AccumulatorError` naming the
 * event, when it breaks the protocol's order rules (core's `EventOrder`, the same
 * rules the upsert stage applies). An `item_done` for an item that never started adds
 * the item whole (it carries all of it).
 *
 * @since 0.1.0
 * @category folding
 */
export const step = (turn: Turn, event: StreamEvent.StreamEvent): Result.Result<Turn, AccumulatorError> => {
  const payload = event.payload
  const itemId = EventOrder.itemIdOf(payload)
  const position = itemId === undefined ? undefined : turn.index.get(itemId)
  const current = position === undefined ? undefined : turn.items[position]
  const verdict = EventOrder.check(phaseOf(turn.status), itemStateOf(current), event)
  if (verdict._tag === "OrderViolation") return refuse(verdict)
  if (position !== undefined && current !== undefined) {
    switch (payload.type) {
      case "item_delta":
        return Result.succeed(
          replaceItem(turn, position, {
            ...current,
            content: Text.append(current.content, payload.delta_content),
            ...(current.reasoning === undefined ? {} : {
              reasoning: addReasoning(
                current.reasoning,
                payload.reasoning_kind ?? current.reasoningKind,
                payload.delta_content
              )
            })
          })
        )
      case "item_done": {
        const final = payload.final_item
        return Result.succeed(replaceItem(turn, position, {
          ...current,
          status: "done",
          content: OutputItem.streamedContent(final),
          final,
          ...(final.type === "reasoning" ? { reasoning: finalReasoning(current, final) } : {})
        }))
      }
      case "item_cancelled":
        return Result.succeed(replaceItem(turn, position, { ...current, status: "cancelled" }))
      case "item_error": {
        const next = replaceItem(turn, position, { ...current, status: "error", error: payload.error })
        return Result.succeed({ ...next, errors: [...turn.errors, payload.error] })
      }
    }
  }
  switch (payload.type) {
    case "response_start":
      return Result.succeed({
        ...turn,
        status: "streaming",
        runId: event.run_id,
        turnId: payload.turn_id,
        threadId: payload.thread_id,
        modelId: payload.model_id,
        providerId: payload.provider_id
      })
    case "item_start": {
      const index = new Map(turn.index)
      index.set(payload.item_id, turn.items.length)
      const content = payload.initial_content ?? payload.arguments ?? payload.code ?? ""
      const item: TurnItem = {
        id: payload.item_id,
        type: payload.item_type,
        contentIndex: turn.items.length,
        status: "in_progress",
        content,
        name: payload.name,
        ...(payload.item_type === "reasoning"
          ? {
            ...(payload.reasoning_kind === undefined ? {} : { reasoningKind: payload.reasoning_kind }),
            reasoning: addReasoning(noReasoning, payload.reasoning_kind, content)
          }
          : {})
      }
      return Result.succeed({ ...turn, items: [...turn.items, item], index })
    }
    case "item_done": {
      // An item_done for an item that never started: the item, whole.
      const index = new Map(turn.index)
      index.set(payload.item_id, turn.items.length)
      const final = payload.final_item
      const item: TurnItem = {
        id: payload.item_id,
        type: final.type,
        contentIndex: turn.items.length,
        status: "done",
        content: OutputItem.streamedContent(final),
        final,
        ...(final.type === "reasoning" ? { reasoning: finalReasoning(undefined, final) } : {})
      }
      return Result.succeed({ ...turn, items: [...turn.items, item], index })
    }
    // The order rules accept these only for an item that started, handled above.
    case "item_delta":
    case "item_cancelled":
    case "item_error":
      return Result.succeed(turn)
    case "response_error":
      return Result.succeed({ ...turn, errors: [...turn.errors, payload.error] })
    case "response_done":
      return Result.succeed({
        ...turn,
        status: payload.status,
        usage: payload.usage ?? turn.usage,
        finishReason: payload.finish_reason,
        ...(payload.provider_metadata === undefined ? {} : { providerMetadata: payload.provider_metadata })
      })
  }
}

/**
 * Folds a whole sequence of events.
 *
 * @since 0.1.0
 * @category folding
 */
export const fromEvents = (events: Iterable<StreamEvent.StreamEvent>): Result.Result<Turn, AccumulatorError> => {
  let turn = empty
  for (const event of events) {
    const next = step(turn, event)
    if (Result.isFailure(next)) return next
    turn = next.success
  }
  return Result.succeed(turn)
}

/**
 * The finished items of the turn, in the order they started.
 *
 * @since 0.1.0
 * @category accessors
 */
export const finalItems = (turn: Turn): ReadonlyArray<OutputItem.OutputItem> =>
  turn.items.flatMap((item) => (item.final === undefined ? [] : [item.final]))

/**
 * An open item as a turn cut short keeps it: a message or reasoning item with the text
 * that arrived; `undefined` for any other (a tool call cut short is not a call anyone
 * may run). What a turn's ending closes an open item with (its `item_done`).
 *
 * @since 0.3.0
 * @category accessors
 */
export const keptItem = (item: TurnItem): OutputItem.OutputItem | undefined => {
  switch (item.type) {
    case "message":
      return { type: "message", id: item.id, content: item.content, origin: "agent" }
    case "reasoning":
      return { type: "reasoning", id: item.id, content: item.content }
    default:
      return undefined
  }
}

/**
 * The items of a turn that may have been cut short, in the order they started: each
 * finished item, and each open one as `keptItem` keeps it. For a turn that ended, its
 * `finalItems`.
 *
 * @since 0.3.0
 * @category accessors
 */
export const keptItems = (turn: Turn): ReadonlyArray<OutputItem.OutputItem> =>
  turn.items.flatMap((item) => {
    if (item.final !== undefined) return [item.final]
    const kept = item.status === "in_progress" ? keptItem(item) : undefined
    return kept === undefined ? [] : [kept]
  })

/**
 * The turn's item by id.
 *
 * @since 0.1.0
 * @category accessors
 */
export const item = (turn: Turn, itemId: string): TurnItem | undefined => {
  const position = turn.index.get(itemId)
  return position === undefined ? undefined : turn.items[position]
}

/**
 * Whether the turn has ended.
 *
 * @since 0.1.0
 * @category guards
 */
export const isEnded = (turn: Turn): boolean => turn.status !== "pending" && turn.status !== "streaming"

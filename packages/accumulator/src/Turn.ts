/**
 * A turn as far as its events go: ordered items with their content, the final items,
 * usage, finish reason, status and errors. `step` folds one StreamEvent into a Turn;
 * it is pure, and it never copies an item's content (appending to a string is the only
 * work a delta does), so folding is linear in the size of the stream.
 *
 * @since 0.1.0
 */
import type { FinishReason } from "@sluice/core"
import { OutputItem, StreamEvent, Usage } from "@sluice/core"
import * as Either from "effect/Either"
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
 * One item of a turn. `contentIndex` is its position among the turn's items, assigned
 * when it starts (seed 004). `content` is what its deltas carried (for a function call,
 * the argument text); `final` is the item from its `item_done`.
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

const refuse = (
  event: StreamEvent.StreamEvent,
  reason: AccumulatorError["reason"],
  message: string,
  itemId?: string
): Either.Either<Turn, AccumulatorError> =>
  Either.left(
    new AccumulatorError({
      reason,
      eventId: event.event_id,
      eventType: event.type,
      message: `${event.type} ${event.event_id}: ${message}`,
      ...(itemId === undefined ? {} : { itemId })
    })
  )

const replaceItem = (turn: Turn, position: number, item: TurnItem): Turn => {
  const items = turn.items.slice()
  items[position] = item
  return { ...turn, status: "streaming", items }
}


/**
 * Folds one event into the turn, or refuses it with an `AccumulatorError` naming the
 * event. Recoveries: item events before `response_start` are accepted; an `item_done`
 * for an item that never started adds the item whole (it carries all of it).
 *
 * @since 0.1.0
 * @category folding
 */
export const step = (turn: Turn, event: StreamEvent.StreamEvent): Either.Either<Turn, AccumulatorError> => {
  if (turn.status === "complete" || turn.status === "error" || turn.status === "aborted") {
    return refuse(event, "EventAfterResponseDone", "the turn already ended")
  }
  const payload = event.payload
  switch (payload.type) {
    case "response_start":
      return Either.right({
        ...turn,
        status: "streaming",
        runId: event.run_id,
        turnId: payload.turn_id,
        threadId: payload.thread_id,
        modelId: payload.model_id,
        providerId: payload.provider_id
      })
    case "item_start": {
      if (turn.index.has(payload.item_id)) {
        return refuse(event, "DuplicateItem", `item ${payload.item_id} already started`, payload.item_id)
      }
      const index = new Map(turn.index)
      index.set(payload.item_id, turn.items.length)
      const item: TurnItem = {
        id: payload.item_id,
        type: payload.item_type,
        contentIndex: turn.items.length,
        status: "in_progress",
        content: payload.initial_content ?? payload.arguments ?? payload.code ?? "",
        name: payload.name
      }
      return Either.right({ ...turn, status: "streaming", runId: turn.runId ?? event.run_id, items: [...turn.items, item], index })
    }
    case "item_delta": {
      const position = turn.index.get(payload.item_id)
      if (position === undefined) return refuse(event, "UnknownItem", `no item ${payload.item_id} has started`, payload.item_id)
      const item = turn.items[position]!
      if (item.status !== "in_progress") {
        return refuse(event, "ItemAlreadyDone", `item ${payload.item_id} is already ${item.status}`, payload.item_id)
      }
      return Either.right(replaceItem(turn, position, { ...item, content: item.content + payload.delta_content }))
    }
    case "item_done": {
      const position = turn.index.get(payload.item_id)
      if (position === undefined) {
        const index = new Map(turn.index)
        index.set(payload.item_id, turn.items.length)
        const item: TurnItem = {
          id: payload.item_id,
          type: payload.final_item.type,
          contentIndex: turn.items.length,
          status: "done",
          content: OutputItem.streamedContent(payload.final_item),
          final: payload.final_item
        }
        return Either.right({ ...turn, status: "streaming", items: [...turn.items, item], index })
      }
      const item = turn.items[position]!
      if (item.status !== "in_progress") {
        return refuse(event, "ItemAlreadyDone", `item ${payload.item_id} is already ${item.status}`, payload.item_id)
      }
      return Either.right(
        replaceItem(turn, position, { ...item, status: "done", content: OutputItem.streamedContent(payload.final_item), final: payload.final_item })
      )
    }
    case "item_error":
    case "item_cancelled": {
      const position = turn.index.get(payload.item_id)
      if (position === undefined) return refuse(event, "UnknownItem", `no item ${payload.item_id} has started`, payload.item_id)
      const item = turn.items[position]!
      if (item.status !== "in_progress") {
        return refuse(event, "ItemAlreadyDone", `item ${payload.item_id} is already ${item.status}`, payload.item_id)
      }
      if (payload.type === "item_cancelled") return Either.right(replaceItem(turn, position, { ...item, status: "cancelled" }))
      const next = replaceItem(turn, position, { ...item, status: "error", error: payload.error })
      return Either.right({ ...next, errors: [...turn.errors, payload.error] })
    }
    case "response_error":
      return Either.right({ ...turn, status: "streaming", errors: [...turn.errors, payload.error] })
    case "response_done":
      return Either.right({
        ...turn,
        status: payload.status,
        usage: payload.usage ?? turn.usage,
        finishReason: payload.finish_reason
      })
  }
}

/**
 * Folds a whole sequence of events.
 *
 * @since 0.1.0
 * @category folding
 */
export const fromEvents = (events: Iterable<StreamEvent.StreamEvent>): Either.Either<Turn, AccumulatorError> => {
  let turn = empty
  for (const event of events) {
    const next = step(turn, event)
    if (Either.isLeft(next)) return next
    turn = next.right
  }
  return Either.right(turn)
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

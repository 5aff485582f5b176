/**
 * The order rules of the event protocol, stated once: which StreamEvent may follow
 * which. Every fold of StreamEvents (the accumulator's `Turn.step`, the upsert stage)
 * asks `check` before it applies an event, so no two folds can accept different
 * sequences.
 *
 * A turn is `before_start` until `response_start`, `started` until `response_done`,
 * then `finished`. An item is `unknown` until its `item_start`, `open` until its
 * `item_done`, `item_error` or `item_cancelled`, then `done`, `error` or `cancelled`.
 *
 * | event | turn | item | rule broken |
 * |---|---|---|---|
 * | `response_start` | `started` | | `AlreadyStarted` |
 * | anything but `response_start` | `before_start` | | `NotStarted` |
 * | anything | `finished` | | `TurnEnded` |
 * | `item_start` | `started` | not `unknown` | `DuplicateItem` |
 * | `item_delta`, `item_error`, `item_cancelled` | `started` | `unknown` | `UnknownItem` |
 * | `item_delta`, `item_done`, `item_error`, `item_cancelled` | `started` | `done`, `error`, `cancelled` | `ItemEnded` |
 *
 * Everything else is accepted. In particular an `item_done` for an item that never
 * started is accepted (it carries the whole item), `response_error` may come any
 * number of times while the turn is `started`, and `response_done` may end a turn
 * whose items are still open.
 *
 * `check` is the rule itself, for folds that keep their own turn and item state: it
 * allocates nothing when it accepts. `step` is the same rules as a small state machine
 * of its own, for callers that keep no state.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { Payload, StreamEvent } from "./StreamEvent.js"

/**
 * Where the turn is: before its `response_start`, between it and `response_done`, or
 * after `response_done`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TurnPhase = Schema.Literals(["before_start", "started", "finished"])

/**
 * @since 0.1.0
 * @category models
 */
export type TurnPhase = typeof TurnPhase.Type

/**
 * Where one item is: not started (`unknown`), started and not ended (`open`), or
 * ended by `item_done` (`done`), `item_error` (`error`) or `item_cancelled`
 * (`cancelled`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ItemState = Schema.Literals(["unknown", "open", "done", "error", "cancelled"])

/**
 * @since 0.1.0
 * @category models
 */
export type ItemState = typeof ItemState.Type

/**
 * The rule an event breaks (see the module's table).
 *
 * - `NotStarted`: an item or turn-end event before `response_start`.
 * - `AlreadyStarted`: a second `response_start`.
 * - `TurnEnded`: any event after `response_done`.
 * - `UnknownItem`: an `item_delta`, `item_error` or `item_cancelled` for an item that
 *   never started.
 * - `DuplicateItem`: an `item_start` for an item that already started.
 * - `ItemEnded`: an item event other than `item_start` for an item that already ended.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Rule = Schema.Literals([
  "NotStarted",
  "AlreadyStarted",
  "TurnEnded",
  "UnknownItem",
  "DuplicateItem",
  "ItemEnded"
])

/**
 * @since 0.1.0
 * @category models
 */
export type Rule = typeof Rule.Type

/**
 * The refusal: the rule broken, the event (id and type), its item and that item's
 * state when the event names one. `detail` says what was wrong in a few words
 * ("the item is already done"); `message` adds the event and item to it.
 *
 * @since 0.1.0
 * @category errors
 */
export class OrderViolation extends Schema.TaggedError<OrderViolation>()("OrderViolation", {
  rule: Rule,
  eventId: Schema.String,
  eventType: Schema.String,
  itemId: Schema.optionalKey(Schema.String),
  itemState: Schema.optionalKey(ItemState),
  detail: Schema.String,
  message: Schema.String
}) {}

/**
 * The verdict of an accepted event. One shared value: accepting allocates nothing.
 *
 * @since 0.1.0
 * @category models
 */
export interface Accepted {
  readonly _tag: "Accepted"
}

/**
 * The one `Accepted` value.
 *
 * @since 0.1.0
 * @category constructors
 */
export const accepted: Accepted = Object.freeze({ _tag: "Accepted" })

/**
 * What `check` decides: the event is `Accepted`, or refused with the `OrderViolation`
 * naming the rule.
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict = Accepted | OrderViolation

/**
 * The item an event is about, or `undefined` for turn events (`response_*`).
 *
 * @since 0.1.0
 * @category accessors
 */
export const itemIdOf = (payload: Payload): string | undefined => {
  switch (payload.type) {
    case "item_start":
    case "item_delta":
    case "item_done":
    case "item_error":
    case "item_cancelled":
      return payload.item_id
    default:
      return undefined
  }
}

const refuse = (event: StreamEvent, rule: Rule, itemState: ItemState, detail: string): OrderViolation => {
  const itemId = itemIdOf(event.payload)
  return new OrderViolation({
    rule,
    eventId: event.event_id,
    eventType: event.type,
    ...(itemId === undefined ? {} : { itemId, itemState }),
    detail,
    message: `${event.type} ${event.event_id}${itemId === undefined ? "" : ` for item "${itemId}"`}: ${detail}`
  })
}

/**
 * The order rules: whether `event` may come next, given the turn's phase and the
 * state of the item it names (`"unknown"` for an item never seen, and for turn
 * events, which name none).
 *
 * @since 0.1.0
 * @category rules
 */
export const check = (phase: TurnPhase, item: ItemState, event: StreamEvent): Verdict => {
  const type = event.payload.type
  if (phase === "finished") return refuse(event, "TurnEnded", item, "the turn already ended with response_done")
  if (type === "response_start") {
    return phase === "before_start" ? accepted : refuse(event, "AlreadyStarted", item, "the turn has already started")
  }
  if (phase === "before_start") return refuse(event, "NotStarted", item, "no response_start before it")
  switch (type) {
    case "response_done":
    case "response_error":
      return accepted
    case "item_start":
      return item === "unknown" ? accepted : refuse(event, "DuplicateItem", item, `the item is already ${item}`)
    case "item_done":
      return item === "unknown" || item === "open"
        ? accepted
        : refuse(event, "ItemEnded", item, `the item is already ${item}`)
    case "item_delta":
    case "item_error":
    case "item_cancelled":
      return item === "open"
        ? accepted
        : item === "unknown"
        ? refuse(event, "UnknownItem", item, "no open item with this id")
        : refuse(event, "ItemEnded", item, `the item is already ${item}`)
  }
}

/**
 * The turn's phase after an accepted event.
 *
 * @since 0.1.0
 * @category rules
 */
export const phaseAfter = (phase: TurnPhase, payload: Payload): TurnPhase =>
  payload.type === "response_start" ? "started" : payload.type === "response_done" ? "finished" : phase

/**
 * The state of the event's item after the event was accepted (`item` is its state
 * before; turn events leave it as it was).
 *
 * @since 0.1.0
 * @category rules
 */
export const itemStateAfter = (item: ItemState, payload: Payload): ItemState => {
  switch (payload.type) {
    case "item_start":
      return "open"
    case "item_done":
      return "done"
    case "item_error":
      return "error"
    case "item_cancelled":
      return "cancelled"
    default:
      return item
  }
}

/**
 * What the order rules need to know of a turn: its phase and the state of every item
 * seen so far.
 *
 * @since 0.1.0
 * @category models
 */
export interface State {
  readonly phase: TurnPhase
  readonly items: ReadonlyMap<string, ItemState>
}

/**
 * A turn before any event.
 *
 * @since 0.1.0
 * @category constructors
 */
export const initial: State = { phase: "before_start", items: new Map() }

/**
 * The state of an item (`"unknown"` when never seen).
 *
 * @since 0.1.0
 * @category accessors
 */
export const itemState = (state: State, itemId: string): ItemState => state.items.get(itemId) ?? "unknown"

/**
 * Applies one event: the next state, or the `OrderViolation` refusing it. Pure: the
 * state given is never changed.
 *
 * @since 0.1.0
 * @category rules
 */
export const step = (state: State, event: StreamEvent): Result.Result<State, OrderViolation> => {
  const itemId = itemIdOf(event.payload)
  const before = itemId === undefined ? "unknown" : itemState(state, itemId)
  const verdict = check(state.phase, before, event)
  if (verdict._tag === "OrderViolation") return Result.fail(verdict)
  const phase = phaseAfter(state.phase, event.payload)
  if (itemId === undefined) return Result.succeed(phase === state.phase ? state : { ...state, phase })
  const after = itemStateAfter(before, event.payload)
  if (after === before) return Result.succeed(state)
  const items = new Map(state.items)
  items.set(itemId, after)
  return Result.succeed({ phase, items })
}

/**
 * Applies a whole sequence: the final state, or the first refusal.
 *
 * @since 0.1.0
 * @category rules
 */
export const fromEvents = (events: Iterable<StreamEvent>): Result.Result<State, OrderViolation> => {
  let state = initial
  for (const event of events) {
    const next = step(state, event)
    if (Result.isFailure(next)) return next
    state = next.success
  }
  return Result.succeed(state)
}

/**
 * The stage's state and its transitions, pure: an event (or a timer tick) and the
 * current state give the next state, the payloads to emit and the timers to arm or
 * disarm. The Stream stage and the Promise facade both run these, so they cannot
 * disagree.
 */
import { EventOrder, type StreamEvent } from "@sluice/core"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as ItemBuffer from "../ItemBuffer.js"
import { UnexpectedEvent } from "../UpsertErrors.js"
import type { ResolvedOptions } from "../UpsertOptions.js"
import * as Payloads from "./payloads.js"

/**
 * One open item: its buffer, when its fallback timer is due, and whether a timer fiber
 * is watching it.
 *
 * @internal
 */
export interface Slot {
  readonly buffer: ItemBuffer.ItemBuffer
  /** Start order, for flushing items in the order they began. */
  readonly seq: number
  /** Clock time (ms) at which unemitted content is emitted anyway. */
  readonly deadline: number
  readonly armed: boolean
}

/** @internal */
export interface TurnState {
  readonly phase: "idle" | "open" | "ended"
  readonly meta: Payloads.TurnMeta | undefined
  readonly slots: HashMap.HashMap<string, Slot>
  /** The items that ended (`item_done`, `item_error`, `item_cancelled`), and how. */
  readonly ended: HashMap.HashMap<string, EventOrder.ItemState>
  readonly nextSeq: number
  /** Whether a `turn_error` was emitted. */
  readonly errored: boolean
}

/** @internal */
export const initial: TurnState = {
  phase: "idle",
  meta: undefined,
  slots: HashMap.empty(),
  ended: HashMap.empty(),
  nextSeq: 0,
  errored: false
}

/**
 * What one transition asks of its runner, collected while it runs.
 *
 * @internal
 */
export interface Effects {
  readonly out: Array<Payloads.UIPayload>
  /** Items that now need a timer fiber. */
  readonly arm: Array<string>
  /** Items whose timer fiber is to be stopped. */
  readonly disarm: Array<string>
}

/** @internal */
export const makeEffects = (): Effects => ({ out: [], arm: [], disarm: [] })

// The order rules are core's (`EventOrder`); a refusal keeps this stage's message form.
const unexpected = (violation: EventOrder.OrderViolation): UnexpectedEvent =>
  new UnexpectedEvent({
    eventType: violation.eventType,
    ...(violation.itemId === undefined ? {} : { itemId: violation.itemId }),
    reason: violation.rule,
    message: `${violation.eventType}${
      violation.itemId === undefined ? "" : ` for item "${violation.itemId}"`
    }: ${violation.detail}`
  })

const phaseOf = (phase: TurnState["phase"]): EventOrder.TurnPhase =>
  phase === "idle" ? "before_start" : phase === "open" ? "started" : "finished"

// The item's state for the order rules: `open` while it has a slot.
const itemStateOf = (state: TurnState, itemId: string | undefined, slot: Option.Option<Slot>): EventOrder.ItemState => {
  if (slot._tag === "Some") return "open"
  if (itemId === undefined) return "unknown"
  const ended = HashMap.get(state.ended, itemId)
  return ended._tag === "Some" ? ended.value : "unknown"
}

// User messages are held until item_done so that they are shown once, with the right
// origin (docs/upserts.md): a message is a user's when its id names one ("run-123-user-prompt",
// "user_1") or its item_start says `origin: "user"`.
const userMessageId = /(?:^|[-_.:])user(?:[-_.:]|$)/i

const isUserMessage = (payload: StreamEvent.PayloadOf<"item_start">): boolean =>
  payload.origin === "user" || userMessageId.test(payload.item_id)

const heldAtStart = (payload: StreamEvent.PayloadOf<"item_start">): boolean =>
  payload.item_type === "message"
    ? isUserMessage(payload)
    : payload.item_type !== "reasoning" && payload.item_type !== "compaction"

const initialContent = (payload: StreamEvent.PayloadOf<"item_start">): string => {
  switch (payload.item_type) {
    case "function_call":
      return payload.arguments ?? payload.initial_content ?? ""
    case "script_execution":
      return payload.code ?? payload.initial_content ?? ""
    default:
      return payload.initial_content ?? ""
  }
}

// Emits the buffer's whole content (`created` the first time, `updated` after) and
// moves past every gradient threshold the content has reached.
const emit = (
  meta: Payloads.TurnMeta,
  buffer: ItemBuffer.ItemBuffer,
  options: ResolvedOptions,
  fx: Effects
): ItemBuffer.ItemBuffer => {
  fx.out.push(Payloads.fromBuffer(meta, buffer, buffer.createdEmitted ? "updated" : "created"))
  return ItemBuffer.advancePastReached(ItemBuffer.markEmitted(ItemBuffer.markCreatedEmitted(buffer)), options.gradient)
}

const slotsInOrder = (state: TurnState): Array<readonly [string, Slot]> =>
  Array.from(state.slots).sort((a, b) => a[1].seq - b[1].seq)

/**
 * Emits the unemitted content of every open item, held ones included; items stay open.
 *
 * @internal
 */
export const flush = (state: TurnState, options: ResolvedOptions, fx: Effects): TurnState => {
  const meta = state.meta
  if (state.phase !== "open" || meta === undefined) return state
  let slots = state.slots
  for (const [itemId, slot] of slotsInOrder(state)) {
    if (!ItemBuffer.hasUnemittedContent(slot.buffer)) continue
    slots = HashMap.set(slots, itemId, { ...slot, buffer: emit(meta, slot.buffer, options, fx) })
  }
  return { ...state, slots }
}

// Flushes, stops every timer and ends the turn, with `turn_completed` when a status
// is given.
const end = (
  state: TurnState,
  status: StreamEvent.ResponseStatus | undefined,
  usage: StreamEvent.PayloadOf<"response_done">["usage"],
  options: ResolvedOptions,
  fx: Effects
): TurnState => {
  const flushed = flush(state, options, fx)
  for (const [itemId, slot] of flushed.slots) if (slot.armed) fx.disarm.push(itemId)
  if (flushed.meta !== undefined && status !== undefined) {
    fx.out.push(Payloads.turnCompleted(flushed.meta, status, usage))
  }
  return { ...flushed, phase: "ended", slots: HashMap.empty() }
}

/**
 * The input ended (or was interrupted) before `response_done`: flushes and ends the
 * turn as `aborted`, or silently when a `turn_error` already told the UI how it ended.
 * Does nothing when the turn never started or already ended.
 *
 * @internal
 */
export const abort = (state: TurnState, options: ResolvedOptions, fx: Effects): TurnState =>
  state.phase === "open" ? end(state, state.errored ? undefined : "aborted", undefined, options, fx) : state

// Ends an item: removes its slot, stopping its timer, and remembers how it ended.
const close = (state: TurnState, itemId: string, how: EventOrder.ItemState, fx: Effects): TurnState => {
  const ended = HashMap.set(state.ended, itemId, how)
  const slot = HashMap.get(state.slots, itemId)
  if (slot._tag === "None") return { ...state, ended }
  if (slot.value.armed) fx.disarm.push(itemId)
  return { ...state, slots: HashMap.remove(state.slots, itemId), ended }
}

/**
 * Applies one event.
 *
 * @internal
 */
export const step = (
  state: TurnState,
  event: StreamEvent.StreamEvent,
  now: number,
  options: ResolvedOptions,
  fx: Effects
): Result.Result<TurnState, UnexpectedEvent> => {
  const payload = event.payload
  const itemId = EventOrder.itemIdOf(payload)
  const found: Option.Option<Slot> = itemId === undefined ? Option.none() : HashMap.get(state.slots, itemId)
  const verdict = EventOrder.check(phaseOf(state.phase), itemStateOf(state, itemId, found), event)
  if (verdict._tag === "OrderViolation") return Result.fail(unexpected(verdict))
  if (payload.type === "response_start") {
    const meta: Payloads.TurnMeta = {
      turnId: options.turnId ?? payload.turn_id,
      threadId: options.threadId ?? payload.thread_id,
      modelId: payload.model_id,
      providerId: payload.provider_id
    }
    fx.out.push(Payloads.turnStarted(meta))
    return Result.succeed({ ...state, phase: "open", meta })
  }
  const meta = state.meta
  // The order rules let no other event before response_start, which sets `meta`.
  if (meta === undefined) return Result.succeed(state)
  switch (payload.type) {
    case "item_start": {
      const held = heldAtStart(payload)
      let buffer = ItemBuffer.make(payload.item_id, Payloads.uiItemType(payload.item_type), {
        initialContent: initialContent(payload),
        isHeld: held,
        origin: payload.item_type === "message" ? (held ? "user" : (payload.origin ?? "agent")) : undefined,
        providerId: payload.item_type === "reasoning" || payload.item_type === "compaction"
          ? meta.providerId
          : undefined,
        toolName: payload.item_type === "script_execution" ? "script_execution" : payload.name
      })
      if (!held && ItemBuffer.hasUnemittedContent(buffer)) buffer = emit(meta, buffer, options, fx)
      const slot: Slot = { buffer, seq: state.nextSeq, deadline: now + options.batchTimeoutMs, armed: false }
      return Result.succeed({
        ...state,
        slots: HashMap.set(state.slots, payload.item_id, slot),
        nextSeq: state.nextSeq + 1
      })
    }
    case "item_delta": {
      if (found._tag === "None") return Result.succeed(state)
      const slot = found.value
      let buffer = ItemBuffer.appendContent(slot.buffer, payload.delta_content)
      let armed = slot.armed
      if (!buffer.held && ItemBuffer.hasUnemittedContent(buffer)) {
        if (!buffer.createdEmitted || ItemBuffer.reachedThreshold(buffer, options.gradient)) {
          buffer = emit(meta, buffer, options, fx)
        } else if (!armed) {
          armed = true
          fx.arm.push(payload.item_id)
        }
      }
      const next: Slot = { buffer, seq: slot.seq, deadline: now + options.batchTimeoutMs, armed }
      return Result.succeed({ ...state, slots: HashMap.set(state.slots, payload.item_id, next) })
    }
    case "item_done": {
      const buffer = found._tag === "Some" ? found.value.buffer : undefined
      fx.out.push(Payloads.fromFinalItem(meta, payload.item_id, payload.final_item, buffer))
      return Result.succeed(close(state, payload.item_id, "done", fx))
    }
    case "item_error": {
      const buffer = found._tag === "Some" ? found.value.buffer : undefined
      fx.out.push(Payloads.fromItemError(meta, payload.item_id, payload.error, buffer))
      return Result.succeed(close(state, payload.item_id, "error", fx))
    }
    case "item_cancelled":
      return Result.succeed(close(state, payload.item_id, "cancelled", fx))
    case "response_done":
      return Result.succeed(end(state, payload.status, payload.usage, options, fx))
    case "response_error": {
      const flushed = flush(state, options, fx)
      fx.out.push(Payloads.turnError(meta, payload.error))
      return Result.succeed({ ...flushed, errored: true })
    }
  }
}

/**
 * What a timer tick decided: the next state, and how long to sleep before looking
 * again (`0` when the timer is done).
 *
 * @internal
 */
export interface Tick {
  readonly state: TurnState
  readonly remaining: number
}

/**
 * A timer looks at its item: if the item is due, its unemitted content is emitted as
 * `updated` and the timer is done; if deltas moved the deadline, it sleeps again.
 *
 * @internal
 */
export const tick = (state: TurnState, itemId: string, now: number, options: ResolvedOptions, fx: Effects): Tick => {
  const found = HashMap.get(state.slots, itemId)
  const meta = state.meta
  if (state.phase !== "open" || meta === undefined || found._tag === "None" || !found.value.armed) {
    return { state, remaining: 0 }
  }
  const slot = found.value
  if (now < slot.deadline) return { state, remaining: slot.deadline - now }
  const buffer = ItemBuffer.hasUnemittedContent(slot.buffer) && !slot.buffer.held
    ? emit(meta, slot.buffer, options, fx)
    : slot.buffer
  return {
    state: { ...state, slots: HashMap.set(state.slots, itemId, { ...slot, buffer, armed: false }) },
    remaining: 0
  }
}

/**
 * A timer fiber stopped without a decision (its delivery failed): the item is no
 * longer watched, so the next delta arms a new timer.
 *
 * @internal
 */
export const disarmed = (state: TurnState, itemId: string): TurnState => {
  const found = HashMap.get(state.slots, itemId)
  return found._tag === "Some" && found.value.armed
    ? { ...state, slots: HashMap.set(state.slots, itemId, { ...found.value, armed: false }) }
    : state
}

/**
 * The buffers of the open items, in start order.
 *
 * @internal
 */
export const buffers = (state: TurnState): Array<ItemBuffer.ItemBuffer> =>
  slotsInOrder(state).map(([, slot]) => slot.buffer)

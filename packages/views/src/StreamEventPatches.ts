/**
 * A mapper from Sluice StreamEvents to docs/views.md's event patches, so any provider's
 * stream can drive the message accumulator.
 *
 * | event | patches |
 * |---|---|
 * | `response_start` | `message_start {id: response_id, model: model_id, role}` |
 * | message item | `text_start` / `text_delta` / `text_end` |
 * | reasoning item | `reasoning_*`; `reasoning_end` carries the final item's `signature` |
 * | function call item | `tool_start {id: call_id, name, tool_type: "function"}`, `tool_end` |
 * | function call output item | `tool_result_start {tool_use_id: call_id}`, `tool_result_end` |
 * | provider-executed call or output (`provider_executed`) | the same, with `provider_executed: true`: the accumulator makes them `provider_tool_call` / `provider_tool_result` blocks |
 * | `response_error` | `message_delta {stop_reason: "error", error_message}` |
 * | `response_done` | `message_delta {stop_reason: finish_reason, usage}`, `message_end` |
 *
 * Serializing: docs/views.md's accumulator cannot follow two open blocks of one type, while
 * StreamEvents may interleave items (parallel tool calls, say). The mapper therefore
 * keeps one live item per block type and buffers the deltas of the others, flushing
 * each in start order once the one before it is done. Text and reasoning stream as they
 * arrive; a function call or its output is pushed once its `item_done` names its
 * `call_id` (the arguments arrive whole in `tool_start`).
 *
 * Items that end without a final item: a cancelled item that is not live yet is
 * dropped (a live one is ended with what it streamed); an item that failed
 * (`item_error`) or was still open at `response_done` is ended with what it streamed
 * when it is text or reasoning, and dropped when it is a tool call or output (it has no
 * call id). Error and script items have no patch. An item's final content must extend
 * what its deltas carried, or the mapper fails with `ContentMismatch`; out-of-order
 * events fail it as they fail the turn accumulator (`UnknownItem`, `DuplicateItem`,
 * `ItemAlreadyDone`).
 *
 * @since 0.3.0
 */
import { type OutputItem, type StreamEvent, Text } from "@sluice/core"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import type * as EventPatch from "./EventPatch.js"
import { chunkedFold } from "./internal/chunkedFold.js"
import { MessageAccumulatorError } from "./MessageAccumulatorError.js"

type Patch = EventPatch.EventPatchInput
type Kind = "text" | "reasoning" | "tool" | "tool_result"

interface PendingItem {
  readonly id: string
  readonly kind: Kind
  /** deltas held while the item waits for its turn */
  held: Array<string>
  /** everything its deltas carried */
  streamed: string
  live: boolean
  done: boolean
  cancelled: boolean
  final: OutputItem.OutputItem | undefined
}

/**
 * The mapper's state: the items of the turn not yet fully pushed, per block type.
 *
 * @since 0.3.0
 * @category models
 */
export interface MapperState {
  readonly items: Map<string, PendingItem>
  readonly queues: Record<Kind, Array<string>>
  /** items without patches (errors, scripts) */
  readonly ignored: Set<string>
  /** items already pushed whole or dropped */
  readonly settled: Set<string>
}

const kindOf = (type: OutputItem.ItemType): Kind | undefined => {
  switch (type) {
    case "message":
      return "text"
    case "reasoning":
      return "reasoning"
    case "function_call":
      return "tool"
    case "function_call_output":
      return "tool_result"
    default:
      return undefined
  }
}

const streamsLive = (kind: Kind): boolean => kind === "text" || kind === "reasoning"

const contentOf = (final: OutputItem.OutputItem): string => {
  switch (final.type) {
    case "message":
    case "reasoning":
      return final.content
    case "function_call":
      return final.arguments
    case "function_call_output":
      return final.output
    default:
      return ""
  }
}

/**
 * A fresh mapper state.
 *
 * @since 0.3.0
 * @category constructors
 */
export const initial = (): MapperState => ({
  items: new Map(),
  queues: { text: [], reasoning: [], tool: [], tool_result: [] },
  ignored: new Set(),
  settled: new Set()
})

const providerExecuted = (
  final: OutputItem.FunctionCallItem | OutputItem.FunctionCallOutputItem
): { readonly provider_executed?: true } => final.provider_executed === true ? { provider_executed: true } : {}

const startPatch = (item: PendingItem, delta: string): Patch | undefined => {
  const final = item.final
  switch (item.kind) {
    case "text":
      return { type: "text_start", delta }
    case "reasoning":
      return { type: "reasoning_start", delta }
    case "tool":
      return final?.type === "function_call"
        ? {
          type: "tool_start",
          id: final.call_id,
          name: final.name,
          tool_type: "function",
          ...providerExecuted(final),
          delta
        }
        : undefined
    case "tool_result":
      return final?.type === "function_call_output"
        ? { type: "tool_result_start", tool_use_id: final.call_id, ...providerExecuted(final), delta }
        : undefined
  }
}

const endPatch = (item: PendingItem, delta: string): Patch => {
  switch (item.kind) {
    case "text":
      return { type: "text_end", delta }
    case "reasoning":
      return {
        type: "reasoning_end",
        delta,
        signature: item.final?.type === "reasoning" ? (item.final.signature ?? "") : ""
      }
    case "tool":
      return { type: "tool_end", delta }
    case "tool_result":
      return { type: "tool_result_end", delta }
  }
}

const deltaPatch = (kind: Kind, delta: string): Patch => {
  switch (kind) {
    case "text":
      return { type: "text_delta", delta }
    case "reasoning":
      return { type: "reasoning_delta", delta }
    case "tool":
      return { type: "tool_delta", delta }
    case "tool_result":
      return { type: "tool_result_delta", delta }
  }
}

/** Pushes what can be pushed of a block type's queue, in start order. */
const flush = (
  state: MapperState,
  kind: Kind,
  out: Array<Patch>,
  mismatch: (item: PendingItem) => MessageAccumulatorError
) => {
  const queue = state.queues[kind]
  while (queue.length > 0) {
    const item = state.items.get(queue[0]!)!
    if (!item.live) {
      if (item.cancelled) {
        queue.shift()
        state.items.delete(item.id)
        state.settled.add(item.id)
        continue
      }
      if (!item.done && !streamsLive(kind)) return undefined
      const whole = item.final === undefined ? item.streamed : contentOf(item.final)
      const start = startPatch(item, item.final === undefined ? item.held.join("") : whole)
      if (start === undefined) {
        queue.shift()
        state.items.delete(item.id)
        state.settled.add(item.id)
        continue
      }
      if (item.final !== undefined && !whole.startsWith(item.streamed) && streamsLive(kind)) return mismatch(item)
      out.push(start)
      item.live = true
      item.held = []
      item.streamed = whole
    }
    if (!item.done) return undefined
    const full = item.final === undefined ? item.streamed : contentOf(item.final)
    if (!full.startsWith(item.streamed)) return mismatch(item)
    out.push(endPatch(item, full.slice(item.streamed.length)))
    queue.shift()
    state.items.delete(item.id)
    state.settled.add(item.id)
  }
  return undefined
}

const kinds: ReadonlyArray<Kind> = ["text", "reasoning", "tool", "tool_result"]

/**
 * Maps one event to its patches, updating the mapper state in place. Refuses an item
 * whose final content does not extend its deltas.
 *
 * @since 0.3.0
 * @category mapping
 */
export const map = (
  state: MapperState,
  event: StreamEvent.StreamEvent
): Result.Result<ReadonlyArray<Patch>, MessageAccumulatorError> => {
  const out: Array<Patch> = []
  const mismatch = (item: PendingItem) =>
    new MessageAccumulatorError({
      reason: "ContentMismatch",
      patchType: event.type,
      message:
        `${event.type} ${event.event_id}: the final content of item ${item.id} does not extend what its deltas carried`
    })
  const refuse = (reason: "UnknownItem" | "DuplicateItem" | "ItemAlreadyDone", detail: string) =>
    Result.fail(
      new MessageAccumulatorError({
        reason,
        patchType: event.type,
        message: `${event.type} ${event.event_id}: ${detail}`
      })
    )
  const unknown = (itemId: string) =>
    state.ignored.has(itemId)
      ? Result.succeed(out)
      : state.settled.has(itemId)
      ? refuse("ItemAlreadyDone", `item ${itemId} is already done`)
      : refuse("UnknownItem", `no item ${itemId} has started`)
  const settle = (kind: Kind) => {
    const error = flush(state, kind, out, mismatch)
    return error === undefined ? Result.succeed(out) : Result.fail(error)
  }
  const payload = event.payload
  switch (payload.type) {
    case "response_start":
      return Result.succeed([{
        type: "message_start",
        delta: { id: payload.response_id, model: payload.model_id, role: "assistant" }
      }])
    case "item_start": {
      const kind = kindOf(payload.item_type)
      if (
        state.items.has(payload.item_id) || state.settled.has(payload.item_id) || state.ignored.has(payload.item_id)
      ) {
        return refuse("DuplicateItem", `item ${payload.item_id} already started`)
      }
      if (kind === undefined) {
        state.ignored.add(payload.item_id)
        return Result.succeed(out)
      }
      const initialContent = payload.initial_content ?? payload.arguments ?? ""
      state.items.set(payload.item_id, {
        id: payload.item_id,
        kind,
        held: initialContent === "" ? [] : [initialContent],
        streamed: initialContent,
        live: false,
        done: false,
        cancelled: false,
        final: undefined
      })
      state.queues[kind].push(payload.item_id)
      return settle(kind)
    }
    case "item_delta": {
      const item = state.items.get(payload.item_id)
      if (item === undefined) return unknown(payload.item_id)
      if (item.done) return refuse("ItemAlreadyDone", `item ${item.id} is already done`)
      item.streamed = Text.append(item.streamed, payload.delta_content)
      if (item.live) {
        if (payload.delta_content !== "") out.push(deltaPatch(item.kind, payload.delta_content))
      } else {
        item.held.push(payload.delta_content)
      }
      return Result.succeed(out)
    }
    case "item_done": {
      const kind = kindOf(payload.final_item.type)
      if (kind === undefined) {
        state.ignored.add(payload.item_id)
        return Result.succeed(out)
      }
      if (state.settled.has(payload.item_id)) {
        return refuse("ItemAlreadyDone", `item ${payload.item_id} is already done`)
      }
      const known = state.items.get(payload.item_id)
      if (known?.done === true) return refuse("ItemAlreadyDone", `item ${payload.item_id} is already done`)
      const item: PendingItem = known ?? {
        id: payload.item_id,
        kind,
        held: [],
        streamed: "",
        live: false,
        done: false,
        cancelled: false,
        final: undefined
      }
      if (known === undefined) {
        state.items.set(item.id, item)
        state.queues[kind].push(item.id)
      }
      item.done = true
      item.final = payload.final_item
      return settle(item.kind)
    }
    case "item_error":
    case "item_cancelled": {
      const item = state.items.get(payload.item_id)
      if (item === undefined) return unknown(payload.item_id)
      if (item.done) return refuse("ItemAlreadyDone", `item ${item.id} is already done`)
      item.done = true
      if (payload.type === "item_cancelled" && !item.live) item.cancelled = true
      return settle(item.kind)
    }
    case "response_error":
      return Result.succeed([{
        type: "message_delta",
        delta: { stop_reason: "error", error_message: payload.error.message }
      }])
    case "response_done": {
      for (const item of state.items.values()) item.done = true
      for (const kind of kinds) {
        const error = flush(state, kind, out, mismatch)
        if (error !== undefined) return Result.fail(error)
      }
      const usage = payload.usage
      out.push({
        type: "message_delta",
        delta: payload.finish_reason === null ? {} : { stop_reason: payload.finish_reason },
        ...(usage === undefined
          ? {}
          : {
            usage: {
              input: usage.input,
              output: usage.output,
              cache_read: usage.cacheRead,
              cache_write: usage.cacheWrite,
              total: usage.total
            }
          })
      })
      out.push({ type: "message_end" })
      return Result.succeed(out)
    }
  }
}

/**
 * A `Stream` transformer from StreamEvents to patches, ready for
 * `MessageAccumulator.accumulate`.
 *
 * @since 0.3.0
 * @category stages
 */
export const fromStreamEvents = <E, R>(
  self: Stream.Stream<StreamEvent.StreamEvent, E, R>
): Stream.Stream<Patch, E | MessageAccumulatorError, R> =>
  Stream.suspend(() =>
    self.pipe(
      chunkedFold(initial(), (state: MapperState, event: StreamEvent.StreamEvent) =>
        Result.map(map(state, event), (patches) => [patches, state] as const))
    )
  )

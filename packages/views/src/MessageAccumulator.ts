/**
 * The docs/views.md message accumulator: normalized event patches in, the assistant message
 * out. For every patch it assigns or reuses a content index, updates the message, and
 * yields an event carrying the patch's fields and the message so far; `message_end`
 * yields the final message.
 *
 * Content indexes: a `*_start` takes the next index (0, 1, 2, ... in the order blocks
 * start); its `*_delta`s and `*_end` reuse the index of the open block of their type.
 * Blocks of different types may interleave.
 *
 * The limitation docs/views.md#messageaccumulator-over-event-patches states: patches carry no source index, so two blocks of the
 * SAME type cannot be open at once. A mapper whose provider interleaves same-type
 * blocks must buffer or serialize them before pushing (`StreamEventPatches` does).
 * When a mapper breaks this rule the accumulator refuses, never guesses: a second
 * `*_start` while a block of that type is open fails with `BlockAlreadyOpen`, naming
 * the patch and the open content index. What it cannot see is a mapper that closes a
 * block and then sends the first block's deltas after opening the next one: those
 * deltas land in the open block, as the seed says.
 *
 * `message_end` with blocks still open is accepted, as docs/views.md's accumulator
 * accepts it: each open block is closed as its `*_end` would close it, and the
 * `message_end` event lists their content indexes in `closed`.
 *
 * Three ways to use it: `step` is the pure fold; `make` gives a mutable push API like
 * the first design's; `accumulate` and `run` are the Effect stage (patches decoded by Schema,
 * state in a `Ref`, the timestamp from Effect's `Clock`).
 *
 * @since 0.3.0
 */
import { Json, Text } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import type { AssistantStreamEvent, Content } from "./AssistantMessage.js"
import * as AssistantMessage from "./AssistantMessage.js"
import * as EventPatch from "./EventPatch.js"
import { chunkedFold } from "./internal/chunkedFold.js"
import { MessageAccumulatorError } from "./MessageAccumulatorError.js"

/**
 * Who made the message, as docs/views.md's constructor takes it.
 *
 * @since 0.3.0
 * @category models
 */
export interface Options {
  readonly provider?: string | undefined
  readonly api?: string | undefined
}

/**
 * The accumulator's state: the message so far and which block of each type is open.
 *
 * @since 0.3.0
 * @category models
 */
export interface State {
  readonly options: Options
  readonly id: string | undefined
  readonly model: string | undefined
  readonly stopReason: string | null
  readonly errorMessage: string | undefined
  readonly usage: AssistantMessage.Usage
  readonly blocks: ReadonlyArray<Content>
  /** block type -> content index of its open block */
  readonly open: Readonly<Partial<Record<EventPatch.BlockType, number>>>
  readonly timestamp: number | undefined
  readonly started: boolean
  readonly ended: boolean
  /** how many patches were taken */
  readonly pushed: number
}

/**
 * The state before any patch.
 *
 * @since 0.3.0
 * @category constructors
 */
export const initial = (options: Options = {}): State => ({
  options,
  id: undefined,
  model: undefined,
  stopReason: null,
  errorMessage: undefined,
  usage: AssistantMessage.defaultUsage,
  blocks: [],
  open: {},
  timestamp: undefined,
  started: false,
  ended: false,
  pushed: 0
})

/** The provider-executed calls among the blocks, each with its result when one arrived. */
const providerCalls = (blocks: ReadonlyArray<Content>): Array<AssistantMessage.ProviderToolCall> => {
  const results = new Map<string, string>()
  for (const block of blocks) if (block.type === "provider_tool_result") results.set(block.tool_use_id, block.content)
  return blocks.flatMap((block) => {
    if (block.type !== "provider_tool_call") return []
    const result = results.get(block.id)
    const call: AssistantMessage.ProviderToolCall = {
      id: block.id,
      name: block.name,
      arguments: block.arguments,
      ...(block.input === undefined ? {} : { input: block.input }),
      ...(result === undefined ? {} : { result })
    }
    return [call]
  })
}

/**
 * The message as it stands. Its `timestamp` is `message_start`'s when it gave one,
 * otherwise the time of the first patch (0 before any).
 *
 * @since 0.3.0
 * @category accessors
 */
export const message = (state: State): AssistantMessage.AssistantMessage => {
  const providerToolCalls = providerCalls(state.blocks)
  return {
    role: "assistant",
    ...(state.id === undefined ? {} : { id: state.id }),
    ...(state.model === undefined ? {} : { model: state.model }),
    ...(state.options.provider === undefined ? {} : { provider: state.options.provider }),
    ...(state.options.api === undefined ? {} : { api: state.options.api }),
    content: state.blocks,
    ...(providerToolCalls.length === 0 ? {} : { provider_tool_calls: providerToolCalls }),
    usage: state.usage,
    stop_reason: state.stopReason,
    ...(state.errorMessage === undefined ? {} : { error_message: state.errorMessage }),
    timestamp: state.timestamp ?? 0
  }
}

/**
 * The final message, once `message_end` was taken.
 *
 * @since 0.3.0
 * @category accessors
 */
export const finalMessage = (state: State): Option.Option<AssistantMessage.AssistantMessage> =>
  state.ended ? Option.some(message(state)) : Option.none()

type BlockPatch = Exclude<EventPatch.EventPatch, { readonly type: "message_start" | "message_delta" | "message_end" }>

const blockOf: { readonly [K in BlockPatch["type"]]: readonly [EventPatch.BlockType, EventPatch.Phase] } = {
  text_start: ["text", "start"],
  text_delta: ["text", "delta"],
  text_end: ["text", "end"],
  reasoning_start: ["reasoning", "start"],
  reasoning_delta: ["reasoning", "delta"],
  reasoning_end: ["reasoning", "end"],
  tool_start: ["tool", "start"],
  tool_delta: ["tool", "delta"],
  tool_end: ["tool", "end"],
  tool_result_start: ["tool_result", "start"],
  tool_result_delta: ["tool_result", "delta"],
  tool_result_end: ["tool_result", "end"]
}

const mergeUsage = (
  usage: AssistantMessage.Usage,
  patch: typeof EventPatch.UsagePatch.Type | undefined
): AssistantMessage.Usage => {
  if (patch === undefined) return usage
  const input = patch.input ?? usage.input
  const output = patch.output ?? usage.output
  const cache_read = patch.cache_read ?? usage.cache_read
  const cache_write = patch.cache_write ?? usage.cache_write
  return {
    input,
    output,
    cache_read,
    cache_write,
    total: patch.total ?? input + cache_read + cache_write + output,
    raw: patch.raw ?? usage.raw
  }
}

const open = (patch: BlockPatch): Content | undefined => {
  switch (patch.type) {
    case "text_start":
      return { type: "text", text: patch.delta }
    case "reasoning_start":
      return { type: "reasoning", text: patch.delta, signature: patch.signature }
    case "tool_start":
      return {
        type: patch.provider_executed === true ? "provider_tool_call" : "tool_call",
        id: patch.id,
        name: patch.name,
        tool_type: patch.tool_type,
        arguments: patch.delta
      }
    case "tool_result_start":
      return {
        type: patch.provider_executed === true ? "provider_tool_result" : "tool_result",
        tool_use_id: patch.tool_use_id,
        ...(patch.name === undefined ? {} : { name: patch.name }),
        content: patch.delta
      }
    default:
      return undefined
  }
}

const append = (block: Content, patch: BlockPatch, end: boolean): Content => {
  switch (block.type) {
    case "text":
      return { ...block, text: block.text + patch.delta }
    case "reasoning":
      return {
        ...block,
        text: block.text + patch.delta,
        signature: "signature" in patch ? block.signature + patch.signature : block.signature
      }
    case "tool_call":
    case "provider_tool_call": {
      const args = Text.append(block.arguments, patch.delta)
      return end ? { ...block, arguments: args, input: Json.parseArguments(args) } : { ...block, arguments: args }
    }
    case "tool_result":
    case "provider_tool_result":
      return { ...block, content: block.content + patch.delta }
  }
}

// A block closed by `message_end`: what its `*_end` with an empty delta does.
const closeBlock = (block: Content): Content =>
  block.type === "tool_call" || block.type === "provider_tool_call"
    ? { ...block, input: Json.parseArguments(block.arguments) }
    : block

/**
 * Takes one decoded patch at time `now` (used as the message's timestamp when this is
 * the first patch and no `message_start` names one). Pure: gives the event to yield and
 * the next state, or refuses the patch with a `MessageAccumulatorError` naming it.
 *
 * @since 0.3.0
 * @category folding
 */
export const step = (
  state: State,
  patch: EventPatch.EventPatch,
  now: number
): Result.Result<readonly [AssistantStreamEvent, State], MessageAccumulatorError> => {
  const patchIndex = state.pushed
  const refuse = (reason: MessageAccumulatorError["reason"], detail: string) =>
    Result.fail(
      new MessageAccumulatorError({
        reason,
        patchType: patch.type,
        patchIndex,
        message: `patch ${patchIndex} (${patch.type}): ${detail}`
      })
    )
  if (state.ended) return refuse("MessageEnded", "the message already ended")
  const base: State = { ...state, pushed: patchIndex + 1, timestamp: state.timestamp ?? now }
  switch (patch.type) {
    case "message_start": {
      if (state.started) return refuse("DuplicateMessageStart", "the message already started")
      const next: State = {
        ...base,
        started: true,
        id: patch.delta.id ?? base.id,
        model: patch.delta.model ?? base.model,
        timestamp: patch.delta.timestamp ?? base.timestamp
      }
      return Result.succeed([{ type: "message_start", partial: message(next) }, next])
    }
    case "message_delta": {
      const next: State = {
        ...base,
        stopReason: patch.delta.stop_reason ?? base.stopReason,
        errorMessage: patch.delta.error_message ?? base.errorMessage,
        usage: mergeUsage(base.usage, patch.usage)
      }
      return Result.succeed([{ type: "message_delta", partial: message(next) }, next])
    }
    case "message_end": {
      // Blocks still open are closed as their `*_end` with an empty delta would close
      // them: their text as it stands, a tool call's arguments parsed (the arguments
      // rule keeps a cut one as `_invalid_arguments`). Nothing is lost; `closed` says
      // which were.
      const closed = Object.values(state.open).filter((index) => index !== undefined).sort((a, b) => a - b)
      let blocks = state.blocks
      if (closed.length > 0) {
        const copy = state.blocks.slice()
        for (const index of closed) copy[index] = closeBlock(copy[index]!)
        blocks = copy
      }
      const next: State = { ...base, blocks, open: {}, ended: true }
      return Result.succeed([
        closed.length === 0
          ? { type: "message_end", message: message(next) }
          : { type: "message_end", message: message(next), closed },
        next
      ])
    }
    default: {
      const [blockType, phase] = blockOf[patch.type]
      const openIndex = state.open[blockType]
      let contentIndex: number
      let blocks: Array<Content>
      let openBlocks: State["open"]
      const started = open(patch)
      if (started !== undefined) {
        if (openIndex !== undefined) {
          return refuse(
            "BlockAlreadyOpen",
            `a ${blockType} block (content index ${openIndex}) is still open; blocks of one type cannot interleave without source indexes, so the mapper must serialize them`
          )
        }
        contentIndex = state.blocks.length
        blocks = [...state.blocks, started]
        openBlocks = { ...state.open, [blockType]: contentIndex }
      } else {
        if (openIndex === undefined) return refuse("NoOpenBlock", `no ${blockType} block is open`)
        contentIndex = openIndex
        blocks = state.blocks.slice()
        blocks[contentIndex] = append(state.blocks[contentIndex]!, patch, phase === "end")
        if (phase === "end") {
          const { [blockType]: _closed, ...rest } = state.open
          openBlocks = rest
        } else {
          openBlocks = state.open
        }
      }
      const next: State = { ...base, blocks, open: openBlocks }
      return Result.succeed([{ ...patch, content_index: contentIndex, partial: message(next) }, next])
    }
  }
}

/**
 * The docs/views.md push API: a mutable accumulator. `push` decodes one patch, takes it at
 * time `now` and returns the event to yield; a refused patch leaves the state as it
 * was.
 *
 * @since 0.3.0
 * @category models
 */
export interface MessageAccumulator {
  readonly push: (patch: unknown, now: number) => Result.Result<AssistantStreamEvent, MessageAccumulatorError>
  readonly state: () => State
  readonly result: () => AssistantMessage.AssistantMessage
  readonly finalMessage: () => Option.Option<AssistantMessage.AssistantMessage>
}

/**
 * A fresh mutable accumulator.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (options: Options = {}): MessageAccumulator => {
  let state = initial(options)
  return {
    push: (input, now) =>
      Result.flatMap(
        EventPatch.decode(input, state.pushed),
        (patch) =>
          Result.map(step(state, patch, now), ([event, next]) => {
            state = next
            return event
          })
      ),
    state: () => state,
    result: () => message(state),
    finalMessage: () => finalMessage(state)
  }
}

const decodeAndStep = (state: State, input: unknown, now: number) =>
  Result.flatMap(
    EventPatch.decode(input, state.pushed),
    (patch) => Result.map(step(state, patch, now), ([event, next]) => [[event], next] as const)
  )

/**
 * The Effect stage: decodes every element as a patch (an unknown type or a bad field
 * fails with `MessageAccumulatorError`), folds it through a `Ref`-held state and emits
 * the events. The first patch's time comes from Effect's `Clock`.
 *
 * @since 0.3.0
 * @category stages
 */
export const accumulate = (
  options: Options = {}
): <E, R>(self: Stream.Stream<unknown, E, R>) => Stream.Stream<AssistantStreamEvent, E | MessageAccumulatorError, R> =>
  chunkedFold(initial(options), decodeAndStep)

/**
 * Runs a stream of patches to the final message; fails with `MessageNotEnded` when the
 * stream stops before `message_end`.
 *
 * @since 0.3.0
 * @category running
 */
export const run = (options: Options = {}) =>
<E, R>(
  self: Stream.Stream<unknown, E, R>
): Effect.Effect<AssistantMessage.AssistantMessage, E | MessageAccumulatorError, R> =>
  self.pipe(
    accumulate(options),
    Stream.runLast,
    Effect.flatMap((last) =>
      Option.isSome(last) && last.value.type === "message_end"
        ? Effect.succeed(last.value.message)
        : Effect.fail(
          new MessageAccumulatorError({ reason: "MessageNotEnded", message: "the patches ended before message_end" })
        )
    )
  )

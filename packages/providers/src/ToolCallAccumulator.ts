/**
 * Reassembles tool calls from the fragments providers stream (docs/views.md#toolcallaccumulator): OpenAI's
 * index-keyed argument pieces, Anthropic's start / partial JSON / stop phases, and
 * Gemini's whole calls.
 *
 * The accumulator is a value: `feed` returns a new accumulator and leaves the old one
 * as it was. Feeding costs O(calls) and never looks at the argument text seen so far;
 * each call's text is joined once, when it is finalized, so the whole work is linear
 * in the length of the arguments. Arguments are finalized only by `finalize` /
 * `finalizeCall` (block stop, item done or stream end), never because a prefix
 * happens to parse.
 *
 * @since 0.1.0
 */
import { Json } from "@sluice/core"
import * as Data from "effect/Data"

/**
 * One fragment, in the shape its provider streams it.
 *
 * - `OpenAi`: a `tool_calls[]` entry of a chat completion delta. `index` may be
 *   missing (the call is then found by `id`, or is the call the previous fragment
 *   went to), may start above zero, and calls may interleave.
 * - `AnthropicStart` / `AnthropicPartial` / `AnthropicStop`: a `tool_use` content
 *   block's start (with its `input`, used when no partial JSON follows), each
 *   `input_json_delta`, and its stop, keyed by content block index.
 * - `Gemini`: a whole `functionCall` with its `args` object.
 *
 * A fragment whose `id` an earlier call already has belongs to that call: a duplicate
 * id is one call.
 *
 * @since 0.1.0
 * @category models
 */
export type Fragment = Data.TaggedEnum<{
  OpenAi: {
    readonly index?: number | undefined
    readonly id?: string | undefined
    readonly name?: string | undefined
    readonly arguments?: string | undefined
  }
  AnthropicStart: {
    readonly index: number
    readonly id: string
    readonly name: string
    readonly input?: Json.JsonObject | undefined
    readonly metadata?: Json.JsonObject | undefined
  }
  AnthropicPartial: { readonly index: number; readonly partialJson: string }
  AnthropicStop: { readonly index: number }
  Gemini: {
    readonly id?: string | undefined
    readonly name: string
    readonly args: Json.JsonObject
    readonly metadata?: Json.JsonObject | undefined
  }
}>

/**
 * Constructors of `Fragment`s: `Fragment.OpenAi({ index: 0, arguments: "{\"q" })`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const Fragment = Data.taggedEnum<Fragment>()

/**
 * A finished tool call. `arguments` is the parsed object, or
 * `{ _invalid_arguments: raw }` when the text is not a JSON object; `rawArguments` is
 * the text exactly as it arrived (Gemini's whole `args` as JSON text).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolCall {
  readonly id: string | undefined
  readonly name: string
  readonly arguments: Json.JsonObject
  readonly rawArguments: string
  readonly metadata: Json.JsonObject | undefined
}

/**
 * Parses tool-call argument text: the JSON object it holds, `{}` for empty text, or
 * `{ _invalid_arguments: raw }`. Never throws.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseArguments: (raw: string) => Json.JsonObject = Json.parseArguments

type Family = "openai" | "anthropic" | "gemini"

/** The argument text of a call, newest piece first (joined once, at the end). */
interface Pieces {
  readonly text: string
  readonly previous: Pieces | undefined
}

interface PartialCall {
  readonly family: Family
  readonly index: number
  readonly id: string | undefined
  readonly name: string | undefined
  readonly pieces: Pieces | undefined
  readonly initial: string | undefined
  readonly closed: boolean
  readonly metadata: Json.JsonObject | undefined
}

/**
 * What one fragment did:
 * - `started`: it began a new call (it may carry the first argument text too);
 * - `appended`: it added to an existing call;
 * - `closed`: it closed a call (Anthropic stop);
 * - `ignored`: it added nothing (a duplicate start, a duplicate Gemini call, an
 *   Anthropic stop of an unknown block).
 *
 * `position` is the call's stable position among all calls in arrival order (use it
 * with `finalizeCall`); `name` is the call's name as known so far; `text` is the
 * argument text the fragment added.
 *
 * @since 0.1.0
 * @category models
 */
export interface Step {
  readonly accumulator: ToolCallAccumulator
  readonly kind: "started" | "appended" | "closed" | "ignored"
  readonly position: number
  readonly name: string | undefined
  readonly text: string
}

/**
 * The accumulated state. Build one with `empty`, feed fragments with `feed` or
 * `step`, read the calls with `finalize`.
 *
 * @since 0.1.0
 * @category models
 */
export class ToolCallAccumulator extends Data.Class<{
  /** @internal */
  readonly calls: ReadonlyArray<PartialCall>
  /** @internal the call of each Anthropic content block index */
  readonly blocks: ReadonlyArray<readonly [number, number]>
  /** @internal the position of the OpenAI call the last fragment went to */
  readonly lastOpenAi: number
}> {}

/**
 * An accumulator without calls.
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: ToolCallAccumulator = new ToolCallAccumulator({ calls: [], blocks: [], lastOpenAi: -1 })

const findLast = (calls: ReadonlyArray<PartialCall>, predicate: (call: PartialCall) => boolean): number => {
  for (let i = calls.length - 1; i >= 0; i--) if (predicate(calls[i]!)) return i
  return -1
}

const byId = (calls: ReadonlyArray<PartialCall>, id: string | undefined): number =>
  id === undefined || id === "" ? -1 : findLast(calls, (call) => call.id === id)

const withPiece = (pieces: Pieces | undefined, text: string): Pieces | undefined =>
  text === "" ? pieces : { text, previous: pieces }

const replaceAt = <A>(items: ReadonlyArray<A>, position: number, item: A): ReadonlyArray<A> => {
  const copy = items.slice()
  copy[position] = item
  return copy
}

const nonEmpty = (text: string | undefined): string | undefined => (text === undefined || text === "" ? undefined : text)

type RawStep = Omit<Step, "name">

const stepOpenAi = (self: ToolCallAccumulator, fragment: Extract<Fragment, { _tag: "OpenAi" }>): RawStep => {
  const calls = self.calls
  const text = fragment.arguments ?? ""
  const id = nonEmpty(fragment.id)
  let position = byId(calls, id)
  if (position === -1 && fragment.index !== undefined) {
    const index = fragment.index
    const candidate = findLast(calls, (call) => call.family === "openai" && call.index === index)
    // an index reused with a new id is a new call (servers that number every call 0)
    if (candidate !== -1 && (id === undefined || calls[candidate]!.id === undefined)) position = candidate
  }
  if (position === -1 && fragment.index === undefined && id === undefined && self.lastOpenAi !== -1) position = self.lastOpenAi
  if (position === -1) {
    const index = fragment.index ?? calls.reduce((max, call) => (call.family === "openai" ? Math.max(max, call.index + 1) : max), 0)
    const call: PartialCall = {
      family: "openai",
      index,
      id,
      name: nonEmpty(fragment.name),
      pieces: withPiece(undefined, text),
      initial: undefined,
      closed: false,
      metadata: undefined
    }
    const accumulator = new ToolCallAccumulator({ calls: [...calls, call], blocks: self.blocks, lastOpenAi: calls.length })
    return { accumulator, kind: "started", position: calls.length, text }
  }
  const call = calls[position]!
  const updated: PartialCall = {
    ...call,
    id: call.id ?? id,
    name: call.name ?? nonEmpty(fragment.name),
    pieces: withPiece(call.pieces, text)
  }
  const accumulator = new ToolCallAccumulator({ calls: replaceAt(calls, position, updated), blocks: self.blocks, lastOpenAi: position })
  return { accumulator, kind: text === "" && updated.id === call.id && updated.name === call.name ? "ignored" : "appended", position, text }
}

const blockPosition = (self: ToolCallAccumulator, index: number): number => {
  for (let i = self.blocks.length - 1; i >= 0; i--) {
    const [block, position] = self.blocks[i]!
    if (block === index) return position
  }
  return -1
}

const stepAnthropic = (
  self: ToolCallAccumulator,
  fragment: Extract<Fragment, { _tag: "AnthropicStart" | "AnthropicPartial" | "AnthropicStop" }>
): RawStep => {
  const calls = self.calls
  switch (fragment._tag) {
    case "AnthropicStart": {
      const known = byId(calls, nonEmpty(fragment.id))
      if (known !== -1) {
        const blocks = [...self.blocks, [fragment.index, known] as const]
        return { accumulator: new ToolCallAccumulator({ ...self, blocks }), kind: "ignored", position: known, text: "" }
      }
      const call: PartialCall = {
        family: "anthropic",
        index: fragment.index,
        id: nonEmpty(fragment.id),
        name: fragment.name,
        pieces: undefined,
        initial: fragment.input === undefined ? undefined : JSON.stringify(fragment.input),
        closed: false,
        metadata: fragment.metadata
      }
      const accumulator = new ToolCallAccumulator({
        calls: [...calls, call],
        blocks: [...self.blocks, [fragment.index, calls.length] as const],
        lastOpenAi: self.lastOpenAi
      })
      return { accumulator, kind: "started", position: calls.length, text: "" }
    }
    case "AnthropicPartial": {
      const position = blockPosition(self, fragment.index)
      if (position === -1) {
        // a partial without its start: keep the text in a call of its own
        const call: PartialCall = {
          family: "anthropic",
          index: fragment.index,
          id: undefined,
          name: undefined,
          pieces: withPiece(undefined, fragment.partialJson),
          initial: undefined,
          closed: false,
          metadata: undefined
        }
        const accumulator = new ToolCallAccumulator({
          calls: [...calls, call],
          blocks: [...self.blocks, [fragment.index, calls.length] as const],
          lastOpenAi: self.lastOpenAi
        })
        return { accumulator, kind: "started", position: calls.length, text: fragment.partialJson }
      }
      const call = calls[position]!
      const updated: PartialCall = { ...call, pieces: withPiece(call.pieces, fragment.partialJson) }
      return {
        accumulator: new ToolCallAccumulator({ ...self, calls: replaceAt(calls, position, updated) }),
        kind: fragment.partialJson === "" ? "ignored" : "appended",
        position,
        text: fragment.partialJson
      }
    }
    case "AnthropicStop": {
      const position = blockPosition(self, fragment.index)
      if (position === -1 || calls[position]!.closed) return { accumulator: self, kind: "ignored", position, text: "" }
      const updated: PartialCall = { ...calls[position]!, closed: true }
      return { accumulator: new ToolCallAccumulator({ ...self, calls: replaceAt(calls, position, updated) }), kind: "closed", position, text: "" }
    }
  }
}

const stepGemini = (self: ToolCallAccumulator, fragment: Extract<Fragment, { _tag: "Gemini" }>): RawStep => {
  const calls = self.calls
  const known = byId(calls, nonEmpty(fragment.id))
  if (known !== -1) return { accumulator: self, kind: "ignored", position: known, text: "" }
  const index = calls.reduce((count, call) => (call.family === "gemini" ? count + 1 : count), 0)
  const text = JSON.stringify(fragment.args)
  const call: PartialCall = {
    family: "gemini",
    index,
    id: nonEmpty(fragment.id),
    name: fragment.name,
    pieces: undefined,
    initial: text,
    closed: true,
    metadata: fragment.metadata
  }
  return {
    accumulator: new ToolCallAccumulator({ ...self, calls: [...calls, call] }),
    kind: "started",
    position: calls.length,
    text
  }
}

/**
 * Feeds one fragment and tells what it did (see `Step`).
 *
 * @since 0.1.0
 * @category combinators
 */
export const step = (self: ToolCallAccumulator, fragment: Fragment): Step => {
  const raw =
    fragment._tag === "OpenAi"
      ? stepOpenAi(self, fragment)
      : fragment._tag === "Gemini"
        ? stepGemini(self, fragment)
        : stepAnthropic(self, fragment)
  return { ...raw, name: raw.accumulator.calls[raw.position]?.name }
}

/**
 * Feeds one fragment.
 *
 * @since 0.1.0
 * @category combinators
 */
export const feed = (self: ToolCallAccumulator, fragment: Fragment): ToolCallAccumulator => step(self, fragment).accumulator

const joinPieces = (pieces: Pieces | undefined): string => {
  if (pieces === undefined) return ""
  if (pieces.previous === undefined) return pieces.text
  const parts: Array<string> = []
  for (let node: Pieces | undefined = pieces; node !== undefined; node = node.previous) parts.push(node.text)
  return parts.reverse().join("")
}

const toToolCall = (call: PartialCall): ToolCall => {
  const joined = joinPieces(call.pieces)
  const rawArguments = joined === "" && call.initial !== undefined ? call.initial : joined
  return {
    id: call.id,
    name: call.name ?? "",
    arguments: parseArguments(rawArguments),
    rawArguments,
    metadata: call.metadata
  }
}

/**
 * The number of calls seen so far.
 *
 * @since 0.1.0
 * @category getters
 */
export const size = (self: ToolCallAccumulator): number => self.calls.length

/**
 * Finalizes the call at a position (from a `Step`): its id, name, raw and parsed
 * arguments as they stand. Joins that call's text once.
 *
 * @since 0.1.0
 * @category destructors
 */
export const finalizeCall = (self: ToolCallAccumulator, position: number): ToolCall | undefined => {
  const call = self.calls[position]
  return call === undefined ? undefined : toToolCall(call)
}

const familyRank: Record<Family, number> = { openai: 0, anthropic: 1, gemini: 2 }

/**
 * Every call, finalized, in docs/views.md's order: OpenAI calls by index, then Anthropic
 * calls by content block index, then Gemini calls in arrival order (calls that share
 * an index keep their arrival order).
 *
 * @since 0.1.0
 * @category destructors
 */
export const finalize = (self: ToolCallAccumulator): ReadonlyArray<ToolCall> =>
  self.calls
    .map((call, position) => ({ call, position }))
    .sort(
      (a, b) =>
        familyRank[a.call.family] - familyRank[b.call.family] || a.call.index - b.call.index || a.position - b.position
    )
    .map(({ call }) => toToolCall(call))

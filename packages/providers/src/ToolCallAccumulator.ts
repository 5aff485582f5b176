/**
 * Reassembles tool calls from the fragments providers stream (docs/views.md#toolcallaccumulator): OpenAI's
 * index-keyed argument pieces, Anthropic's start / partial JSON / stop phases, and
 * Gemini's whole calls.
 *
 * The accumulator is a value: `feed` returns a new accumulator and leaves the old one
 * as it was. Feeding costs O(calls) (the copy that keeps the old value as it was) and
 * never looks at the argument text seen so far; each call's text is joined once, when
 * it is finalized, so the whole work is linear in the length of the arguments. The
 * normalizers use the same rules on state they change in place, with no copy. Arguments are finalized only by `finalize` /
 * `finalizeCall` (block stop, item done or stream end), never because a prefix
 * happens to parse.
 *
 * @since 0.1.0
 */
import { Json } from "@sluice/core"
import * as Data from "effect/Data"
import { ToolCalls } from "./internal/toolCalls.js"

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
  /** @internal the calls, never changed once this value is made */
  readonly state: ToolCalls
}> {}

/**
 * An accumulator without calls.
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: ToolCallAccumulator = new ToolCallAccumulator({ state: new ToolCalls() })

const apply = (state: ToolCalls, fragment: Fragment): Step["kind"] => {
  switch (fragment._tag) {
    case "OpenAi":
      return state.openAi(fragment.index, fragment.id, fragment.name, fragment.arguments)
    case "AnthropicStart":
      return state.anthropicStart(fragment.index, fragment.id, fragment.name, fragment.input, fragment.metadata)
    case "AnthropicPartial":
      return state.anthropicPartial(fragment.index, fragment.partialJson)
    case "AnthropicStop":
      return state.anthropicStop(fragment.index)
    case "Gemini":
      return state.gemini(fragment.id, fragment.name, fragment.args, fragment.metadata)
  }
}

/**
 * Feeds one fragment and tells what it did (see `Step`).
 *
 * @since 0.1.0
 * @category combinators
 */
export const step = (self: ToolCallAccumulator, fragment: Fragment): Step => {
  const state = self.state.clone()
  const kind = apply(state, fragment)
  return {
    accumulator: new ToolCallAccumulator({ state }),
    kind,
    position: state.position,
    name: state.nameAt(state.position),
    text: state.text
  }
}

/**
 * Feeds one fragment.
 *
 * @since 0.1.0
 * @category combinators
 */
export const feed = (self: ToolCallAccumulator, fragment: Fragment): ToolCallAccumulator =>
  step(self, fragment).accumulator

/**
 * The number of calls seen so far.
 *
 * @since 0.1.0
 * @category getters
 */
export const size = (self: ToolCallAccumulator): number => self.state.size

/**
 * Finalizes the call at a position (from a `Step`): its id, name, raw and parsed
 * arguments as they stand. Joins that call's text once.
 *
 * @since 0.1.0
 * @category destructors
 */
export const finalizeCall = (self: ToolCallAccumulator, position: number): ToolCall | undefined =>
  self.state.finalizeCall(position)

/**
 * Every call, finalized, in docs/views.md's order: OpenAI calls by index, then Anthropic
 * calls by content block index, then Gemini calls in arrival order (calls that share
 * an index keep their arrival order).
 *
 * @since 0.1.0
 * @category destructors
 */
export const finalize = (self: ToolCallAccumulator): ReadonlyArray<ToolCall> => self.state.finalize()

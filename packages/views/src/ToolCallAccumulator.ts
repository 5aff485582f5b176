/**
 * Reassembles tool calls from the fragments providers stream (docs/views.md#toolcallaccumulator): OpenAI's
 * index-keyed argument pieces, Anthropic's start / partial JSON / stop phases, and
 * Gemini's whole calls.
 *
 * `feed` takes a fragment either tagged (`Fragment.OpenAi({...})`) or as the provider
 * sent it, and then finds its shape itself (`detect`, docs/generation.md#tool-call-fragments-by-shape):
 * an OpenAI Chat `tool_calls[]` entry (or the list, the delta or the chunk holding
 * them), an Anthropic `content_block_start` / `input_json_delta` / `content_block_stop`
 * event, a Gemini `functionCall` part (or the chunk holding it), a Responses
 * `function_call` item or `response.function_call_arguments.delta` event.
 *
 * The accumulator is a value: `feed` returns a new accumulator and leaves the old one
 * as it was. Feeding costs O(calls) (the copy that keeps the old value as it was) and
 * never looks at the argument text seen so far; each call's text is joined once, when
 * it is finalized, so the whole work is linear in the length of the arguments. The
 * normalizers use the same rules on state they change in place, with no copy. Arguments are finalized only by `finalize` /
 * `finalizeCall` (block stop, item done or stream end), never because a prefix
 * happens to parse.
 *
 * @since 0.3.0
 */
import { Json } from "@sluice/core"
import { ToolCalls } from "@sluice/providers"
import * as Data from "effect/Data"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

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
 * @since 0.3.0
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
 * @since 0.3.0
 * @category constructors
 */
export const Fragment = Data.taggedEnum<Fragment>()

/**
 * A finished tool call. `arguments` is the parsed object, or
 * `{ _invalid_arguments: raw }` when the text is not a JSON object, and then `invalid`
 * says why (`{raw, error}`); `rawArguments` is
 * the text exactly as it arrived (Gemini's whole `args` as JSON text).
 *
 * @since 0.3.0
 * @category models
 */
export type ToolCall = ToolCalls.ToolCall

/**
 * Parses tool-call argument text: the JSON object it holds, `{}` for empty text, or
 * `{ _invalid_arguments: raw }`. Never throws.
 *
 * @since 0.3.0
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
 * @since 0.3.0
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
 * @since 0.3.0
 * @category models
 */
export class ToolCallAccumulator extends Data.Class<{
  /** @internal the calls, never changed once this value is made */
  readonly state: ToolCalls.ToolCalls
  /**
   * @internal Anthropic content block indexes a raw `content_block_start` opened for
   * something other than a `tool_use` (text, thinking, a server tool): their raw deltas
   * and stop are not a call's
   */
  readonly otherBlocks?: ReadonlySet<number> | undefined
}> {}

/**
 * An accumulator without calls.
 *
 * @since 0.3.0
 * @category constructors
 */
export const empty: ToolCallAccumulator = new ToolCallAccumulator({ state: new ToolCalls.ToolCalls() })

const apply = (state: ToolCalls.ToolCalls, fragment: Fragment): Step["kind"] => {
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
 * @since 0.3.0
 * @category combinators
 */
export const step = (self: ToolCallAccumulator, fragment: Fragment): Step => {
  const state = self.state.clone()
  const kind = apply(state, fragment)
  return {
    accumulator: new ToolCallAccumulator({ state, otherBlocks: self.otherBlocks }),
    kind,
    position: state.position,
    name: state.nameAt(state.position),
    text: state.text
  }
}

/**
 * Feeds one fragment: a tagged `Fragment`, or a fragment as the provider sent it, whose
 * shape `detect` finds (one raw value may hold several calls: an OpenAI `tool_calls`
 * list, a Gemini chunk). A raw value of no known shape is dropped: the accumulator comes
 * back as it was.
 *
 * @since 0.3.0
 * @category combinators
 */
export const feed = (self: ToolCallAccumulator, fragment: Fragment | RawFragment): ToolCallAccumulator => {
  if (isFragment(fragment)) return step(self, fragment).accumulator
  const other = otherBlockStart(fragment)
  if (other !== undefined) {
    if (self.otherBlocks?.has(other) === true) return self
    return new ToolCallAccumulator({ state: self.state, otherBlocks: new Set([...(self.otherBlocks ?? []), other]) })
  }
  let state: ToolCalls.ToolCalls | undefined
  let otherBlocks = self.otherBlocks
  for (const found of detected(fragment)) {
    // a finished Responses item repeats a call its deltas already built: only an
    // item no earlier event announced is a call of its own
    if (found.unlessKnown !== undefined && knows(state ?? self.state, found.unlessKnown)) continue
    const block = found.fragment
    if (block._tag === "AnthropicStart" && otherBlocks?.has(block.index) === true) {
      // the index now holds a tool_use block
      const next = new Set(otherBlocks)
      next.delete(block.index)
      otherBlocks = next
    } else if (
      (block._tag === "AnthropicPartial" || block._tag === "AnthropicStop") && otherBlocks?.has(block.index) === true
    ) continue
    state ??= self.state.clone()
    apply(state, block)
  }
  return state === undefined && otherBlocks === self.otherBlocks
    ? self
    : new ToolCallAccumulator({ state: state ?? self.state, otherBlocks })
}

/**
 * The number of calls seen so far.
 *
 * @since 0.3.0
 * @category getters
 */
export const size = (self: ToolCallAccumulator): number => self.state.size

/**
 * Finalizes the call at a position (from a `Step`): its id, name, raw and parsed
 * arguments as they stand. Joins that call's text once.
 *
 * @since 0.3.0
 * @category destructors
 */
export const finalizeCall = (self: ToolCallAccumulator, position: number): ToolCall | undefined =>
  self.state.finalizeCall(position)

/**
 * Every call, finalized, in docs/views.md's order: OpenAI calls by index, then Anthropic
 * calls by content block index, then Gemini calls in arrival order (calls that share
 * an index keep their arrival order).
 *
 * @since 0.3.0
 * @category destructors
 */
export const finalize = (self: ToolCallAccumulator): ReadonlyArray<ToolCall> => self.state.finalize()

// ---------------------------------------------------------------------------------
// shape detection: fragments as the providers send them
// ---------------------------------------------------------------------------------

/**
 * A fragment as its provider sent it (parsed JSON), for `feed` and `detect` to find the
 * shape of.
 *
 * @since 0.3.0
 * @category models
 */
export type RawFragment = unknown

const tags: ReadonlySet<string> = new Set(["OpenAi", "AnthropicStart", "AnthropicPartial", "AnthropicStop", "Gemini"])

/**
 * Whether a value is a tagged `Fragment` (made with the `Fragment` constructors).
 *
 * @since 0.3.0
 * @category guards
 */
export const isFragment = (value: unknown): value is Fragment =>
  typeof value === "object" && value !== null && "_tag" in value && typeof value._tag === "string" &&
  tags.has(value._tag)

const optional = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(schema)
const Index = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const Text = Schema.NullOr(Schema.String)

/** An OpenAI Chat `tool_calls[]` entry: `{index, id?, type?, function: {name?, arguments?}}`. */
const OpenAiEntry = Schema.Struct({
  index: optional(Index),
  id: optional(Text),
  function: Schema.Struct({ name: optional(Text), arguments: optional(Text) })
})
const OpenAiEntries = Schema.Array(OpenAiEntry)
/** A chat completion delta, or a whole chunk of them. */
const OpenAiDelta = Schema.Struct({ tool_calls: OpenAiEntries })
const OpenAiChunk = Schema.Struct({
  choices: Schema.Array(
    Schema.Struct({
      delta: optional(Schema.NullOr(Schema.Struct({ tool_calls: optional(Schema.NullOr(OpenAiEntries)) })))
    })
  )
})

/** Anthropic's stream events of a `tool_use` block, and the `_phase` form of docs/views.md. */
const AnthropicStart = Schema.Struct({
  type: Schema.Literal("content_block_start"),
  index: Index,
  content_block: Schema.Struct({
    type: Schema.Literal("tool_use"),
    id: Schema.String,
    name: Schema.String,
    input: optional(Json.JsonObject)
  })
})
const AnthropicDelta = Schema.Struct({
  type: Schema.Literal("content_block_delta"),
  index: Index,
  delta: Schema.Struct({ type: Schema.Literal("input_json_delta"), partial_json: Schema.String })
})
const AnthropicStop = Schema.Struct({ type: Schema.Literal("content_block_stop"), index: Index })
const PhaseStart = Schema.Struct({
  _phase: Schema.Literal("start"),
  _index: Index,
  id: Schema.String,
  name: Schema.String,
  input: optional(Json.JsonObject)
})
const PhasePartial = Schema.Struct({ _phase: Schema.Literal("partial"), _index: Index, partial_json: Schema.String })
const PhaseStop = Schema.Struct({ _phase: Schema.Literal("stop"), _index: Index })

/** Any other Anthropic content block's start: text, thinking, a server or MCP tool. */
const AnthropicOtherStart = Schema.Struct({
  type: Schema.Literal("content_block_start"),
  index: Index,
  content_block: Schema.Struct({ type: Schema.String })
})

/** A Gemini `functionCall` part, a bare call, or a chunk of parts. */
const GeminiCall = Schema.Struct({
  id: optional(Schema.String),
  name: Schema.String,
  args: optional(Json.JsonObject)
})
/** A bare call outside its part: its `args` must be there to tell it from other objects. */
const GeminiBareCall = Schema.Struct({ id: optional(Schema.String), name: Schema.String, args: Json.JsonObject })
const GeminiPart = Schema.Struct({ functionCall: GeminiCall, thoughtSignature: optional(Schema.String) })
const GeminiChunk = Schema.Struct({
  candidates: Schema.Array(Schema.Struct({
    content: optional(Schema.Struct({ parts: optional(Schema.Array(Schema.Unknown)) }))
  }))
})
/** The seed form of a whole call: `{name, arguments: {...}}` (arguments already an object). */
const WholeCall = Schema.Struct({ id: optional(Schema.String), name: Schema.String, arguments: Json.JsonObject })

/** A Responses `function_call` item, its events, and its argument deltas. */
const ResponsesItem = Schema.Struct({
  type: Schema.Literal("function_call"),
  call_id: Schema.String,
  name: Schema.String,
  arguments: optional(Schema.String)
})
const ResponsesItemEvent = Schema.Struct({
  type: Schema.Literals(["response.output_item.added", "response.output_item.done"]),
  output_index: Index,
  item: ResponsesItem
})
const ResponsesArgumentsDelta = Schema.Struct({
  type: Schema.Literal("response.function_call_arguments.delta"),
  output_index: Index,
  delta: Schema.String
})

const decoder = <S extends Schema.Decoder<unknown>>(schema: S) => {
  const decode = Schema.decodeUnknownOption(schema)
  return (value: unknown): S["Type"] | undefined => Option.getOrUndefined(decode(value))
}

const shapes = {
  openAiEntry: decoder(OpenAiEntry),
  openAiEntries: decoder(OpenAiEntries),
  openAiDelta: decoder(OpenAiDelta),
  openAiChunk: decoder(OpenAiChunk),
  anthropicStart: decoder(AnthropicStart),
  anthropicDelta: decoder(AnthropicDelta),
  anthropicOtherStart: decoder(AnthropicOtherStart),
  anthropicStop: decoder(AnthropicStop),
  phaseStart: decoder(PhaseStart),
  phasePartial: decoder(PhasePartial),
  phaseStop: decoder(PhaseStop),
  geminiPart: decoder(GeminiPart),
  geminiCall: decoder(GeminiBareCall),
  geminiChunk: decoder(GeminiChunk),
  wholeCall: decoder(WholeCall),
  responsesItem: decoder(ResponsesItem),
  responsesItemEvent: decoder(ResponsesItemEvent),
  responsesDelta: decoder(ResponsesArgumentsDelta)
}

/** A detected fragment; `unlessKnown`: skip it when a call of this id is already there. */
interface Detected {
  readonly fragment: Fragment
  readonly unlessKnown?: string | undefined
}

const orUndefined = (value: string | null | undefined): string | undefined => value ?? undefined

const openAiFragments = (entries: ReadonlyArray<typeof OpenAiEntry.Type>): Array<Detected> =>
  entries.map((entry) => ({
    fragment: Fragment.OpenAi({
      index: entry.index,
      id: orUndefined(entry.id),
      name: orUndefined(entry.function.name),
      arguments: orUndefined(entry.function.arguments)
    })
  }))

const geminiFragment = (
  call: typeof GeminiCall.Type,
  signature: string | undefined
): Detected => ({
  fragment: Fragment.Gemini({
    id: call.id,
    name: call.name,
    args: call.args ?? {},
    metadata: signature === undefined ? undefined : { thoughtSignature: signature }
  })
})

const detected = (raw: unknown): ReadonlyArray<Detected> => {
  if (isFragment(raw)) return [{ fragment: raw }]
  const anthropicStart = shapes.anthropicStart(raw)
  if (anthropicStart !== undefined) {
    const block = anthropicStart.content_block
    return [{
      fragment: Fragment.AnthropicStart({
        index: anthropicStart.index,
        id: block.id,
        name: block.name,
        input: block.input
      })
    }]
  }
  const anthropicDelta = shapes.anthropicDelta(raw)
  if (anthropicDelta !== undefined) {
    return [{
      fragment: Fragment.AnthropicPartial({
        index: anthropicDelta.index,
        partialJson: anthropicDelta.delta.partial_json
      })
    }]
  }
  const anthropicStop = shapes.anthropicStop(raw)
  if (anthropicStop !== undefined) return [{ fragment: Fragment.AnthropicStop({ index: anthropicStop.index }) }]
  const phaseStart = shapes.phaseStart(raw)
  if (phaseStart !== undefined) {
    return [{
      fragment: Fragment.AnthropicStart({
        index: phaseStart._index,
        id: phaseStart.id,
        name: phaseStart.name,
        input: phaseStart.input
      })
    }]
  }
  const phasePartial = shapes.phasePartial(raw)
  if (phasePartial !== undefined) {
    return [{
      fragment: Fragment.AnthropicPartial({ index: phasePartial._index, partialJson: phasePartial.partial_json })
    }]
  }
  const phaseStop = shapes.phaseStop(raw)
  if (phaseStop !== undefined) return [{ fragment: Fragment.AnthropicStop({ index: phaseStop._index }) }]
  const itemEvent = shapes.responsesItemEvent(raw)
  if (itemEvent !== undefined) {
    const item = itemEvent.item
    return [{
      fragment: Fragment.OpenAi({
        index: itemEvent.output_index,
        id: item.call_id,
        name: item.name,
        arguments: item.arguments
      }),
      ...(itemEvent.type === "response.output_item.done" ? { unlessKnown: item.call_id } : {})
    }]
  }
  const responsesDelta = shapes.responsesDelta(raw)
  if (responsesDelta !== undefined) {
    return [{ fragment: Fragment.OpenAi({ index: responsesDelta.output_index, arguments: responsesDelta.delta }) }]
  }
  const item = shapes.responsesItem(raw)
  if (item !== undefined) {
    return [{
      fragment: Fragment.OpenAi({ id: item.call_id, name: item.name, arguments: item.arguments }),
      unlessKnown: item.call_id
    }]
  }
  const geminiPart = shapes.geminiPart(raw)
  if (geminiPart !== undefined) return [geminiFragment(geminiPart.functionCall, geminiPart.thoughtSignature)]
  const geminiChunk = shapes.geminiChunk(raw)
  if (geminiChunk !== undefined) {
    return geminiChunk.candidates.flatMap((candidate) =>
      (candidate.content?.parts ?? []).flatMap((part) => {
        const call = shapes.geminiPart(part)
        return call === undefined ? [] : [geminiFragment(call.functionCall, call.thoughtSignature)]
      })
    )
  }
  const openAiEntry = shapes.openAiEntry(raw)
  if (openAiEntry !== undefined) return openAiFragments([openAiEntry])
  const openAiEntries = shapes.openAiEntries(raw)
  if (openAiEntries !== undefined) return openAiFragments(openAiEntries)
  const openAiDelta = shapes.openAiDelta(raw)
  if (openAiDelta !== undefined) return openAiFragments(openAiDelta.tool_calls)
  const openAiChunk = shapes.openAiChunk(raw)
  if (openAiChunk !== undefined) {
    return openAiChunk.choices.flatMap((choice) => openAiFragments(choice.delta?.tool_calls ?? []))
  }
  const wholeCall = shapes.wholeCall(raw)
  if (wholeCall !== undefined) {
    return [{ fragment: Fragment.Gemini({ id: wholeCall.id, name: wholeCall.name, args: wholeCall.arguments }) }]
  }
  const geminiCall = shapes.geminiCall(raw)
  if (geminiCall !== undefined) return [geminiFragment(geminiCall, undefined)]
  return []
}

/** The index of a raw `content_block_start` of a block that is not a `tool_use`. */
const otherBlockStart = (raw: unknown): number | undefined => {
  if (shapes.anthropicStart(raw) !== undefined) return undefined
  return shapes.anthropicOtherStart(raw)?.index
}

const knows = (state: ToolCalls.ToolCalls, id: string): boolean => {
  for (let position = 0; position < state.size; position++) {
    if (state.finalizeCall(position)?.id === id) return true
  }
  return false
}

/**
 * The tagged fragments a raw provider value holds, found by its shape (none when it has
 * no known shape; a tagged `Fragment` is itself):
 *
 * | provider | shape | fragment |
 * |---|---|---|
 * | OpenAI Chat | a `tool_calls[]` entry `{index, id?, function: {name?, arguments?}}`, the list, a `delta` or a chunk holding them | `OpenAi` per entry |
 * | Anthropic | `content_block_start` of a `tool_use` block, `content_block_delta` of an `input_json_delta`, `content_block_stop` (or `{_phase, _index, ...}`) | `AnthropicStart` / `AnthropicPartial` / `AnthropicStop` |
 * | Gemini | a part `{functionCall: {name, args, id?}, thoughtSignature?}`, a bare call, or a chunk with such parts | `Gemini` per call |
 * | OpenAI Responses | `response.output_item.added` / `.done` of a `function_call` item, a bare item, `response.function_call_arguments.delta` | `OpenAi` keyed by `output_index` (id: `call_id`) |
 *
 * A whole call `{name, arguments: {...}}` whose arguments are already an object is a
 * `Gemini` fragment. `feed` skips a finished Responses item whose call is already known
 * (its deltas built it), and the raw `input_json_delta`s and stop of an Anthropic block
 * whose raw start was not a `tool_use` (a `server_tool_use` or `mcp_tool_use` is the
 * provider's call, not the caller's).
 *
 * @since 0.3.0
 * @category parsing
 */
export const detect = (raw: RawFragment): ReadonlyArray<Fragment> => detected(raw).map((found) => found.fragment)

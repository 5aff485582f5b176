/**
 * The rules of tool-call reassembly, on state changed in place: their one home. The
 * OpenAI Chat and Anthropic normalizers own one `ToolCalls` for their turn and feed it
 * each fragment without copying anything; `@sluice/views`' `ToolCallAccumulator`
 * clones it before each step, so that its value stays immutable outside
 * (docs/views.md#toolcallaccumulator).
 *
 * A call's argument text grows by string concatenation (a rope the engine joins once,
 * when the text is read), so a step never looks at the text seen so far, and a clone
 * shares the text of its original safely.
 *
 * @since 0.3.0
 */
import { Json } from "@sluice/core"
import { stringDelta } from "./openai-responses/internal/hostedTools.js"

/**
 * One finalized call: its id (when the provider gave one), name, parsed arguments (the
 * JSON object; `{}` for empty text; `{ _invalid_arguments: raw }` when the text is not
 * a JSON object, and then `invalid` says why (`{raw, error}`); `rawArguments` is the
 * text exactly as it arrived (Gemini's whole `args` as JSON text).
 *
 * @since 0.3.0
 * @category models
 */
export interface ToolCall {
  readonly id: string | undefined
  readonly name: string
  readonly arguments: Json.JsonObject
  readonly rawArguments: string
  readonly metadata: Json.JsonObject | undefined
  /**
   * Set when the arguments are malformed (`{raw, error}`): the call must not be run.
   *
   * @since 0.3.0
   */
  readonly invalid?: Json.InvalidArguments | undefined
}

/**
 * The provider family a call came from; it decides the order of `finalize`.
 *
 * @since 0.3.0
 * @category models
 */
export type Family = "openai" | "anthropic" | "gemini"

/**
 * One call as it stands.
 *
 * @since 0.3.0
 * @category models
 */
export interface CallState {
  readonly family: Family
  readonly index: number
  id: string | undefined
  name: string | undefined
  /** the argument text streamed so far */
  text: string
  /** Anthropic's start input or Gemini's whole args, as JSON text */
  readonly initial: string | undefined
  closed: boolean
  /** provider fields kept with the call (an OpenAI-compatible call's `extra_content`, ...) */
  metadata: Json.JsonObject | undefined
  /** an OpenAI Chat custom tool's call: its free-text input streams into `{"input": ...}` */
  readonly custom?: boolean | undefined
}

/**
 * What an OpenAI Chat `tool_calls[]` entry carries besides its function: a custom
 * tool's call (`type: "custom"`, its free text in `custom.input`; the call's metadata
 * says `type: "custom"`), and provider fields to keep with the call (merged into its
 * metadata).
 *
 * @since 0.3.0
 * @category models
 */
export interface OpenAiExtra {
  readonly custom?: boolean | undefined
  readonly metadata?: Json.JsonObject | undefined
}

/**
 * What one fragment did: `started` a call, `appended` to one, `closed` one (an
 * Anthropic stop), or `ignored` (it added nothing).
 *
 * @since 0.3.0
 * @category models
 */
export type StepKind = "started" | "appended" | "closed" | "ignored"

const nonEmpty = (
  text: string | undefined
): string | undefined => (text === undefined || text === "" ? undefined : text)

const familyRank: Record<Family, number> = { openai: 0, anthropic: 1, gemini: 2 }

/**
 * Tool calls being reassembled, changed in place. After each step, `position` is the
 * call the fragment went to (-1 for none) and `text` the argument text it added.
 *
 * @since 0.3.0
 * @category models
 */
export class ToolCalls {
  /** the position of the call the last step went to, -1 when none */
  position = -1
  /** the argument text the last step added */
  text = ""

  constructor(
    private readonly calls: Array<CallState> = [],
    /** the call of each Anthropic content block index (the latest start wins) */
    private readonly blocks: Map<number, number> = new Map(),
    /** the position of the call that holds each id */
    private readonly ids: Map<string, number> = new Map(),
    /** the latest OpenAI call of each index */
    private readonly openAiIndexes: Map<number, number> = new Map(),
    /** the position of the OpenAI call the last fragment went to */
    private lastOpenAi = -1
  ) {}

  /** A copy sharing nothing mutable with this one (the calls' texts are strings). */
  clone(): ToolCalls {
    const calls = new Array<CallState>(this.calls.length)
    for (let i = 0; i < calls.length; i++) calls[i] = { ...this.calls[i]! }
    return new ToolCalls(calls, new Map(this.blocks), new Map(this.ids), new Map(this.openAiIndexes), this.lastOpenAi)
  }

  /** The number of calls seen so far. */
  get size(): number {
    return this.calls.length
  }

  /** The name of the call at a position, as known so far. */
  nameAt(position: number): string | undefined {
    return this.calls[position]?.name
  }

  private add(call: CallState, text: string): "started" {
    const position = this.calls.length
    this.calls.push(call)
    if (call.id !== undefined) this.ids.set(call.id, position)
    this.position = position
    this.text = text
    return "started"
  }

  private byId(id: string | undefined): number {
    return id === undefined ? -1 : (this.ids.get(id) ?? -1)
  }

  /**
   * A `tool_calls[]` entry of an OpenAI chat completion delta; a custom tool's input
   * piece (`extra.custom`) is escaped into its call's `{"input": ...}` text.
   */
  openAi(
    index: number | undefined,
    rawId: string | undefined,
    name: string | undefined,
    args: string | undefined,
    extra?: OpenAiExtra
  ): StepKind {
    const piece = args ?? ""
    const custom = extra?.custom === true
    const id = nonEmpty(rawId)
    let position = this.byId(id)
    if (position === -1 && index !== undefined) {
      const candidate = this.openAiIndexes.get(index) ?? -1
      // an index reused with a new id is a new call (servers that number every call 0)
      if (candidate !== -1 && (id === undefined || this.calls[candidate]!.id === undefined)) position = candidate
    }
    if (position === -1 && index === undefined && id === undefined && this.lastOpenAi !== -1) position = this.lastOpenAi
    if (position === -1) {
      let next = 0
      if (index === undefined) {
        for (const call of this.calls) if (call.family === "openai") next = Math.max(next, call.index + 1)
      }
      const callIndex = index ?? next
      const text = custom ? stringDelta("input", "", piece) : piece
      const call: CallState = {
        family: "openai",
        index: callIndex,
        id,
        name: nonEmpty(name),
        text,
        initial: undefined,
        closed: false,
        metadata: custom ? { type: "custom", ...extra?.metadata } : extra?.metadata,
        custom
      }
      this.openAiIndexes.set(callIndex, this.calls.length)
      this.lastOpenAi = this.calls.length
      return this.add(call, text)
    }
    const call = this.calls[position]!
    // a custom call's text was opened (`{"input":"`) when it started
    const text = call.custom === true && piece !== "" ? stringDelta("input", call.text, piece) : piece
    this.lastOpenAi = position
    this.position = position
    this.text = text
    let changed = text !== ""
    if (extra?.metadata !== undefined) {
      call.metadata = { ...call.metadata, ...extra.metadata }
      changed = true
    }
    if (call.id === undefined && id !== undefined) {
      call.id = id
      this.ids.set(id, position)
      changed = true
    }
    if (call.name === undefined && nonEmpty(name) !== undefined) {
      call.name = name
      changed = true
    }
    if (text !== "") call.text += text
    return changed ? "appended" : "ignored"
  }

  /** An Anthropic `tool_use` block's start. */
  anthropicStart(
    index: number,
    rawId: string,
    name: string,
    input: Json.JsonObject | undefined,
    metadata: Json.JsonObject | undefined
  ): StepKind {
    const id = nonEmpty(rawId)
    const known = this.byId(id)
    if (known !== -1) {
      this.blocks.set(index, known)
      this.position = known
      this.text = ""
      return "ignored"
    }
    this.blocks.set(index, this.calls.length)
    return this.add(
      {
        family: "anthropic",
        index,
        id,
        name,
        text: "",
        initial: input === undefined ? undefined : JSON.stringify(input),
        closed: false,
        metadata
      },
      ""
    )
  }

  /** An Anthropic `input_json_delta` of a content block. */
  anthropicPartial(index: number, partialJson: string): StepKind {
    const position = this.blocks.get(index) ?? -1
    if (position === -1) {
      // a partial without its start: keep the text in a call of its own
      this.blocks.set(index, this.calls.length)
      return this.add(
        {
          family: "anthropic",
          index,
          id: undefined,
          name: undefined,
          text: partialJson,
          initial: undefined,
          closed: false,
          metadata: undefined
        },
        partialJson
      )
    }
    this.position = position
    this.text = partialJson
    if (partialJson === "") return "ignored"
    this.calls[position]!.text += partialJson
    return "appended"
  }

  /** An Anthropic content block's stop. */
  anthropicStop(index: number): StepKind {
    const position = this.blocks.get(index) ?? -1
    this.position = position
    this.text = ""
    if (position === -1 || this.calls[position]!.closed) return "ignored"
    this.calls[position]!.closed = true
    return "closed"
  }

  /** A whole Gemini `functionCall`. */
  gemini(
    rawId: string | undefined,
    name: string,
    args: Json.JsonObject,
    metadata: Json.JsonObject | undefined
  ): StepKind {
    const id = nonEmpty(rawId)
    const known = this.byId(id)
    if (known !== -1) {
      this.position = known
      this.text = ""
      return "ignored"
    }
    let index = 0
    for (const call of this.calls) if (call.family === "gemini") index++
    const text = JSON.stringify(args)
    return this.add({ family: "gemini", index, id, name, text: "", initial: text, closed: true, metadata }, text)
  }

  /** The call at a position, finalized as it stands: its text is read (joined) here. */
  finalizeCall(position: number): ToolCall | undefined {
    const call = this.calls[position]
    if (call === undefined) return undefined
    const rawArguments = call.custom === true
      ? `${call.text}"}`
      : call.text === "" && call.initial !== undefined
      ? call.initial
      : call.text
    const invalid = Json.invalidArguments(rawArguments)
    return {
      id: call.id,
      name: call.name ?? "",
      arguments: Json.parseArguments(rawArguments),
      rawArguments,
      metadata: call.metadata,
      ...(invalid === undefined ? {} : { invalid })
    }
  }

  /** Every call, finalized, OpenAI by index, then Anthropic by block index, then Gemini in arrival order. */
  finalize(): Array<ToolCall> {
    return this.calls
      .map((call, position) => ({ call, position }))
      .sort(
        (a, b) =>
          familyRank[a.call.family] - familyRank[b.call.family] || a.call.index - b.call.index ||
          a.position - b.position
      )
      .map(({ position }) => this.finalizeCall(position)!)
  }
}

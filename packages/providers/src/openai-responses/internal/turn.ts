/**
 * One Responses turn being normalized: the open items, their reasoning and tool-call
 * arguments, and the events they end as. (the OpenAI Responses normalizer, `OpenAiResponses`).
 *
 * @internal
 */
import { Json, OutputItem, ProviderError, TurnBuilder, Usage } from "@sluice/core"
import * as Result from "effect/Result"
import * as ErrorClassification from "../../ErrorClassification.js"
import { endTruncated, finishWith } from "../../internal/endTurn.js"
import * as HostedTools from "./hostedTools.js"

import type { NormalizeOptions } from "../../Normalizer.js"
import { WireDecodeError } from "../../WireDecodeError.js"
import {
  callIdOf,
  callName,
  type Declared,
  declaredBy,
  type FinalItem,
  finalItem,
  isClientCall,
  isProviderOutput,
  isServerSearch,
  itemTypeOf,
  partialItem,
  stringField
} from "./items.js"
import { emptyReasoning, type PartKind, type ReasoningText, textsOf } from "./reasoning.js"
import { classifyError, decodeReasoning, type Out, provider, RawOutputItem, Response, toUsage } from "./wire.js"

// ---------------------------------------------------------------------------
// The turn
// ---------------------------------------------------------------------------

export interface ItemState {
  readonly added: RawOutputItem | undefined
  readonly reasoning: ReasoningText
}

/** The state of one turn, shared by the streaming handler and the non-streaming decoder. */
export class ResponsesTurn {
  readonly builder: TurnBuilder.TurnBuilder
  private readonly items = new Map<string, ItemState>()
  private readonly finished = new Set<string>()
  /** the Sluice key of each provider item id that arrived after its item was opened under another */
  private readonly aliases = new Map<string, string>()
  /** the Sluice key of each `output_index` */
  private readonly byIndex = new Map<number, string>()
  /** items opened by an event that named neither an item nor an index, in order: the next item of their type claims them */
  private readonly anonymous: Array<string> = []
  /** the call id of the last provider-run tool search, for its output when that names none */
  private lastSearch: string | undefined
  private unnamed = 0
  /** the call ids of the calls the client must run, as the items stand */
  private readonly clientCalls = new Set<string>()
  private refusal: string | undefined
  private usage: Usage.Usage = Usage.empty
  /** the request's tool names: from the options, else from the response's echo of them */
  private declared: Declared
  private readonly declaredByOptions: boolean

  constructor(options: NormalizeOptions | undefined, now: () => number) {
    this.builder = new TurnBuilder.TurnBuilder({ providerId: provider, options, now })
    this.declared = options?.toolNames === undefined ? undefined : new Set(options.toolNames)
    this.declaredByOptions = this.declared !== undefined
  }

  get isOver(): boolean {
    return this.builder.isFinished
  }

  start(out: Out, response: Response): void {
    this.builder.start(out, response.model ?? undefined)
    if (!this.declaredByOptions) this.declared = declaredBy(response.tools) ?? this.declared
    if (response.usage !== undefined && response.usage !== null) this.usage = toUsage(response.usage)
  }

  private known(key: string): boolean {
    return this.builder.isOpen(key) || this.finished.has(key)
  }

  /**
   * The Sluice key of an item: by its provider id (or the id it is known under), else by
   * its `output_index` when an item of the same type was opened there without that id.
   */
  keyOf(raw: RawOutputItem, outputIndex: number | undefined): string | undefined {
    const id = raw.id
    if (id !== undefined) {
      const alias = this.aliases.get(id)
      if (alias !== undefined) return alias
      if (this.known(id)) return id
    }
    const indexed = outputIndex === undefined ? undefined : this.byIndex.get(outputIndex)
    if (indexed !== undefined && this.known(indexed) && this.items.get(indexed)?.added?.type === raw.type) {
      if (id !== undefined) this.aliases.set(id, indexed)
      return indexed
    }
    const position = this.anonymous.findIndex((key) => this.items.get(key)?.added?.type === raw.type)
    if (position !== -1 && id !== undefined) {
      const [claimed] = this.anonymous.splice(position, 1)
      this.aliases.set(id, claimed!)
      return claimed
    }
    return id
  }

  /** Opens an output item under its provider id (or the next `item_N`). */
  open(out: Out, raw: RawOutputItem, knownId?: string, outputIndex?: number): string {
    const id = knownId ?? this.keyOf(raw, outputIndex) ?? `item_${this.unnamed++}`
    if (outputIndex !== undefined && !this.byIndex.has(outputIndex)) this.byIndex.set(outputIndex, id)
    if (this.known(id)) return id
    const type = itemTypeOf(raw)
    if (isClientCall(raw, this.declared)) this.clientCalls.add(callIdOf(raw, id))
    if (raw.type === "tool_search_call" && isServerSearch(raw)) this.lastSearch = callIdOf(raw, id)
    const initial = type === "function_call" ? stringField(raw, "arguments") : undefined
    this.builder.openItem(out, type, {
      id,
      ...(type === "function_call" || type === "approval_request" ? { name: callName(raw) } : {}),
      ...(initial === undefined ? {} : { initial_content: initial })
    })
    this.items.set(id, { added: raw, reasoning: emptyReasoning() })
    return id
  }

  /**
   * The key a delta or `.done` event goes to: its `item_id` (or what that id is known
   * under), else the item at its `output_index`, else the last open item of the kind;
   * an item the stream never announced is opened as `fallback`.
   */
  target(out: Out, itemId: string | undefined, outputIndex: number | undefined, fallback: string): string {
    const probe: RawOutputItem = itemId === undefined ? { type: fallback } : { type: fallback, id: itemId }
    const key = this.keyOf(probe, outputIndex)
    if (key !== undefined && this.known(key)) return key
    if (itemId === undefined) {
      const indexed = outputIndex === undefined ? undefined : this.byIndex.get(outputIndex)
      if (indexed !== undefined && this.known(indexed)) return indexed
      const last = this.builder.lastOpen(itemTypeOf(probe))
      if (last !== undefined && outputIndex === undefined) return last.key
      if (outputIndex === undefined) {
        const opened = this.open(out, probe)
        this.anonymous.push(opened)
        return opened
      }
    }
    return this.open(out, probe, key, outputIndex)
  }

  /** A delta for an item. */
  delta(out: Out, key: string, text: string): void {
    if (this.finished.has(key)) return
    const type = this.items.get(key)?.added?.type
    const streamed = this.builder.content(key)
    this.builder.delta(
      out,
      key,
      type === "code_interpreter_call"
        ? HostedTools.codeDelta(streamed, text)
        : type === "custom_tool_call"
        ? HostedTools.stringDelta("input", streamed, text)
        : type === "apply_patch_call"
        ? HostedTools.patchDelta(this.items.get(key)?.added?.operation, streamed, text)
        : text
    )
  }

  /**
   * Reasoning text for one part of an item: a `delta` appends to the part, a `done`
   * gives the part's whole text. What a part gains streams, tagged with its kind; a
   * part's first text comes after a blank line when the item already has text.
   */
  reasoningText(out: Out, key: string, kind: PartKind, index: number, text: string, mode: "delta" | "done"): void {
    if (this.finished.has(key)) return
    const state = this.items.get(key)?.reasoning
    if (state === undefined) return
    const slot = `${kind}:${index}`
    const known = state.parts.get(slot) ?? ""
    if (mode === "done" && !text.startsWith(known)) {
      // a whole text that does not extend what streamed: the finished item keeps it
      state.parts.set(slot, text)
      return
    }
    const next = mode === "delta" ? known + text : text
    if (next.length > known.length) {
      if (known === "") {
        state.order.push({ kind, slot })
        if (this.builder.content(key) !== "") this.builder.delta(out, key, "\n\n", kind)
      }
      this.builder.delta(out, key, next.slice(known.length), kind)
    }
    state.parts.set(slot, next)
  }

  /**
   * The reasoning of an item as its parts stand: its content (the parts in the order
   * their text began; what streamed, unless a later whole text replaced a part), its
   * kind when it has text of one kind only, and both kinds' parts apart when it has both.
   */
  private reasoningOf(key: string): {
    readonly content: string
    readonly kind?: PartKind
    readonly apart?: Json.JsonObject
  } {
    const state = this.items.get(key)?.reasoning ?? emptyReasoning()
    const content = state.order.map(({ slot }) => state.parts.get(slot) ?? "").filter((text) => text !== "").join(
      "\n\n"
    )
    const summary = textsOf(state, "summary")
    const raw = textsOf(state, "raw")
    return {
      content: content === "" ? this.builder.content(key) : content,
      ...(summary.length > 0 && raw.length > 0
        ? { apart: { summary, reasoning_text: raw } }
        : summary.length > 0
        ? { kind: "summary" }
        : raw.length > 0
        ? { kind: "raw" }
        : {})
    }
  }

  /** The final form of an item that was cut off (see `partialItem`), its reasoning as its parts stand. */
  private partial(key: string): OutputItem.OutputItem {
    const item = partialItem(this.items.get(key)?.added, key, this.builder.content(key), this.declared)
    if (item.type !== "reasoning") return item
    const { apart, content, kind } = this.reasoningOf(key)
    return {
      ...item,
      content,
      ...(kind === undefined ? {} : { reasoning_kind: kind }),
      ...(apart === undefined ? {} : { provider_metadata: apart })
    }
  }

  /** The finished reasoning item, from the finished item's parts folded into what streamed. */
  private finalReasoning(
    out: Out,
    raw: RawOutputItem,
    key: string,
    line: number
  ): Result.Result<FinalItem, WireDecodeError> {
    return Result.map(decodeReasoning({ ...raw, id: key }, line, "reasoning item"), (reasoning) => {
      ;(reasoning.summary ?? []).forEach((part, index) =>
        this.reasoningText(out, key, "summary", index, part.text, "done")
      )
      ;(reasoning.content ?? []).forEach((part, index) => this.reasoningText(out, key, "raw", index, part.text, "done"))
      const { apart, content, kind } = this.reasoningOf(key)
      const item: OutputItem.ReasoningItem = {
        type: "reasoning",
        id: key,
        content,
        ...(kind === undefined ? {} : { reasoning_kind: kind }),
        ...(typeof reasoning.encrypted_content === "string" ? { encrypted_content: reasoning.encrypted_content } : {}),
        ...(apart === undefined ? {} : { provider_metadata: apart })
      }
      return { item, refusal: undefined }
    })
  }

  /** An output item is finished. */
  done(
    out: Out,
    raw: RawOutputItem,
    line: number,
    knownId?: string,
    outputIndex?: number
  ): WireDecodeError | undefined {
    const id = this.open(out, raw, knownId, outputIndex)
    if (this.finished.has(id)) return undefined
    const final = raw.type === "reasoning"
      ? this.finalReasoning(out, raw, id, line)
      : finalItem(
        raw,
        id,
        this.builder.content(id),
        line,
        isProviderOutput(raw) ? this.lastSearch : undefined,
        this.declared
      )
    if (Result.isFailure(final)) return final.failure
    // the finished item decides (a shell's environment may come only with it), and a
    // result OpenAI reported in the turn means OpenAI ran the call
    const item = final.success.item
    if (isClientCall(raw, this.declared)) this.clientCalls.add(callIdOf(raw, id))
    else if (item.type === "function_call") this.clientCalls.delete(item.call_id)
    if (item.type === "function_call_output" && item.provider_executed === true) this.clientCalls.delete(item.call_id)
    if (final.success.refusal !== undefined) this.refusal = (this.refusal ?? "") + final.success.refusal
    this.builder.done(out, id, final.success.item)
    this.finished.add(id)
    const result = final.success.result
    if (result !== undefined) {
      this.builder.openItem(out, "function_call_output", { id: result.id })
      this.builder.delta(out, result.id, result.output)
      this.builder.done(out, result.id, result)
    }
    return undefined
  }

  /** Closes every open item with what it received. */
  private closeOpen(out: Out): void {
    for (const id of this.builder.openItems()) {
      this.builder.done(out, id, this.partial(id))
      this.finished.add(id)
    }
  }

  /**
   * The response is over (`response.completed`, `.incomplete`, `.failed`, or a
   * non-streaming body): emits the items the stream did not finish, then the end.
   */
  end(out: Out, response: Response, line: number): WireDecodeError | undefined {
    this.start(out, response)
    const output = response.output ?? []
    for (let position = 0; position < output.length; position++) {
      const raw = output[position]!
      const key = this.keyOf(raw, position)
      if (key !== undefined && this.finished.has(key)) continue
      const opened = this.open(out, raw, key, position)
      if (raw.type !== "reasoning" && raw.type !== "mcp_approval_request") {
        const final = finalItem(raw, opened, this.builder.content(opened), line, this.lastSearch, this.declared)
        if (Result.isFailure(final)) return final.failure
        this.builder.delta(
          out,
          opened,
          OutputItem.streamedContent(final.success.item).slice(this.builder.content(opened).length)
        )
      }
      const failure = this.done(out, raw, line, opened, position)
      if (failure !== undefined) return failure
    }
    this.closeOpen(out)
    const usage = this.usage
    const status = response.status ??
      (response.error ? "failed" : response.incomplete_details ? "incomplete" : "completed")
    if (status === "failed" || (response.error !== undefined && response.error !== null)) {
      const details = response.error
      const code = details?.code ?? details?.type ?? "response_failed"
      const error = classifyError(code, details?.message ?? "the response failed", details ?? undefined)
      finishWith(this.builder, out, {
        finishReason: error.type === "content_blocked" ? "content-filter" : "error",
        usage,
        error,
        raw: details ?? undefined
      })
    } else if (status === "incomplete") {
      const reason = response.incomplete_details?.reason ?? "unknown"
      if (reason === "max_output_tokens") finishWith(this.builder, out, { finishReason: "length", usage })
      else if (reason === "content_filter") {
        const error = ErrorClassification.contentBlocked(
          "content_filter",
          "the response was stopped by the content filter"
        )
        finishWith(this.builder, out, { finishReason: "content-filter", usage, error })
      } else finishWith(this.builder, out, { finishReason: "other", usage })
    } else if (status === "completed") {
      if (this.refusal !== undefined) {
        const error = ErrorClassification.contentBlocked("refusal", this.refusal)
        finishWith(this.builder, out, { finishReason: "content-filter", usage, error })
      } else finishWith(this.builder, out, { finishReason: this.clientCalls.size > 0 ? "tool-calls" : "stop", usage })
    } else {
      const error = ErrorClassification.make(
        "api_error",
        `response_${status}`,
        `the response ended with status ${status}`,
        {
          retryable: status !== "cancelled"
        }
      )
      finishWith(this.builder, out, { finishReason: "error", usage, error })
    }
    return undefined
  }

  /** An `error` event: the turn ends with it (`raw`: the event as it came). */
  fail(out: Out, error: ProviderError.ProviderError, raw?: Json.JsonValue): void {
    this.closeOpen(out)
    finishWith(this.builder, out, { finishReason: "error", usage: this.usage, error, raw })
  }

  /** The input ended without a terminal event. */
  truncate(out: Out): void {
    endTruncated(
      this.builder,
      out,
      provider,
      (id) => this.partial(id),
      this.usage
    )
  }
}

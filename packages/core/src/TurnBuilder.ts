/**
 * The builder of one turn's StreamEvents, shared by every stage that turns a model's
 * output into the hub vocabulary (the provider normalizers and the AI SDK adapter):
 * the envelope, `response_start`, item start, delta and done, `response_error`, and
 * `response_done`.
 *
 * @since 0.1.0
 */
import type { FinishReason } from "./FinishReason.js"
import * as Ids from "./Ids.js"
import type { JsonObject, JsonValue } from "./Json.js"
import type { ItemType, OutputItem, ReasoningKind } from "./OutputItem.js"
import { ProviderError } from "./ProviderError.js"
import * as StreamEvent from "./StreamEvent.js"
import * as Text from "./Text.js"
import type { Usage } from "./Usage.js"

type Out = Array<StreamEvent.StreamEvent>

/**
 * The ids and model a caller may fix for a turn; each one left out is drawn (ids) or
 * defaults (`modelId` to `"unknown"`).
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnOptions {
  readonly runId?: string | undefined
  readonly turnId?: string | undefined
  readonly threadId?: string | undefined
  readonly traceContext?: StreamEvent.TraceContext | undefined
  readonly modelId?: string | undefined
}

/**
 * What a builder needs from its surroundings.
 *
 * @since 0.1.0
 * @category models
 */
export interface Context {
  /** `response_start.provider_id` */
  readonly providerId: string
  readonly options: TurnOptions | undefined
  /** The time of each event, read once per event (twice for `response_start`). */
  readonly now: () => number
  /**
   * The id of each event. Defaults to one `Ids.makeSequence` per turn; pass
   * `Ids.generateEventId` for one random id per event.
   */
  readonly eventId?: (() => string) | undefined
  /**
   * The finish reason that becomes `"error"` in `response_done` once an error was
   * emitted. Defaults to `null` (a turn that failed without a reason ends with
   * `"error"`); the AI SDK adapter passes `"stop"`.
   */
  readonly replaceAfterError?: FinishReason | null | undefined
}

/**
 * An item that has started and not yet ended.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenItem {
  /** `item_id` on the wire */
  readonly id: string
  /** What the caller finds the item by: its id unless the caller gave another key. */
  readonly key: string
  readonly type: ItemType
  /** The name given when it started (a tool call's name). */
  readonly name: string | undefined
  /** The content received so far. */
  content: string
  /** Whatever provider metadata the caller keeps with the item; the builder only holds it. */
  metadata: JsonObject | undefined
}

/**
 * How an item starts: its id (`item_0`, `item_1`, ... in start order when left out),
 * the key the caller finds it by (its id when left out), a name (sent in
 * `item_start`), content it starts with, provider metadata to hold, and for reasoning
 * the kind of its text (`reasoning_kind`, sent in `item_start`; since 0.2.0).
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenFields {
  readonly id?: string | undefined
  readonly key?: string | undefined
  readonly name?: string | undefined
  readonly initial_content?: string | undefined
  readonly metadata?: JsonObject | undefined
  readonly reasoning_kind?: ReasoningKind | undefined
}

/**
 * How a turn ends: its finish reason, usage when known, and whether it was aborted
 * (status `aborted` instead of `complete` or `error`).
 *
 * @since 0.1.0
 * @category models
 */
export interface End {
  readonly finishReason: FinishReason | null
  readonly usage?: Usage | undefined
  readonly aborted?: boolean | undefined
  /** the response's `provider_metadata` (since 0.3.0) */
  readonly providerMetadata?: JsonObject | undefined
}

const noFields: OpenFields = {}

/**
 * Builds the events of one turn and keeps the bookkeeping every producer needs: the
 * envelope, item ids, content of open items, and the terminal events. Mutable and
 * synchronous: a normalizer owns one per stream, and appends each call's events to the
 * array it passes.
 *
 * Item ids are `item_0`, `item_1`, ... in the order items start, unless the caller
 * names its items (the Responses API does), so that a streamed turn and the same turn
 * decoded from a non-streaming response get the same ids.
 *
 * @since 0.1.0
 * @category models
 */
export class TurnBuilder {
  /** `response_id` and the envelope's `run_id` */
  readonly runId: string
  readonly turnId: string
  readonly threadId: string
  /** The model named in `response_start`; may change until the turn starts. */
  modelId: string
  private readonly eventContext: StreamEvent.EventContext
  private readonly nextEventId: () => string
  private readonly replaceAfterError: FinishReason | null
  private readonly items = new Map<string, OpenItem>()
  private itemCount = 0
  private started = false
  private finished = false
  private failed = false

  constructor(private readonly context: Context) {
    const options = context.options
    this.runId = options?.runId ?? Ids.generateEventId()
    this.turnId = options?.turnId ?? Ids.generateEventId()
    this.threadId = options?.threadId ?? Ids.generateEventId()
    this.modelId = options?.modelId ?? "unknown"
    this.eventContext = { runId: this.runId, traceContext: options?.traceContext }
    this.nextEventId = context.eventId ?? Ids.makeSequence()
    this.replaceAfterError = context.replaceAfterError ?? null
  }

  /** Whether `response_start` has been emitted. */
  get isStarted(): boolean {
    return this.started
  }

  /** Whether the turn has ended (`response_done` emitted). */
  get isFinished(): boolean {
    return this.finished
  }

  /** Whether a `response_error` was emitted. */
  get hasFailed(): boolean {
    return this.failed
  }

  /** Whether an item is open under this key. */
  isOpen(key: string): boolean {
    return this.items.has(key)
  }

  /** The content the item open under this key has received so far. */
  content(key: string): string {
    return this.items.get(key)?.content ?? ""
  }

  /** The item open under this key. */
  item(key: string): OpenItem | undefined {
    return this.items.get(key)
  }

  /** The keys of the open items, in the order they started. */
  openItems(): ReadonlyArray<string> {
    return [...this.items.keys()]
  }

  /** The open items, in the order they started. */
  openRecords(): ReadonlyArray<OpenItem> {
    return [...this.items.values()]
  }

  /** The open item of this type that started last. */
  lastOpen(type: ItemType): OpenItem | undefined {
    let last: OpenItem | undefined
    for (const item of this.items.values()) if (item.type === type) last = item
    return last
  }

  private emit(payload: StreamEvent.Payload, out: Out): void {
    out.push(StreamEvent.envelope(this.eventContext, payload, this.nextEventId(), this.context.now()))
  }

  /** Emits `response_start` once; later calls only update the model id. */
  start(out: Out, modelId?: string): void {
    if (modelId !== undefined && modelId !== "") this.modelId = modelId
    if (this.started) return
    this.started = true
    this.emit(
      {
        type: "response_start",
        response_id: this.runId,
        turn_id: this.turnId,
        thread_id: this.threadId,
        model_id: this.modelId,
        provider_id: this.context.providerId,
        created_at: this.context.now()
      },
      out
    )
  }

  /** Opens an item and returns it. Starts the turn first when needed. */
  open(out: Out, type: ItemType, fields: OpenFields = noFields): OpenItem {
    this.start(out)
    const id = fields.id ?? `item_${this.itemCount}`
    this.itemCount++
    const payload: {
      -readonly [K in keyof StreamEvent.PayloadOf<"item_start">]: StreamEvent.PayloadOf<"item_start">[K]
    } = {
      type: "item_start",
      item_id: id,
      item_type: type
    }
    if (fields.name !== undefined) payload.name = fields.name
    if (fields.initial_content !== undefined && fields.initial_content !== "") {
      payload.initial_content = fields.initial_content
    }
    if (fields.reasoning_kind !== undefined) payload.reasoning_kind = fields.reasoning_kind
    const item: OpenItem = {
      id,
      key: fields.key ?? id,
      type,
      name: fields.name,
      content: fields.initial_content ?? "",
      metadata: fields.metadata
    }
    this.items.set(item.key, item)
    this.emit(payload, out)
    return item
  }

  /** Opens an item and returns its id. Starts the turn first when needed. */
  openItem(out: Out, type: ItemType, fields: OpenFields = noFields): string {
    return this.open(out, type, fields).id
  }

  /**
   * Appends content to the item open under this key. Empty deltas are dropped. A
   * reasoning delta may state its `reasoningKind` (since 0.2.0), when it differs from
   * what its item's start said.
   */
  delta(out: Out, key: string, text: string, reasoningKind?: ReasoningKind): void {
    if (text === "") return
    const item = this.items.get(key)
    if (item === undefined) return
    item.content = Text.append(item.content, text)
    this.emit(
      reasoningKind === undefined
        ? { type: "item_delta", item_id: item.id, delta_content: text }
        : { type: "item_delta", item_id: item.id, delta_content: text, reasoning_kind: reasoningKind },
      out
    )
  }

  /** Closes the item open under this key (or, when none is, the item with this id) with its final form. */
  done(out: Out, key: string, finalItem: OutputItem): void {
    const item = this.items.get(key)
    this.items.delete(key)
    this.emit({ type: "item_done", item_id: item === undefined ? key : item.id, final_item: finalItem }, out)
  }

  /**
   * Emits a turn-level error; the turn will end with status `error`. `raw` (since
   * 0.2.0) is the provider's own error object, for an error that arrived inside the
   * stream: it rides along as the error's `raw`.
   */
  error(out: Out, error: ProviderError, raw?: JsonValue): void {
    this.start(out)
    this.failed = true
    this.emit({
      type: "response_error",
      response_id: this.runId,
      error: StreamEvent.errorObjectFromProviderError(error, raw)
    }, out)
  }

  /**
   * Ends the turn with `response_done`, once. Status is `aborted` when asked, else
   * `error` after any `error` call, else `complete`; after an error the reason
   * `replaceAfterError` (see `Context`) becomes `"error"`.
   */
  finish(out: Out, end: End): void {
    if (this.finished) return
    this.start(out)
    this.finished = true
    const payload: {
      -readonly [K in keyof StreamEvent.PayloadOf<"response_done">]: StreamEvent.PayloadOf<"response_done">[K]
    } = {
      type: "response_done",
      response_id: this.runId,
      status: end.aborted === true ? "aborted" : this.failed ? "error" : "complete",
      finish_reason: this.failed && end.finishReason === this.replaceAfterError ? "error" : end.finishReason
    }
    if (end.usage !== undefined) payload.usage = end.usage
    if (end.providerMetadata !== undefined) payload.provider_metadata = end.providerMetadata
    this.emit(payload, out)
  }

  /**
   * The input ended without the producer's terminal event: closes every open item
   * with what arrived (`close` builds each final item), then emits `error` (the
   * caller's truncation error, retryable as a rule) and ends the turn with status
   * `error`, finish reason `"error"` and the usage known so far. Does nothing when the
   * turn already ended.
   */
  endTruncated(out: Out, error: ProviderError, close: (item: OpenItem) => OutputItem, usage?: Usage): void {
    if (this.finished) return
    for (const item of this.openRecords()) this.done(out, item.key, close(item))
    this.error(out, error)
    this.finish(out, { finishReason: "error", usage })
  }

  /**
   * An adapter's parts ended without their finish part: unless an error was already
   * emitted (it explains the end), emits a retryable `stream_truncated` error,
   * "`source` ended without a finish part"; then ends the turn through the caller's
   * `finish` (which closes the open items its own way, then calls `finish`) with
   * finish reason `"error"`, so status `error`. Does nothing when the turn already
   * ended.
   */
  endWithoutFinish(out: Out, source: string, finish: (end: End) => void): void {
    if (this.finished) return
    if (!this.failed) {
      this.error(
        out,
        new ProviderError({
          type: "api_error",
          retryable: true,
          code: "stream_truncated",
          message: `${source} ended without a finish part`
        })
      )
    }
    finish({ finishReason: "error" })
  }
}

/**
 * A builder for one turn.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (context: Context): TurnBuilder => new TurnBuilder(context)

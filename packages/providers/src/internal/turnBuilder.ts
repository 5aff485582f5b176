import type { OutputItem, ProviderError, Usage } from "@sluice/core"
import { Ids, StreamEvent } from "@sluice/core"
import type { FinishReason } from "@sluice/core"
import * as ErrorClassification from "../ErrorClassification.js"
import type { NormalizeOptions } from "../Normalizer.js"

type Payload = StreamEvent.Payload
type Out = Array<StreamEvent.StreamEvent>

/** What a builder needs from its surroundings. @internal */
export interface BuilderContext {
  readonly providerId: string
  readonly options: NormalizeOptions | undefined
  readonly now: () => number
}

interface OpenItem {
  readonly id: string
  readonly type: OutputItem.ItemType
  content: string
}

/**
 * Builds the events of one turn and keeps the bookkeeping every provider needs: the
 * envelope, item ids, content of open items, and the terminal events. Mutable and
 * synchronous: a normalizer owns one per stream.
 *
 * Item ids are `item_0`, `item_1`, ... in the order items start, unless the provider
 * names its items (the Responses API does), so that a streamed turn and the same turn
 * decoded from a non-streaming response get the same ids.
 *
 * @internal
 */
export class TurnBuilder {
  readonly runId: string
  readonly turnId: string
  readonly threadId: string
  private readonly eventContext: StreamEvent.EventContext
  /** Event ids: one random base per turn and a counter (see `Ids.makeSequence`). */
  private readonly nextEventId = Ids.makeSequence()
  private readonly open = new Map<string, OpenItem>()
  private itemCount = 0
  private started = false
  private finished = false
  private failed = false
  modelId: string

  constructor(private readonly context: BuilderContext) {
    const options = context.options
    this.runId = options?.runId ?? Ids.generateEventId()
    this.turnId = options?.turnId ?? Ids.generateEventId()
    this.threadId = options?.threadId ?? Ids.generateEventId()
    this.modelId = options?.modelId ?? "unknown"
    this.eventContext = { runId: this.runId, traceContext: options?.traceContext }
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

  /** Whether an item is open. */
  isOpen(itemId: string): boolean {
    return this.open.has(itemId)
  }

  /** The content an open item has received so far. */
  content(itemId: string): string {
    return this.open.get(itemId)?.content ?? ""
  }

  /** The ids of the open items, in the order they started. */
  openItems(): ReadonlyArray<string> {
    return [...this.open.keys()]
  }

  private emit(payload: Payload, out: Out): void {
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

  /** Opens an item and returns its id. Starts the turn first when needed. */
  openItem(
    out: Out,
    type: OutputItem.ItemType,
    fields: { readonly id?: string | undefined; readonly name?: string | undefined; readonly initial_content?: string | undefined } = {}
  ): string {
    this.start(out)
    const id = fields.id ?? `item_${this.itemCount}`
    this.itemCount++
    const payload: { -readonly [K in keyof StreamEvent.PayloadOf<"item_start">]: StreamEvent.PayloadOf<"item_start">[K] } = {
      type: "item_start",
      item_id: id,
      item_type: type
    }
    if (fields.name !== undefined) payload.name = fields.name
    if (fields.initial_content !== undefined && fields.initial_content !== "") payload.initial_content = fields.initial_content
    this.open.set(id, { id, type, content: fields.initial_content ?? "" })
    this.emit(payload, out)
    return id
  }

  /** Appends content to an open item. Empty deltas are dropped. */
  delta(out: Out, itemId: string, text: string): void {
    if (text === "") return
    const item = this.open.get(itemId)
    if (item === undefined) return
    item.content += text
    this.emit({ type: "item_delta", item_id: itemId, delta_content: text }, out)
  }

  /** Closes an open item with its final form. */
  done(out: Out, itemId: string, finalItem: OutputItem.OutputItem): void {
    this.open.delete(itemId)
    this.emit({ type: "item_done", item_id: itemId, final_item: finalItem }, out)
  }

  /** Emits a turn-level error; the turn will end with status `error`. */
  error(out: Out, error: ProviderError.ProviderError): void {
    this.start(out)
    this.failed = true
    this.emit({ type: "response_error", response_id: this.runId, error: StreamEvent.errorObjectFromProviderError(error) }, out)
  }

  /** Ends the turn with `response_done`. Status is `error` after any `error` call. */
  finish(
    out: Out,
    end: { readonly finishReason: FinishReason.FinishReason | null; readonly usage?: Usage.Usage | undefined }
  ): void {
    if (this.finished) return
    this.start(out)
    this.finished = true
    const payload: { -readonly [K in keyof StreamEvent.PayloadOf<"response_done">]: StreamEvent.PayloadOf<"response_done">[K] } = {
      type: "response_done",
      response_id: this.runId,
      status: this.failed ? "error" : "complete",
      finish_reason: this.failed && end.finishReason === null ? "error" : end.finishReason
    }
    if (end.usage !== undefined) payload.usage = end.usage
    this.emit(payload, out)
  }

  /**
   * The input ended without the provider's terminal event: closes every open item
   * with what arrived (`close` builds each final item from its id, type and content),
   * then ends the turn with a retryable `stream_truncated` error and status `error`.
   * Does nothing when the turn already ended.
   */
  endTruncated(out: Out, close: (itemId: string, type: OutputItem.ItemType, content: string) => OutputItem.OutputItem): void {
    if (this.finished) return
    for (const item of [...this.open.values()]) this.done(out, item.id, close(item.id, item.type, item.content))
    this.error(out, ErrorClassification.truncated(this.context.providerId))
    this.finish(out, { finishReason: "error" })
  }
}

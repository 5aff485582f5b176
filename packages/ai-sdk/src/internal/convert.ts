import type { FinishReason, OutputItem } from "@sluice/core"
import { Ids, Json, ProviderError, SchemaDecode, StreamEvent, Usage } from "@sluice/core"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import { AiSdkPartError } from "../AiSdkPartError.js"
import type { Options } from "../AiSdkStream.js"
import * as Parts from "./parts.js"

interface OpenItem {
  readonly id: string
  readonly type: "message" | "reasoning" | "function_call"
  readonly name: string
  content: string
  metadata: Json.JsonObject | undefined
  /** a tool call the provider ran itself (`providerExecuted`) */
  providerExecuted?: boolean
  /** the `source` parts that arrived while this message was open (or just before it) */
  sources?: Array<OutputItem.Source>
}

type Out = Array<StreamEvent.StreamEvent>

const decodePart = SchemaDecode.decodeUnknownEither(Parts.Part)
const decodeUsage = SchemaDecode.decodeUnknownOption(Parts.AnyUsage)
const decodeErrorFields = SchemaDecode.decodeUnknownOption(Parts.ErrorFields)

/** Plain JSON of a value, dropping `undefined` fields; `undefined` when it has none. */
const toJson = (value: unknown): Json.JsonValue | undefined => {
  if (value === undefined) return undefined
  try {
    const text = JSON.stringify(value)
    return text === undefined ? undefined : Json.parseOrUndefined(text)
  } catch {
    return undefined
  }
}

const toJsonObject = (value: unknown): Json.JsonObject | undefined => {
  const json = toJson(value)
  return Json.isObject(json) ? json : undefined
}

/** Merges provider metadata one provider key deep. */
const mergeMetadata = (into: Json.JsonObject | undefined, value: unknown): Json.JsonObject | undefined => {
  const next = toJsonObject(value)
  if (next === undefined) return into
  if (into === undefined) return next
  const merged: Record<string, Json.JsonValue> = { ...into }
  for (const [key, inner] of Object.entries(next)) {
    const before = merged[key]
    merged[key] = Json.isObject(before) && Json.isObject(inner) ? { ...before, ...inner } : inner
  }
  return merged
}

const field = (metadata: Json.JsonObject | undefined, provider: string, key: string): string | undefined => {
  const inner = metadata?.[provider]
  const value = Json.isObject(inner) ? inner[key] : undefined
  return typeof value === "string" ? value : undefined
}

const thoughtSignature = (metadata: Json.JsonObject | undefined): string | undefined =>
  field(metadata, "google", "thoughtSignature") ?? field(metadata, "vertex", "thoughtSignature")

/** Provider metadata as Sluice keeps it: the AI SDK's, plus Gemini's `thoughtSignature` at the top. */
const keptMetadata = (metadata: Json.JsonObject | undefined): Json.JsonObject | undefined => {
  const signature = thoughtSignature(metadata)
  return signature === undefined || metadata === undefined ? metadata : { ...metadata, thoughtSignature: signature }
}

const finishReasonOf = (reason: string | { readonly unified: string }): FinishReason.FinishReason => {
  const value = typeof reason === "string" ? reason : reason.unified
  return value === "stop" || value === "length" || value === "tool-calls" || value === "content-filter" || value === "error"
    ? value
    : "other"
}

const count = (value: number | null | undefined): number | undefined => (typeof value === "number" ? value : undefined)

/** Sluice usage from any of the AI SDK's usage shapes; `undefined` when it has none. @internal */
export const usageOf = (value: unknown): Usage.Usage | undefined => {
  if (value === undefined || value === null) return undefined
  const decoded = decodeUsage(value)
  if (Option.isNone(decoded)) return undefined
  const usage = decoded.value
  const inputTokens = usage.inputTokens
  const outputTokens = usage.outputTokens
  const nestedIn = typeof inputTokens === "object" && inputTokens !== null ? inputTokens : undefined
  const nestedOut = typeof outputTokens === "object" && outputTokens !== null ? outputTokens : undefined
  const totalIn = typeof inputTokens === "number" ? inputTokens : count(nestedIn?.total)
  const cacheRead = count(nestedIn?.cacheRead) ?? count(usage.inputTokenDetails?.cacheReadTokens) ?? count(usage.cachedInputTokens)
  const cacheWrite = count(nestedIn?.cacheWrite) ?? count(usage.inputTokenDetails?.cacheWriteTokens)
  const noCache = count(nestedIn?.noCache) ?? count(usage.inputTokenDetails?.noCacheTokens)
  const input = noCache ?? (totalIn === undefined ? undefined : totalIn - (cacheRead ?? 0) - (cacheWrite ?? 0))
  const output = typeof outputTokens === "number" ? outputTokens : count(nestedOut?.total)
  const reasoning = count(nestedOut?.reasoning) ?? count(usage.outputTokenDetails?.reasoningTokens) ?? count(usage.reasoningTokens)
  const raw = toJson(value)
  return Usage.make({ input, output, cacheRead, cacheWrite, reasoning, ...(raw === undefined ? {} : { raw }) })
}

/** What the provider's body says, wherever the AI SDK put it: `data`, `responseBody`, or the error itself. */
const bodySignals = (error: unknown, fields: typeof Parts.ErrorFields.Type): ProviderError.ErrorSignals | undefined => {
  const parsed = fields.responseBody === undefined ? undefined : Json.parseOrUndefined(fields.responseBody)
  for (const body of [fields.data, parsed, error]) {
    const signals = body === undefined || body === null ? undefined : ProviderError.signalsOfBody(body)
    if (signals !== undefined && (signals.code !== undefined || signals.type !== undefined)) return signals
  }
  return undefined
}

/**
 * A `ProviderError` for an AI SDK error value (an `APICallError`, any `Error`, the raw
 * provider error object older providers put in an error part, or anything), classified
 * by `ProviderError.classify` from its status and body together. The SDK's
 * `isRetryable` decides unless the body names a quota, content-policy or context-window
 * error.
 *
 * @internal
 */
export const providerErrorOf = (error: unknown): ProviderError.ProviderError => {
  const fields: typeof Parts.ErrorFields.Type = Option.getOrElse(decodeErrorFields(error), () => ({}))
  const status = fields.statusCode !== undefined && Number.isInteger(fields.statusCode) ? fields.statusCode : undefined
  const body = bodySignals(error, fields)
  const message = fields.message ?? body?.message ?? (typeof error === "string" ? error : "AI SDK stream error")
  return ProviderError.classify({
    ...body,
    status: status ?? body?.status,
    code: body?.code ?? (status === undefined && body?.type === undefined && body?.status === undefined ? (fields.name ?? "ai_sdk_error") : undefined),
    message,
    retryable: fields.isRetryable,
    raw: error
  })
}

/** A `source` part as the message's source: `url` pages and documents; other kinds give none. */
const sourceOf = (part: typeof Parts.SourcePart.Type): OutputItem.Source | undefined => {
  const fields = {
    ...(part.url === undefined ? {} : { url: part.url }),
    ...(part.title === undefined ? {} : { title: part.title }),
    ...(part.filename === undefined ? {} : { filename: part.filename })
  }
  if (part.sourceType === "url" && part.url !== undefined) return { kind: "url", ...fields }
  if (part.sourceType === "document") return { kind: "document", ...fields }
  return undefined
}

const textOfOutput = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(toJson(value) ?? null))

/**
 * Turns AI SDK stream parts into StreamEvents. Mutable: one per stream.
 *
 * @internal
 */
export class PartConverter {
  private readonly runId: string
  private readonly turnId: string
  private readonly threadId: string
  private readonly context: StreamEvent.EventContext
  private readonly providerId: string
  private modelId: string
  private readonly open = new Map<string, OpenItem>()
  private itemCount = 0
  private partIndex = 0
  private started = false
  /** `source` parts that came while no message was open: the next message's */
  private pendingSources: Array<OutputItem.Source> = []
  private ended = false
  private failed = false

  constructor(options: Options) {
    this.runId = options.runId ?? Ids.generateEventId()
    this.turnId = options.turnId ?? Ids.generateEventId()
    this.threadId = options.threadId ?? Ids.generateEventId()
    this.context = { runId: this.runId, traceContext: options.traceContext }
    this.providerId = options.providerId ?? "ai-sdk"
    this.modelId = options.modelId ?? "unknown"
  }

  private emit(out: Out, now: number, payload: StreamEvent.Payload): void {
    out.push(StreamEvent.envelope(this.context, payload, Ids.generateEventId(), now))
  }

  private start(out: Out, now: number): void {
    if (this.started) return
    this.started = true
    this.emit(out, now, {
      type: "response_start",
      response_id: this.runId,
      turn_id: this.turnId,
      thread_id: this.threadId,
      model_id: this.modelId,
      provider_id: this.providerId,
      created_at: now
    })
  }

  private openItem(out: Out, now: number, key: string, type: OpenItem["type"], name: string, metadata: unknown): OpenItem {
    this.start(out, now)
    const item: OpenItem = { id: `item_${this.itemCount++}`, type, name, content: "", metadata: mergeMetadata(undefined, metadata) }
    if (type === "message" && this.pendingSources.length > 0) {
      item.sources = this.pendingSources
      this.pendingSources = []
    }
    this.open.set(key, item)
    this.emit(out, now, { type: "item_start", item_id: item.id, item_type: type, ...(type === "function_call" ? { name } : {}) })
    return item
  }

  private delta(out: Out, now: number, item: OpenItem, text: string): void {
    if (text === "") return
    item.content += text
    this.emit(out, now, { type: "item_delta", item_id: item.id, delta_content: text })
  }

  private close(out: Out, now: number, key: string, item: OpenItem, callId?: string): void {
    this.open.delete(key)
    const metadata = keptMetadata(item.metadata)
    const provider = metadata === undefined ? {} : { provider_metadata: metadata }
    let final: OutputItem.OutputItem
    switch (item.type) {
      case "message":
        final = {
          type: "message",
          id: item.id,
          content: item.content,
          origin: "agent",
          ...(item.sources === undefined ? {} : { sources: item.sources }),
          ...provider
        }
        break
      case "reasoning": {
        const signature = field(item.metadata, "anthropic", "signature") ?? thoughtSignature(item.metadata)
        const redacted = field(item.metadata, "anthropic", "redactedData")
        const encrypted = field(item.metadata, "openai", "reasoningEncryptedContent")
        final = {
          type: "reasoning",
          id: item.id,
          content: item.content,
          ...(signature === undefined ? {} : { signature }),
          ...(redacted === undefined ? {} : { redacted: true, data: redacted }),
          ...(encrypted === undefined ? {} : { encrypted_content: encrypted }),
          ...provider
        }
        break
      }
      case "function_call":
        final = {
          type: "function_call",
          id: item.id,
          call_id: callId ?? key.slice("tool:".length),
          name: item.name,
          arguments: item.content,
          ...(item.providerExecuted === true ? { provider_executed: true } : {}),
          ...provider
        }
        break
    }
    this.emit(out, now, { type: "item_done", item_id: item.id, final_item: final })
  }

  private closeAll(out: Out, now: number): void {
    for (const [key, item] of [...this.open]) this.close(out, now, key, item)
  }

  private finish(out: Out, now: number, status: StreamEvent.ResponseStatus, finishReason: FinishReason.FinishReason | null, usage?: Usage.Usage): void {
    this.start(out, now)
    this.closeAll(out, now)
    this.ended = true
    this.emit(out, now, {
      type: "response_done",
      response_id: this.runId,
      status,
      finish_reason: finishReason,
      ...(usage === undefined ? {} : { usage })
    })
  }

  private error(out: Out, now: number, error: ProviderError.ProviderError): void {
    this.start(out, now)
    this.failed = true
    this.emit(out, now, { type: "response_error", response_id: this.runId, error: StreamEvent.errorObjectFromProviderError(error) })
  }

  /** Converts one part, appending its events to `out`; refuses a malformed part. */
  push(input: unknown, now: number, out: Out): AiSdkPartError | undefined {
    const partIndex = this.partIndex++
    const type = typeof input === "object" && input !== null && "type" in input && typeof input.type === "string" ? input.type : undefined
    if (type === undefined || !Parts.readTypes.has(type)) return undefined
    const decoded = decodePart(input)
    if (Either.isLeft(decoded)) {
      return new AiSdkPartError({
        reason: "InvalidPart",
        partType: type,
        partIndex,
        message: `part ${partIndex} (${type}): ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`
      })
    }
    const part = decoded.right
    if (this.ended) {
      if (part.type === "finish" || part.type === "abort" || part.type === "response-metadata") return undefined
      return new AiSdkPartError({ reason: "PartAfterFinish", partType: type, partIndex, message: `part ${partIndex} (${type}) came after the turn ended` })
    }
    switch (part.type) {
      case "response-metadata":
        if (part.modelId !== undefined && !this.started) this.modelId = part.modelId
        return undefined
      case "text-start":
      case "reasoning-start": {
        const kind = part.type === "text-start" ? "text" : "reasoning"
        const key = `${kind}:${part.id}`
        const before = this.open.get(key)
        if (before !== undefined) this.close(out, now, key, before)
        this.openItem(out, now, key, kind === "text" ? "message" : "reasoning", "", part.providerMetadata)
        return undefined
      }
      case "text-delta":
      case "reasoning-delta": {
        const kind = part.type === "text-delta" ? "text" : "reasoning"
        const key = `${kind}:${part.id}`
        const item = this.open.get(key) ?? this.openItem(out, now, key, kind === "text" ? "message" : "reasoning", "", undefined)
        item.metadata = mergeMetadata(item.metadata, part.providerMetadata)
        this.delta(out, now, item, part.text ?? part.delta ?? "")
        return undefined
      }
      case "text-end":
      case "reasoning-end": {
        const kind = part.type === "text-end" ? "text" : "reasoning"
        const key = `${kind}:${part.id}`
        const item = this.open.get(key) ?? this.openItem(out, now, key, kind === "text" ? "message" : "reasoning", "", undefined)
        item.metadata = mergeMetadata(item.metadata, part.providerMetadata)
        this.close(out, now, key, item)
        return undefined
      }
      case "tool-input-start": {
        const key = `tool:${part.id}`
        if (!this.open.has(key)) {
          const item = this.openItem(out, now, key, "function_call", part.toolName, part.providerMetadata)
          if (part.providerExecuted === true) item.providerExecuted = true
        }
        return undefined
      }
      case "tool-input-delta": {
        const item = this.open.get(`tool:${part.id}`)
        if (item === undefined) {
          return new AiSdkPartError({ reason: "InvalidPart", partType: type, partIndex, message: `part ${partIndex} (${type}): no tool input ${part.id} has started` })
        }
        this.delta(out, now, item, part.delta)
        return undefined
      }
      case "tool-input-end":
        return undefined
      case "tool-call": {
        const key = `tool:${part.toolCallId}`
        const item = this.open.get(key) ?? this.openItem(out, now, key, "function_call", part.toolName, undefined)
        item.metadata = mergeMetadata(item.metadata, part.providerMetadata)
        if (part.providerExecuted === true) item.providerExecuted = true
        if (item.content === "" && part.input !== undefined) {
          this.delta(out, now, item, typeof part.input === "string" ? part.input : JSON.stringify(toJson(part.input) ?? {}))
        }
        this.close(out, now, key, item, part.toolCallId)
        return undefined
      }
      case "tool-result":
      case "tool-error": {
        if (part.type === "tool-result" && part.preliminary === true) return undefined
        this.start(out, now)
        const id = `item_${this.itemCount++}`
        const success = part.type === "tool-result" && part.isError !== true
        const output =
          part.type === "tool-result" ? textOfOutput(part.output !== undefined ? part.output : part.result) : providerErrorOf(part.error).message
        this.emit(out, now, { type: "item_start", item_id: id, item_type: "function_call_output" })
        this.emit(out, now, {
          type: "item_done",
          item_id: id,
          final_item: {
            type: "function_call_output",
            id,
            call_id: part.toolCallId,
            output,
            success,
            ...(part.providerExecuted === true ? { provider_executed: true } : {})
          }
        })
        return undefined
      }
      case "source": {
        const source = sourceOf(part)
        if (source === undefined) return undefined
        const message = [...this.open.values()].reverse().find((item) => item.type === "message")
        if (message === undefined) this.pendingSources.push(source)
        else (message.sources ??= []).push(source)
        return undefined
      }
      case "error":
        this.error(out, now, providerErrorOf(part.error))
        return undefined
      case "abort":
        this.finish(out, now, "aborted", null)
        return undefined
      case "finish": {
        const reason = finishReasonOf(part.finishReason)
        if (reason === "content-filter") {
          this.error(
            out,
            now,
            new ProviderError.ProviderError({ type: "content_blocked", retryable: false, code: "content-filter", message: "the provider filtered the content" })
          )
        }
        this.finish(out, now, this.failed ? "error" : "complete", this.failed && reason === "stop" ? "error" : reason, usageOf(part.totalUsage ?? part.usage))
        return undefined
      }
    }
  }

  /**
   * The parts ended. Without `finish` or `abort`, closes what is open and ends the turn
   * with status `error`, adding a retryable `stream_truncated` error unless an error
   * part already explained the end.
   */
  end(now: number, out: Out): void {
    if (this.ended) return
    if (!this.failed) {
      this.error(
        out,
        now,
        new ProviderError.ProviderError({ type: "api_error", retryable: true, code: "stream_truncated", message: "the AI SDK stream ended without a finish part" })
      )
    }
    this.finish(out, now, "error", "error")
  }
}

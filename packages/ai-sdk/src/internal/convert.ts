import type { FinishReason, OutputItem, StreamEvent } from "@sluice/core"
import { Ids, Json, ProviderError, SchemaDecode, TurnBuilder, Usage } from "@sluice/core"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { AiSdkPartError } from "../AiSdkPartError.js"
import type { Options } from "../AiSdkStream.js"
import * as Parts from "./parts.js"

type OpenItem = TurnBuilder.OpenItem

type Out = Array<StreamEvent.StreamEvent>

const decodePart = SchemaDecode.decodeUnknownResult(Parts.Part)
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

// The AI SDK has no paused reason: an Anthropic `pause_turn` shows only as the raw reason.
const finishReasonOf = (
  reason: string | { readonly unified: string; readonly raw?: string | undefined }
): FinishReason.FinishReason => {
  if (typeof reason !== "string" && reason.raw === "pause_turn") return "paused"
  const value = typeof reason === "string" ? reason : reason.unified
  return value === "stop" || value === "length" || value === "tool-calls" || value === "content-filter" ||
      value === "error"
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
  const cacheRead = count(nestedIn?.cacheRead) ?? count(usage.inputTokenDetails?.cacheReadTokens) ??
    count(usage.cachedInputTokens)
  const cacheWrite = count(nestedIn?.cacheWrite) ?? count(usage.inputTokenDetails?.cacheWriteTokens)
  const noCache = count(nestedIn?.noCache) ?? count(usage.inputTokenDetails?.noCacheTokens)
  const input = noCache ?? (totalIn === undefined ? undefined : totalIn - (cacheRead ?? 0) - (cacheWrite ?? 0))
  const output = typeof outputTokens === "number" ? outputTokens : count(nestedOut?.total)
  const reasoning = count(nestedOut?.reasoning) ?? count(usage.outputTokenDetails?.reasoningTokens) ??
    count(usage.reasoningTokens)
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
    code: body?.code ??
      (status === undefined && body?.type === undefined && body?.status === undefined
        ? (fields.name ?? "ai_sdk_error")
        : undefined),
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

const textOfOutput = (
  value: unknown
): string => (typeof value === "string" ? value : JSON.stringify(toJson(value) ?? null))

/**
 * Turns AI SDK stream parts into StreamEvents with the shared `TurnBuilder`: items
 * keyed by the part's kind and id, a random id per event, the time each part came
 * with, and `stop` after an error part ending the turn with reason `error`. Mutable:
 * one per stream.
 *
 * @internal
 */
export class PartConverter {
  private readonly builder: TurnBuilder.TurnBuilder
  /** the time the current part came with */
  private time = 0
  private partIndex = 0
  /** `source` parts that came while no message was open: the next message's */
  private pendingSources: Array<OutputItem.Source> = []
  /** the `source` parts of each open message (by item id) */
  private readonly sources = new Map<string, Array<OutputItem.Source>>()
  /** the open tool calls the provider ran itself (`providerExecuted`), by item id */
  private readonly providerExecuted = new Set<string>()

  constructor(options: Options) {
    this.builder = new TurnBuilder.TurnBuilder({
      providerId: options.providerId ?? "ai-sdk",
      options,
      now: () => this.time,
      eventId: Ids.generateEventId,
      replaceAfterError: "stop"
    })
  }

  private openItem(
    out: Out,
    key: string,
    type: "message" | "reasoning" | "function_call",
    name: string,
    metadata: unknown
  ): OpenItem {
    const item = this.builder.open(out, type, {
      key,
      name: type === "function_call" ? name : undefined,
      metadata: mergeMetadata(undefined, metadata)
    })
    if (type === "message" && this.pendingSources.length > 0) {
      this.sources.set(item.id, this.pendingSources)
      this.pendingSources = []
    }
    return item
  }

  private close(out: Out, item: OpenItem, callId?: string): void {
    const metadata = keptMetadata(item.metadata)
    const provider = metadata === undefined ? {} : { provider_metadata: metadata }
    const sources = this.sources.get(item.id)
    const providerExecuted = this.providerExecuted.has(item.id)
    this.sources.delete(item.id)
    this.providerExecuted.delete(item.id)
    let final: OutputItem.OutputItem
    switch (item.type) {
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
          call_id: callId ?? item.key.slice("tool:".length),
          name: item.name ?? "",
          arguments: item.content,
          ...(providerExecuted ? { provider_executed: true } : {}),
          ...provider
        }
        break
      default:
        // only messages are left: the converter opens no other kind
        final = {
          type: "message",
          id: item.id,
          content: item.content,
          origin: "agent",
          ...(sources === undefined ? {} : { sources }),
          ...provider
        }
    }
    this.builder.done(out, item.key, final)
  }

  private finish(out: Out, end: TurnBuilder.End): void {
    this.builder.start(out)
    for (const item of this.builder.openRecords()) this.close(out, item)
    this.builder.finish(out, end)
  }

  /** Converts one part, appending its events to `out`; refuses a malformed part. */
  push(input: unknown, now: number, out: Out): AiSdkPartError | undefined {
    this.time = now
    const partIndex = this.partIndex++
    const type = typeof input === "object" && input !== null && "type" in input && typeof input.type === "string"
      ? input.type
      : undefined
    if (type === undefined || !Parts.readTypes.has(type)) return undefined
    const decoded = decodePart(input)
    if (Result.isFailure(decoded)) {
      return new AiSdkPartError({
        reason: "InvalidPart",
        partType: type,
        partIndex,
        message: `part ${partIndex} (${type}): ${decoded.failure.message}`
      })
    }
    const part = decoded.success
    if (this.builder.isFinished) {
      if (part.type === "finish" || part.type === "abort" || part.type === "response-metadata") return undefined
      return new AiSdkPartError({
        reason: "PartAfterFinish",
        partType: type,
        partIndex,
        message: `part ${partIndex} (${type}) came after the turn ended`
      })
    }
    switch (part.type) {
      case "response-metadata":
        if (part.modelId !== undefined && !this.builder.isStarted) this.builder.modelId = part.modelId
        return undefined
      case "text-start":
      case "reasoning-start": {
        const kind = part.type === "text-start" ? "text" : "reasoning"
        const key = `${kind}:${part.id}`
        const before = this.builder.item(key)
        if (before !== undefined) this.close(out, before)
        this.openItem(out, key, kind === "text" ? "message" : "reasoning", "", part.providerMetadata)
        return undefined
      }
      case "text-delta":
      case "reasoning-delta": {
        const kind = part.type === "text-delta" ? "text" : "reasoning"
        const key = `${kind}:${part.id}`
        const item = this.builder.item(key) ??
          this.openItem(out, key, kind === "text" ? "message" : "reasoning", "", undefined)
        item.metadata = mergeMetadata(item.metadata, part.providerMetadata)
        this.builder.delta(out, item.key, part.text ?? part.delta ?? "")
        return undefined
      }
      case "text-end":
      case "reasoning-end": {
        const kind = part.type === "text-end" ? "text" : "reasoning"
        const key = `${kind}:${part.id}`
        const item = this.builder.item(key) ??
          this.openItem(out, key, kind === "text" ? "message" : "reasoning", "", undefined)
        item.metadata = mergeMetadata(item.metadata, part.providerMetadata)
        this.close(out, item)
        return undefined
      }
      case "tool-input-start": {
        const key = `tool:${part.id}`
        if (!this.builder.isOpen(key)) {
          const item = this.openItem(out, key, "function_call", part.toolName, part.providerMetadata)
          if (part.providerExecuted === true) this.providerExecuted.add(item.id)
        }
        return undefined
      }
      case "tool-input-delta": {
        const item = this.builder.item(`tool:${part.id}`)
        if (item === undefined) {
          return new AiSdkPartError({
            reason: "InvalidPart",
            partType: type,
            partIndex,
            message: `part ${partIndex} (${type}): no tool input ${part.id} has started`
          })
        }
        this.builder.delta(out, item.key, part.delta)
        return undefined
      }
      case "tool-input-end":
        return undefined
      case "tool-call": {
        const key = `tool:${part.toolCallId}`
        const item = this.builder.item(key) ?? this.openItem(out, key, "function_call", part.toolName, undefined)
        item.metadata = mergeMetadata(item.metadata, part.providerMetadata)
        if (part.providerExecuted === true) this.providerExecuted.add(item.id)
        if (item.content === "" && part.input !== undefined) {
          this.builder.delta(
            out,
            item.key,
            typeof part.input === "string" ? part.input : JSON.stringify(toJson(part.input) ?? {})
          )
        }
        this.close(out, item, part.toolCallId)
        return undefined
      }
      case "tool-result":
      case "tool-error": {
        if (part.type === "tool-result" && part.preliminary === true) return undefined
        const success = part.type === "tool-result" && part.isError !== true
        const output = part.type === "tool-result"
          ? textOfOutput(part.output !== undefined ? part.output : part.result)
          : providerErrorOf(part.error).message
        const id = this.builder.openItem(out, "function_call_output")
        this.builder.done(out, id, {
          type: "function_call_output",
          id,
          call_id: part.toolCallId,
          output,
          success,
          ...(part.providerExecuted === true ? { provider_executed: true } : {})
        })
        return undefined
      }
      case "source": {
        const source = sourceOf(part)
        if (source === undefined) return undefined
        const message = this.builder.lastOpen("message")
        const sources = message === undefined ? this.pendingSources : this.sources.get(message.id)
        if (sources !== undefined) sources.push(source)
        else if (message !== undefined) this.sources.set(message.id, [source])
        return undefined
      }
      case "error":
        this.builder.error(out, providerErrorOf(part.error))
        return undefined
      case "abort":
        this.finish(out, { finishReason: null, aborted: true })
        return undefined
      case "finish": {
        const reason = finishReasonOf(part.finishReason)
        if (reason === "content-filter") {
          this.builder.error(
            out,
            new ProviderError.ProviderError({
              type: "content_blocked",
              retryable: false,
              code: "content-filter",
              message: "the provider filtered the content"
            })
          )
        }
        this.finish(out, { finishReason: reason, usage: usageOf(part.totalUsage ?? part.usage) })
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
    this.time = now
    this.builder.endWithoutFinish(out, "the AI SDK stream", (end) => this.finish(out, end))
  }
}

/**
 * The converter behind `EffectAiStream`: `effect/ai` response parts in, StreamEvents
 * out, built with core's `TurnBuilder`.
 *
 * @internal
 */
import { type FinishReason, type OutputItem, ProviderError, type StreamEvent, TurnBuilder, Usage } from "@sluice/core"
import * as AiError from "effect/ai/AiError"
import type * as Response from "effect/ai/Response"
import type { Options } from "../EffectAiStream.js"

type Out = Array<StreamEvent.StreamEvent>

/**
 * Any part `LanguageModel.streamText` streams, whatever its toolkit.
 *
 * @internal
 */
export type AnyStreamPart =
  | Response.StreamPart<Record<string, never>>
  | Response.ToolCallPart<string, unknown>
  | Response.ToolResultPart<string, unknown, unknown>

// Effect AI's `pause` (the provider paused the turn, to be continued) is Sluice's `paused`.
const finishReasonOf = (reason: Response.FinishReason): FinishReason.FinishReason =>
  reason === "stop" || reason === "length" || reason === "tool-calls" || reason === "content-filter" ||
    reason === "error"
    ? reason
    : reason === "pause"
    ? "paused"
    : "other"

const usageOf = (usage: Response.Usage): Usage.Usage => {
  const { cacheRead, cacheWrite, total, uncached } = usage.inputTokens
  return Usage.make({
    input: uncached ?? (total === undefined ? undefined : total - (cacheRead ?? 0) - (cacheWrite ?? 0)),
    output: usage.outputTokens.total,
    cacheRead,
    cacheWrite,
    reasoning: usage.outputTokens.reasoning
  })
}

const textOf = (value: unknown): string => {
  if (typeof value === "string") return value
  try {
    return JSON.stringify(value) ?? "null"
  } catch {
    return String(value)
  }
}

/**
 * A `ProviderError` for an `effect/ai` error (an `AiError`, coded by its reason's tag,
 * or anything a part or the stream failed with), classified by core's rules from its
 * message and tag.
 *
 * @internal
 */
export const providerErrorOf = (error: unknown): ProviderError.ProviderError => {
  if (AiError.isAiError(error)) {
    return ProviderError.classify({ code: error.reason._tag, message: error.message, raw: error })
  }
  const tagged = typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string"
    ? error._tag
    : undefined
  const message = error instanceof Error ? error.message : typeof error === "string" ? error : "effect/ai stream error"
  return ProviderError.classify({ code: tagged ?? "effect_ai_error", message, raw: error })
}

/**
 * Converts parts one at a time into events appended to an array.
 *
 * @internal
 */
export class PartConverter {
  private time = 0
  private readonly builder: TurnBuilder.TurnBuilder
  private readonly providerExecuted = new Set<string>()
  private readonly sources = new Map<string, Array<OutputItem.Source>>()
  private pendingSources: Array<OutputItem.Source> = []

  constructor(options: Options) {
    this.builder = TurnBuilder.make({
      providerId: options.providerId ?? "effect-ai",
      options,
      now: () => this.time
    })
  }

  private open(
    out: Out,
    key: string,
    type: "message" | "reasoning" | "function_call",
    name?: string
  ): TurnBuilder.OpenItem {
    const item = this.builder.open(out, type, { key, name })
    if (type === "message" && this.pendingSources.length > 0) {
      this.sources.set(item.id, this.pendingSources)
      this.pendingSources = []
    }
    return item
  }

  private close(out: Out, item: TurnBuilder.OpenItem, callId?: string): void {
    let final: OutputItem.OutputItem
    switch (item.type) {
      case "reasoning":
        final = { type: "reasoning", id: item.id, content: item.content }
        break
      case "function_call":
        final = {
          type: "function_call",
          id: item.id,
          call_id: callId ?? item.key.slice("tool:".length),
          name: item.name ?? "",
          arguments: item.content,
          ...(this.providerExecuted.has(item.id) ? { provider_executed: true } : {})
        }
        break
      default: {
        const sources = this.sources.get(item.id)
        final = {
          type: "message",
          id: item.id,
          content: item.content,
          origin: "agent",
          ...(sources === undefined ? {} : { sources })
        }
      }
    }
    this.builder.done(out, item.key, final)
  }

  private finish(out: Out, end: TurnBuilder.End): void {
    this.builder.start(out)
    for (const item of this.builder.openRecords()) this.close(out, item)
    this.builder.finish(out, end)
  }

  /** Converts one part, appending its events to `out`; parts after the finish are dropped. */
  push(part: AnyStreamPart, now: number, out: Out): void {
    this.time = now
    if (this.builder.isFinished) return
    switch (part.type) {
      case "response-metadata":
        if (part.modelId !== undefined && !this.builder.isStarted) this.builder.modelId = part.modelId
        return
      case "text-start":
      case "reasoning-start": {
        const key = `${part.type === "text-start" ? "text" : "reasoning"}:${part.id}`
        const before = this.builder.item(key)
        if (before !== undefined) this.close(out, before)
        this.open(out, key, part.type === "text-start" ? "message" : "reasoning")
        return
      }
      case "text-delta":
      case "reasoning-delta": {
        const kind = part.type === "text-delta" ? "text" : "reasoning"
        const item = this.builder.item(`${kind}:${part.id}`) ??
          this.open(out, `${kind}:${part.id}`, kind === "text" ? "message" : "reasoning")
        this.builder.delta(out, item.key, part.delta)
        return
      }
      case "text-end":
      case "reasoning-end": {
        const item = this.builder.item(`${part.type === "text-end" ? "text" : "reasoning"}:${part.id}`)
        if (item !== undefined) this.close(out, item)
        return
      }
      case "tool-params-start": {
        const key = `tool:${part.id}`
        if (!this.builder.isOpen(key)) {
          const item = this.open(out, key, "function_call", part.name)
          if (part.providerExecuted) this.providerExecuted.add(item.id)
        }
        return
      }
      case "tool-params-delta": {
        const item = this.builder.item(`tool:${part.id}`) ?? this.open(out, `tool:${part.id}`, "function_call")
        this.builder.delta(out, item.key, part.delta)
        return
      }
      case "tool-params-end":
        return
      case "tool-call": {
        const key = `tool:${part.id}`
        const item = this.builder.item(key) ?? this.open(out, key, "function_call", part.name)
        if (part.providerExecuted) this.providerExecuted.add(item.id)
        if (item.content === "") this.builder.delta(out, key, textOf(part.params ?? {}))
        this.close(out, item, part.id)
        return
      }
      case "tool-result": {
        if (part.preliminary) return
        const id = this.builder.openItem(out, "function_call_output")
        this.builder.done(out, id, {
          type: "function_call_output",
          id,
          call_id: part.id,
          output: textOf(part.encodedResult),
          success: !part.isFailure,
          ...(part.providerExecuted ? { provider_executed: true } : {})
        })
        return
      }
      case "source": {
        const source: OutputItem.Source = part.sourceType === "url"
          ? { kind: "url", url: part.url.toString(), title: part.title }
          : { kind: "document", title: part.title, ...(part.fileName === undefined ? {} : { filename: part.fileName }) }
        const message = this.builder.lastOpen("message")
        if (message === undefined) this.pendingSources.push(source)
        else this.sources.set(message.id, [...(this.sources.get(message.id) ?? []), source])
        return
      }
      case "file":
      case "tool-approval-request":
        return
      case "error":
        this.builder.error(out, providerErrorOf(part.error))
        return
      case "finish":
        this.finish(out, { finishReason: finishReasonOf(part.reason), usage: usageOf(part.usage) })
        return
    }
  }

  /** The stream failed: the error, then the turn ends `error`. */
  fail(error: unknown, now: number, out: Out): void {
    this.time = now
    if (this.builder.isFinished) return
    this.builder.error(out, providerErrorOf(error))
    this.finish(out, { finishReason: "error" })
  }

  /**
   * The parts ended. Without a `finish` part, closes what is open and ends the turn
   * with status `error` and a retryable `stream_truncated` error (unless an error part
   * explained the end).
   */
  end(now: number, out: Out): void {
    this.time = now
    this.builder.endWithoutFinish(out, "the effect/ai stream", (end) => this.finish(out, end))
  }
}

/**
 * Sluice StreamEvents into `effect/ai` response parts (the other direction of
 * `convert.ts`), for `SluiceLanguageModel`. Every finished item's final form rides in
 * its part's metadata under `sluice` (`{ provider, item }`), so that a prompt built from
 * the response (`Prompt.fromResponseParts`, what `Chat` keeps) carries back what the
 * provider demands in the next request: reasoning signatures, encrypted content,
 * Gemini's thought signatures, provider-executed tool items.
 *
 * @internal
 */
import type { FinishReason, OutputItem, StreamEvent, Usage } from "@sluice/core"
import * as AiError from "effect/ai/AiError"
import type * as Response from "effect/ai/Response"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { aiErrorOf } from "./errors.js"

type Out = Array<Response.StreamPartEncoded>

/**
 * The metadata key under which a part keeps its Sluice item.
 *
 * @internal
 */
export const metadataKey = "sluice"

const finishReasonOf = (reason: FinishReason.FinishReason | null): Response.FinishReason =>
  reason === null ? "unknown" : reason === "paused" ? "pause" : reason

/**
 * Sluice usage as `effect/ai` usage: `uncached` is Sluice's `input` (which excludes
 * cache reads and writes), `total` counts them all.
 *
 * @internal
 */
export const usageOf = (usage: Usage.Usage | undefined): typeof Response.Usage.Encoded => ({
  inputTokens: usage === undefined ? {} : {
    uncached: usage.input,
    total: usage.input + usage.cacheRead + usage.cacheWrite,
    cacheRead: usage.cacheRead,
    cacheWrite: usage.cacheWrite
  },
  outputTokens: usage === undefined ? {} : {
    total: usage.output,
    text: Math.max(0, usage.output - usage.reasoning),
    reasoning: usage.reasoning
  }
})

/** JSON text as a value; text that is not JSON stays text. */
const jsonOrText = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const sourcePart = (id: string, source: OutputItem.Source): Response.StreamPartEncoded =>
  source.kind === "url"
    ? { type: "source", sourceType: "url", id, url: source.url ?? "", title: source.title ?? source.url ?? "" }
    : {
      type: "source",
      sourceType: "document",
      id,
      mediaType: "text/plain",
      title: source.title ?? source.filename ?? "",
      ...(source.filename === undefined ? {} : { fileName: source.filename })
    }

/**
 * The tools a call of `effect/ai` declared, and whether it takes calls of others
 * (`toolCallValidation: "deferred"`): `LanguageModel` decodes the parts by its toolkit,
 * and refuses a `tool-call` or `tool-result` part of a tool the toolkit lacks.
 *
 * @internal
 */
export interface Declared {
  readonly names: ReadonlySet<string> | "all"
  readonly deferred: boolean
}

/**
 * Every tool declared, any call taken: for a caller that decodes no parts by a toolkit.
 *
 * @internal
 */
export const anyTool: Declared = { names: "all", deferred: true }

/**
 * Converts the events of one turn, one at a time, into stream parts appended to an
 * array. A `response_error` before any part of output is kept apart (`failure`): the
 * request failed, and the caller fails with it; one after output is an `error` part.
 *
 * A function call comes whole, as `tool-call`, when it is done: no `tool-params-*` parts,
 * since the events name a call's id only in its finished item, and `effect/ai` pairs
 * those parts with the call by id (docs/language-model.md). A call of a tool the caller
 * did not declare:
 * the client's becomes an `error` part with `ToolNotFoundError` (`effect/ai`'s rule for
 * strict validation) unless validation is deferred; a provider-executed one and its
 * result are left out (`effect/ai` cannot decode them without the tool).
 *
 * @internal
 */
export class EventConverter {
  private provider = "sluice"
  private output = false
  private readonly names = new Map<string, string>()
  /** The provider-executed calls left out, whose results are left out too. */
  private readonly skipped = new Set<string>()
  /** The open text and reasoning items, with the type of their deltas. */
  private readonly open = new Map<string, "text-delta" | "reasoning-delta">()
  /** The text streamed so far of each open item. */
  private readonly streamed = new Map<string, string>()
  /** The error that ended the turn before any output. */
  failure: StreamEvent.ErrorObject | undefined
  /** Every error the turn reported. */
  readonly errors: Array<StreamEvent.ErrorObject> = []

  constructor(
    private readonly baseUrl: string,
    private readonly declared: Declared = anyTool,
    private readonly method = "streamText"
  ) {}

  private isDeclared(name: string): boolean {
    return this.declared.names === "all" || this.declared.names.has(name)
  }

  private metadata(item: OutputItem.OutputItem): Response.ProviderMetadata {
    return { [metadataKey]: { provider: this.provider, item } }
  }

  push(event: StreamEvent.StreamEvent, out: Out): void {
    const payload = event.payload
    switch (payload.type) {
      case "response_start":
        this.provider = payload.provider_id
        out.push({
          type: "response-metadata",
          id: payload.response_id,
          modelId: payload.model_id,
          timestamp: new Date(payload.created_at).toISOString()
        })
        return
      case "item_start":
        if (payload.item_type === "message" || payload.item_type === "reasoning") {
          this.output = true
          const delta = payload.item_type === "message" ? "text-delta" : "reasoning-delta"
          this.open.set(payload.item_id, delta)
          out.push({ type: payload.item_type === "message" ? "text-start" : "reasoning-start", id: payload.item_id })
          this.streamed.set(payload.item_id, payload.initial_content ?? "")
          if (payload.initial_content !== undefined && payload.initial_content !== "") {
            out.push({ type: delta, id: payload.item_id, delta: payload.initial_content })
          }
        } else if (payload.item_type === "function_call") {
          this.output = true
        }
        return
      case "item_delta": {
        const delta = this.open.get(payload.item_id)
        if (delta !== undefined) {
          this.streamed.set(payload.item_id, (this.streamed.get(payload.item_id) ?? "") + payload.delta_content)
          out.push({ type: delta, id: payload.item_id, delta: payload.delta_content })
        }
        return
      }
      case "item_done":
        this.done(payload.final_item, out)
        return
      case "item_error":
      case "item_cancelled":
        return
      case "response_error":
        this.errors.push(payload.error)
        if (!this.output) this.failure = payload.error
        else out.push({ type: "error", error: aiErrorOf(payload.error, this.baseUrl) })
        return
      case "response_done":
        if (this.failure !== undefined) return
        out.push({ type: "finish", reason: finishReasonOf(payload.finish_reason), usage: usageOf(payload.usage) })
        return
    }
  }

  private done(item: OutputItem.OutputItem, out: Out): void {
    switch (item.type) {
      case "message":
      case "reasoning": {
        const start = item.type === "message" ? "text-start" : "reasoning-start"
        if (!this.open.has(item.id)) {
          // an item that came whole, without a start
          this.output = true
          out.push({ type: start, id: item.id })
          if (item.content !== "") {
            out.push({
              type: item.type === "message" ? "text-delta" : "reasoning-delta",
              id: item.id,
              delta: item.content
            })
          }
        }
        const streamed = this.streamed.get(item.id)
        if (streamed !== undefined && streamed !== item.content && item.content.startsWith(streamed)) {
          // the final text says more than the deltas did: the rest as one more delta
          out.push({
            type: item.type === "message" ? "text-delta" : "reasoning-delta",
            id: item.id,
            delta: item.content.slice(streamed.length)
          })
        }
        this.open.delete(item.id)
        this.streamed.delete(item.id)
        if (item.type === "message") {
          item.sources?.forEach((source, index) => out.push(sourcePart(`${item.id}:${index}`, source)))
        }
        out.push({
          type: item.type === "message" ? "text-end" : "reasoning-end",
          id: item.id,
          metadata: this.metadata(item)
        })
        return
      }
      case "function_call":
        this.output = true
        this.names.set(item.call_id, item.name)
        if (!this.isDeclared(item.name)) {
          if (item.provider_executed === true) {
            this.skipped.add(item.call_id)
            return
          }
          if (!this.declared.deferred) {
            out.push({
              type: "error",
              error: AiError.make({
                module: "SluiceLanguageModel",
                method: this.method,
                reason: new AiError.ToolNotFoundError({
                  toolName: item.name,
                  availableTools: this.declared.names === "all" ? [] : [...this.declared.names]
                })
              })
            })
            return
          }
        }
        out.push({
          type: "tool-call",
          id: item.call_id,
          name: item.name,
          params: item.arguments.trim() === "" ? {} : jsonOrText(item.arguments),
          ...(item.provider_executed === true ? { providerExecuted: true } : {}),
          metadata: this.metadata(item)
        })
        return
      case "function_call_output":
        this.output = true
        if (this.skipped.has(item.call_id)) return
        out.push({
          type: "tool-result",
          id: item.call_id,
          name: this.names.get(item.call_id) ?? "",
          result: jsonOrText(item.output),
          isFailure: !item.success,
          ...(item.provider_executed === true ? { providerExecuted: true } : {}),
          metadata: this.metadata(item)
        })
        return
      default:
        return
    }
  }
}

/**
 * A turn's events as stream parts; fails with an `AiError` when the turn failed before
 * any output.
 *
 * @internal
 */
export const toParts = (baseUrl: string, method: string, declared: Declared = anyTool) =>
<E, R>(
  events: Stream.Stream<StreamEvent.StreamEvent, E, R>
): Stream.Stream<Response.StreamPartEncoded, E | AiError.AiError, R> =>
  Stream.suspend(() => {
    const converter = new EventConverter(baseUrl, declared, method)
    return Stream.transformPull(events, (pull) =>
      Effect.succeed(Effect.gen(function*() {
        while (true) {
          const batch: Arr.NonEmptyReadonlyArray<StreamEvent.StreamEvent> = yield* pull
          const out: Array<Response.StreamPartEncoded> = []
          for (const event of batch) converter.push(event, out)
          if (converter.failure !== undefined) return yield* Effect.fail(aiErrorOf(converter.failure, baseUrl, method))
          if (Arr.isArrayNonEmpty(out)) return out
        }
      })))
  })

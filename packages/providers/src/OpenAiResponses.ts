/**
 * The OpenAI Responses API (`POST /v1/responses`): its `stream: true` event stream and
 * its non-streaming `response` object, into the hub StreamEvent vocabulary.
 *
 * Output items keep the provider's item ids. A `message` item's text (and refusal
 * text) is the message content; a `reasoning` item's summary is the reasoning content
 * and its `encrypted_content` is kept; a `function_call` item's `arguments` are taken
 * from the finished item, never from a prefix that happens to parse. A hosted tool's
 * item (`web_search_call`, `file_search_call`, `code_interpreter_call`,
 * `image_generation_call`, `mcp_call`, `mcp_list_tools`: OpenAI runs them) becomes a
 * provider-executed `function_call` named after its type (an MCP call after its tool)
 * with what the tool was asked as arguments, followed by a provider-executed
 * `function_call_output` with what it gave. Every other output item
 * (`custom_tool_call`, `computer_call`, ...) becomes a `function_call` named after its
 * type (or its tool), with the whole item in `provider_metadata.item`.
 *
 * @since 0.1.0
 */
import type { StreamEvent } from "@sluice/core"
import { Json, OutputItem, ProviderError, TurnBuilder, Usage } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Citations from "./Citations.js"
import * as ErrorClassification from "./ErrorClassification.js"
import { endTruncated, finishWith } from "./internal/endTurn.js"
import * as HostedTools from "./internal/hostedTools.js"
import { type Handler, normalizeWith } from "./internal/normalizerChannel.js"
import { decodeValue, parseJson } from "./internal/wireJson.js"
import type { Normalize, NormalizeOptions, NormalizeResponse } from "./Normalizer.js"
import { WireDecodeError } from "./WireDecodeError.js"

const provider = "openai-responses"

type Out = Array<StreamEvent.StreamEvent>

const optional = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(schema)
const nullable = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))

// ---------------------------------------------------------------------------
// Wire schemas
// ---------------------------------------------------------------------------

/**
 * The `usage` object of a response. `input_tokens` includes the cached tokens and
 * `output_tokens` includes the reasoning tokens. Other fields are kept for `raw`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResponseUsage = Schema.StructWithRest(
  Schema.Struct({
    input_tokens: nullable(Schema.Number),
    input_tokens_details: nullable(Schema.Struct({ cached_tokens: nullable(Schema.Number) })),
    output_tokens: nullable(Schema.Number),
    output_tokens_details: nullable(Schema.Struct({ reasoning_tokens: nullable(Schema.Number) })),
    total_tokens: nullable(Schema.Number)
  }),
  [Schema.Record(Schema.String, Json.JsonValue)]
).annotate({ identifier: "ResponseUsage" })

/**
 * @since 0.1.0
 * @category models
 */
export type ResponseUsage = typeof ResponseUsage.Type

/**
 * An output item as it arrives: a JSON object with a `type`, read further by type.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RawOutputItem = Schema.StructWithRest(
  Schema.Struct({ type: Schema.String, id: optional(Schema.String) }),
  [Schema.Record(Schema.String, Json.JsonValue)]
).annotate({ identifier: "ResponseOutputItem" })

/**
 * @since 0.1.0
 * @category models
 */
export type RawOutputItem = typeof RawOutputItem.Type

const ErrorDetails = Schema.Struct({
  type: nullable(Schema.String),
  code: nullable(Schema.String),
  message: nullable(Schema.String)
})

/**
 * The `response` object: the non-streaming body, and the payload of the streamed
 * lifecycle events (`response.created`, `response.completed`, ...).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Response = Schema.Struct({
  id: optional(Schema.String),
  model: nullable(Schema.String),
  status: nullable(Schema.String),
  output: nullable(Schema.Array(RawOutputItem)),
  usage: nullable(ResponseUsage),
  error: nullable(ErrorDetails),
  incomplete_details: nullable(Schema.Struct({ reason: nullable(Schema.String) }))
}).annotate({ identifier: "Response" })

/**
 * @since 0.1.0
 * @category models
 */
export type Response = typeof Response.Type

const EventType = Schema.Struct({ type: Schema.String })
const LifecycleEvent = Schema.Struct({ response: Response })
const OutputItemEvent = Schema.Struct({ output_index: optional(Schema.Number), item: RawOutputItem })
const DeltaEvent = Schema.Struct({ item_id: Schema.String, delta: Schema.String })
const SummaryPartEvent = Schema.Struct({ item_id: Schema.String, summary_index: Schema.Number })
const ErrorEvent = Schema.Struct({
  code: nullable(Schema.String),
  message: nullable(Schema.String),
  error: nullable(ErrorDetails)
})

const ContentPart = Schema.StructWithRest(Schema.Struct({ type: Schema.String }), [
  Schema.Record(Schema.String, Json.JsonValue)
])
const MessageWire = Schema.Struct({
  id: Schema.String,
  content: Schema.Array(ContentPart)
})
const TextPart = Schema.Struct({ text: Schema.String })
const ReasoningWire = Schema.Struct({
  id: Schema.String,
  summary: nullable(Schema.Array(TextPart)),
  content: nullable(Schema.Array(TextPart)),
  encrypted_content: nullable(Schema.String)
})
const FunctionCallWire = Schema.Struct({
  id: Schema.String,
  call_id: Schema.String,
  name: Schema.String,
  arguments: Schema.String
})

const decodeEventType = decodeValue(provider, EventType)
const decodeLifecycle = decodeValue(provider, LifecycleEvent)
const decodeOutputItemEvent = decodeValue(provider, OutputItemEvent)
const decodeDelta = decodeValue(provider, DeltaEvent)
const decodeSummaryPart = decodeValue(provider, SummaryPartEvent)
const decodeErrorEvent = decodeValue(provider, ErrorEvent)
const decodeMessage = decodeValue(provider, MessageWire)
const decodeReasoning = decodeValue(provider, ReasoningWire)
const decodeFunctionCall = decodeValue(provider, FunctionCallWire)
const decodeResponse = decodeValue(provider, Response)

// ---------------------------------------------------------------------------
// Classification and usage
// ---------------------------------------------------------------------------

/**
 * Classifies an in-stream error (`error` event, `response.failed`) by its code, with
 * the one classifier every provider shares (`ProviderError.classify`).
 *
 * @since 0.1.0
 * @category errors
 */
export const classifyError = (code: string, message: string, raw?: unknown): ProviderError.ProviderError =>
  ProviderError.classify({ code, message, raw })

/**
 * The hub usage of a Responses `usage` object: `input` without the cached tokens,
 * `cacheRead` the cached tokens, `output` with the reasoning tokens, `reasoning` the
 * reasoning tokens. Missing usage is zeros.
 *
 * @since 0.1.0
 * @category usage
 */
export const toUsage = (usage: ResponseUsage | null | undefined): Usage.Usage => {
  if (usage === null || usage === undefined) return Usage.empty
  const input = usage.input_tokens ?? 0
  const cached = usage.input_tokens_details?.cached_tokens ?? 0
  return Usage.make({
    input: input - Math.min(cached, input),
    cacheRead: cached,
    output: usage.output_tokens,
    reasoning: usage.output_tokens_details?.reasoning_tokens,
    raw: usage
  })
}

// ---------------------------------------------------------------------------
// Output items
// ---------------------------------------------------------------------------

const itemTypeOf = (type: string): OutputItem.ItemType =>
  type === "message" ? "message" : type === "reasoning" ? "reasoning" : "function_call"

/** Items the client must run: the turn then ends with `tool-calls`. */
const isClientCall = (type: string): boolean => type === "function_call" || type === "custom_tool_call"

const executedBy = (type: string): { readonly provider_executed?: true } =>
  HostedTools.isHosted(type) ? { provider_executed: true } : {}

const stringField = (item: RawOutputItem, key: string): string | undefined => {
  const value = item[key]
  return typeof value === "string" ? value : undefined
}

/** The name under which an item that is not a message or reasoning is reported. */
const callName = (item: RawOutputItem): string =>
  item.type === "function_call" || item.type === "custom_tool_call" || item.type === "mcp_call"
    ? stringField(item, "name") ?? item.type
    : item.type

interface FinalItem {
  readonly item: OutputItem.OutputItem
  /** The refusal text of a message, when the model refused. */
  readonly refusal: string | undefined
  /** The result of a hosted tool call, its own item after the call. */
  readonly result?: OutputItem.FunctionCallOutputItem
}

/**
 * The finished form of an output item. `id` is the Sluice item id; `streamed` is the
 * content that arrived as deltas, used only when the finished item carries no text.
 */
const finalItem = (
  raw: RawOutputItem,
  id: string,
  streamed: string,
  line: number
): Result.Result<FinalItem, WireDecodeError> => {
  switch (raw.type) {
    case "message":
      return Result.map(decodeMessage({ ...raw, id }, line, "message item"), (message) => {
        let content = ""
        let refusal: string | undefined
        const annotations: Array<Json.JsonValue> = []
        const other: Array<Json.JsonObject> = []
        for (const part of message.content) {
          const text = part.type === "output_text" ? part.text : undefined
          const refused = part.type === "refusal" ? part.refusal : undefined
          if (typeof text === "string") {
            content += text
            if (Array.isArray(part.annotations)) annotations.push(...part.annotations)
          } else if (typeof refused === "string") {
            content += refused
            refusal = (refusal ?? "") + refused
          } else {
            other.push(part)
          }
        }
        const metadata: Record<string, Json.JsonValue> = {}
        if (annotations.length > 0) metadata.annotations = annotations
        if (refusal !== undefined) metadata.refusal = refusal
        if (other.length > 0) metadata.other_content = other
        const item: OutputItem.MessageItem = {
          type: "message",
          id,
          content: content === "" ? streamed : content,
          origin: "agent",
          ...Citations.sourcesField(annotations, Citations.fromOpenAi),
          ...(Object.keys(metadata).length > 0 ? { provider_metadata: metadata } : {})
        }
        return { item, refusal }
      })
    case "reasoning":
      return Result.map(decodeReasoning({ ...raw, id }, line, "reasoning item"), (reasoning) => {
        const texts = [...(reasoning.summary ?? []), ...(reasoning.content ?? [])].map((part) => part.text)
        const content = texts.join("\n\n")
        const item: OutputItem.ReasoningItem = {
          type: "reasoning",
          id,
          content: content === "" ? streamed : content,
          ...(typeof reasoning.encrypted_content === "string" ? { encrypted_content: reasoning.encrypted_content } : {})
        }
        return { item, refusal: undefined }
      })
    case "function_call":
      return Result.map(decodeFunctionCall({ ...raw, id }, line, "function_call item"), (call) => ({
        item: { type: "function_call", id, call_id: call.call_id, name: call.name, arguments: call.arguments },
        refusal: undefined
      }))
    default: {
      const hosted = HostedTools.split(raw, id, callName(raw))
      if (hosted !== undefined) return Result.succeed({ item: hosted.call, refusal: undefined, result: hosted.result })
      const action = raw.action
      const args = stringField(raw, "arguments") ?? stringField(raw, "input") ?? stringField(raw, "code")
      const item: OutputItem.FunctionCallItem = {
        type: "function_call",
        id,
        call_id: stringField(raw, "call_id") ?? raw.id ?? id,
        name: callName(raw),
        arguments: args ?? (action === undefined ? streamed : JSON.stringify(action)),
        ...executedBy(raw.type),
        provider_metadata: { type: raw.type, item: raw }
      }
      return Result.succeed({ item, refusal: undefined })
    }
  }
}

/** The final form of an item that was cut off: what arrived, under the added item's fields. */
const partialItem = (added: RawOutputItem | undefined, id: string, content: string): OutputItem.OutputItem => {
  const type = added?.type ?? "message"
  if (type === "message") return { type: "message", id, content, origin: "agent" }
  if (type === "reasoning") {
    const encrypted = added === undefined ? undefined : stringField(added, "encrypted_content")
    return { type: "reasoning", id, content, ...(encrypted === undefined ? {} : { encrypted_content: encrypted }) }
  }
  return {
    type: "function_call",
    id,
    call_id: (added && stringField(added, "call_id")) ?? added?.id ?? id,
    name: added === undefined ? type : callName(added),
    arguments: content,
    ...executedBy(type),
    ...(added === undefined || type === "function_call" ? {} : { provider_metadata: { type, item: added } })
  }
}

// ---------------------------------------------------------------------------
// The turn
// ---------------------------------------------------------------------------

interface ItemState {
  readonly added: RawOutputItem | undefined
  summaryParts: number
}

/** The state of one turn, shared by the streaming handler and the non-streaming decoder. */
class ResponsesTurn {
  readonly builder: TurnBuilder.TurnBuilder
  private readonly items = new Map<string, ItemState>()
  private readonly finished = new Set<string>()
  private unnamed = 0
  private clientCalls = false
  private refusal: string | undefined
  private usage: Usage.Usage = Usage.empty

  constructor(options: NormalizeOptions | undefined, now: () => number) {
    this.builder = new TurnBuilder.TurnBuilder({ providerId: provider, options, now })
  }

  get isOver(): boolean {
    return this.builder.isFinished
  }

  start(out: Out, response: Response): void {
    this.builder.start(out, response.model ?? undefined)
    if (response.usage !== undefined && response.usage !== null) this.usage = toUsage(response.usage)
  }

  /** Opens an output item under its provider id (or the next `item_N`). */
  open(out: Out, raw: RawOutputItem, knownId?: string): string {
    const id = raw.id ?? knownId ?? `item_${this.unnamed++}`
    if (this.builder.isOpen(id) || this.finished.has(id)) return id
    const type = itemTypeOf(raw.type)
    if (isClientCall(raw.type)) this.clientCalls = true
    const initial = type === "function_call" ? stringField(raw, "arguments") : undefined
    this.builder.openItem(out, type, {
      id,
      ...(type === "function_call" ? { name: callName(raw) } : {}),
      ...(initial === undefined ? {} : { initial_content: initial })
    })
    this.items.set(id, { added: raw, summaryParts: 0 })
    return id
  }

  /** A delta for an item; an item the stream never announced is opened as `fallback`. */
  delta(out: Out, itemId: string, text: string, fallback: string): void {
    if (this.finished.has(itemId)) return
    if (!this.builder.isOpen(itemId)) this.open(out, { type: fallback, id: itemId })
    const code = this.items.get(itemId)?.added?.type === "code_interpreter_call"
    this.builder.delta(out, itemId, code ? HostedTools.codeDelta(this.builder.content(itemId), text) : text)
  }

  /** A new reasoning summary part: parts after the first are separated by a blank line. */
  summaryPart(out: Out, itemId: string): void {
    if (!this.builder.isOpen(itemId)) this.open(out, { type: "reasoning", id: itemId })
    const state = this.items.get(itemId)
    if (state === undefined) return
    if (state.summaryParts > 0) this.builder.delta(out, itemId, "\n\n")
    state.summaryParts++
  }

  /** An output item is finished. */
  done(out: Out, raw: RawOutputItem, line: number, knownId?: string): WireDecodeError | undefined {
    const id = this.open(out, raw, knownId)
    if (this.finished.has(id)) return undefined
    const final = finalItem(raw, id, this.builder.content(id), line)
    if (Result.isFailure(final)) return final.failure
    if (isClientCall(raw.type)) this.clientCalls = true
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
      this.builder.done(out, id, partialItem(this.items.get(id)?.added, id, this.builder.content(id)))
      this.finished.add(id)
    }
  }

  /**
   * The response is over (`response.completed`, `.incomplete`, `.failed`, or a
   * non-streaming body): emits the items the stream did not finish, then the end.
   */
  end(out: Out, response: Response, line: number): WireDecodeError | undefined {
    this.start(out, response)
    for (const raw of response.output ?? []) {
      const id = raw.id
      if (id !== undefined && this.finished.has(id)) continue
      const opened = this.open(out, raw)
      const final = finalItem(raw, opened, this.builder.content(opened), line)
      if (Result.isFailure(final)) return final.failure
      this.builder.delta(
        out,
        opened,
        OutputItem.streamedContent(final.success.item).slice(this.builder.content(opened).length)
      )
      const failure = this.done(out, raw, line, opened)
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
        error
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
      } else finishWith(this.builder, out, { finishReason: this.clientCalls ? "tool-calls" : "stop", usage })
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

  /** An `error` event: the turn ends with it. */
  fail(out: Out, error: ProviderError.ProviderError): void {
    this.closeOpen(out)
    finishWith(this.builder, out, { finishReason: "error", usage: this.usage, error })
  }

  /** The input ended without a terminal event. */
  truncate(out: Out): void {
    endTruncated(
      this.builder,
      out,
      provider,
      (id, content) => partialItem(this.items.get(id)?.added, id, content),
      this.usage
    )
  }
}

const deltaFallback: Record<string, string> = {
  "response.output_text.delta": "message",
  "response.refusal.delta": "message",
  "response.reasoning_summary_text.delta": "reasoning",
  "response.reasoning_text.delta": "reasoning",
  "response.function_call_arguments.delta": "function_call",
  "response.custom_tool_call_input.delta": "custom_tool_call",
  "response.mcp_call_arguments.delta": "mcp_call",
  "response.code_interpreter_call_code.delta": "code_interpreter_call"
}

// an event the stream's order does not allow where it came (WireDecodeError `InvalidOrder`)
const outOfOrder = (line: number, message: string): WireDecodeError =>
  new WireDecodeError({
    provider,
    line,
    reason: "InvalidOrder",
    message: `${provider} event at line ${line}: ${message}`
  })

const makeHandler = (options: NormalizeOptions | undefined) => (now: () => number): Handler => {
  const turn = new ResponsesTurn(options, now)
  // the line of `response.created`, and the event that ended the response and its line,
  // once they came: nothing may repeat the one or follow the other
  let createdLine: number | undefined
  let ended: { readonly type: string; readonly line: number } | undefined
  return {
    onEvent: (event, out) => {
      // after an `error` event, which ends the turn, the rest is ignored
      if (ended === undefined && turn.isOver) return undefined
      const json = parseJson(provider, event.data, event.line)
      if (Result.isFailure(json)) return json.failure
      const head = decodeEventType(json.success, event.line, "event")
      if (Result.isFailure(head)) return head.failure
      const type = head.success.type
      if (ended !== undefined) return outOfOrder(event.line, `${type} after ${ended.type} (line ${ended.line})`)
      if (type === "response.created") {
        if (createdLine !== undefined) {
          return outOfOrder(event.line, `a second response.created (the response was created at line ${createdLine})`)
        }
        createdLine = event.line
      }
      const what = `${type} event`
      switch (type) {
        case "response.created":
        case "response.in_progress":
        case "response.queued": {
          const decoded = decodeLifecycle(json.success, event.line, what)
          if (Result.isFailure(decoded)) return decoded.failure
          turn.start(out, decoded.success.response)
          return undefined
        }
        case "response.completed":
        case "response.incomplete":
        case "response.failed": {
          const decoded = decodeLifecycle(json.success, event.line, what)
          if (Result.isFailure(decoded)) return decoded.failure
          const status = type === "response.completed"
            ? "completed"
            : type === "response.incomplete"
            ? "incomplete"
            : "failed"
          ended = { type, line: event.line }
          return turn.end(out, { ...decoded.success.response, status }, event.line)
        }
        case "response.output_item.added":
        case "response.output_item.done": {
          const decoded = decodeOutputItemEvent(json.success, event.line, what)
          if (Result.isFailure(decoded)) return decoded.failure
          if (type === "response.output_item.added") {
            turn.open(out, decoded.success.item)
            return undefined
          }
          return turn.done(out, decoded.success.item, event.line)
        }
        case "response.reasoning_summary_part.added": {
          const decoded = decodeSummaryPart(json.success, event.line, what)
          if (Result.isFailure(decoded)) return decoded.failure
          turn.summaryPart(out, decoded.success.item_id)
          return undefined
        }
        case "error": {
          const decoded = decodeErrorEvent(json.success, event.line, what)
          if (Result.isFailure(decoded)) return decoded.failure
          const nested = decoded.success.error
          const code = decoded.success.code ?? nested?.code ?? nested?.type ?? "error"
          const message = decoded.success.message ?? nested?.message ?? "the provider reported an error"
          turn.fail(out, classifyError(code, message, json.success))
          return undefined
        }
        default: {
          const fallback = deltaFallback[type]
          if (fallback === undefined) return undefined
          const decoded = decodeDelta(json.success, event.line, what)
          if (Result.isFailure(decoded)) return decoded.failure
          turn.delta(out, decoded.success.item_id, decoded.success.delta, fallback)
          return undefined
        }
      }
    },
    onEnd: (out) => turn.truncate(out)
  }
}

/**
 * Normalizes a Responses API event stream. The turn ends at `response.completed`,
 * `response.incomplete`, `response.failed` or an `error` event; a stream that stops
 * before any of them ends with a retryable `stream_truncated` error, keeping what
 * arrived. A second `response.created`, and any event after `response.completed`,
 * `response.incomplete` or `response.failed`, fail with `WireDecodeError`
 * `InvalidOrder` naming the event (events after an `error` event are ignored).
 *
 * @since 0.1.0
 * @category normalizing
 */
export const normalize: Normalize = (options) => normalizeWith(makeHandler(options))

/**
 * Decodes a non-streaming Responses API body (the `response` object, or an error body
 * `{"error": {...}}`) into the events the stream of the same response gives.
 *
 * @since 0.1.0
 * @category normalizing
 */
export const normalizeResponse: NormalizeResponse = (body, options) =>
  Effect.clockWith((clock) =>
    Effect.suspend(() => {
      const response = decodeResponse(body, 0, "body")
      if (Result.isFailure(response)) return Effect.fail(response.failure)
      const turn = new ResponsesTurn(options, () => clock.currentTimeMillisUnsafe())
      const out: Out = []
      turn.start(out, response.success)
      const failure = turn.end(out, response.success, 0)
      return failure === undefined ? Effect.succeed(out) : Effect.fail(failure)
    })
  )

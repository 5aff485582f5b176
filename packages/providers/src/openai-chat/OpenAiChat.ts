/**
 * OpenAI Chat Completions, and the OpenAI-compatible servers that speak it (DeepSeek,
 * OpenRouter, ...): the streaming body (`chat.completion.chunk` events and `[DONE]`)
 * and the non-streaming `chat.completion` response, into StreamEvents.
 *
 * - `content` deltas become a `message` item; a `content` array of typed parts
 *   (Mistral) gives its `text` parts to the message and its `thinking` parts (their own
 *   arrays of text parts) to the `reasoning` item, and keeps parts of other kinds
 *   (`reference`, ...) in the message's `provider_metadata.other_content`;
 *   `refusal` deltas a `message` item with
 *   `provider_metadata.refusal: true` (and the turn gets a `content_blocked` error).
 * - `reasoning_content` (DeepSeek) and `reasoning` / `reasoning_details`
 *   (OpenRouter) deltas become a `reasoning` item; a `reasoning_details` signature
 *   becomes its `signature` and encrypted details its `encrypted_content`; the details
 *   themselves, merged across chunks, are kept in `provider_metadata.reasoning_details`
 *   to go back in the next request as they came.
 * - `tool_calls` fragments (and the legacy `function_call`) go through
 *   `ToolCallAccumulator` and become `function_call` items, finalized when the turn
 *   ends; a custom tool's call (`type: "custom"`) gets its free text as the arguments
 *   `{"input": ...}` and `provider_metadata.type: "custom"`, and a call's
 *   `extra_content` (Gemini's thought signature) is kept in its `provider_metadata`.
 * - `annotations` (a search model's `url_citation`s) become the message's `sources`.
 * - Perplexity's and xAI's top-level `citations` (and Perplexity's `search_results`)
 *   become the message's `sources` and are kept in its `provider_metadata`; OpenRouter's
 *   `images` are kept in the message's `provider_metadata.images`.
 * - Audio output: its `transcript` is the message's text; its `id`, `expires_at` and
 *   `data` (joined) are kept in the message's `provider_metadata.audio`.
 * - Usage comes in the last chunk when the request set
 *   `stream_options.include_usage` (Groq's in `x_groq.usage` either way); without it
 *   usage is zeros.
 * - An `error` object in a chunk becomes a classified `response_error`.
 *
 * Only the first choice (`index` 0) is read; requests with `n > 1` are not supported.
 *
 * @since 0.1.0
 */
import type { FinishReason, OutputItem, Sse, StreamEvent } from "@sluice/core"
import { Json, ProviderError, TurnBuilder, Usage } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Citations from "../Citations.js"
import * as ErrorClassification from "../ErrorClassification.js"
import { decodeBody, parseData } from "../internal/decodeData.js"
import { decodeSseWith, type Handler, normalizeWith } from "../internal/normalizerChannel.js"
import { Count, countOf, mergeUsage } from "../internal/wireCounts.js"
import { isDoneSentinel } from "../internal/wireJson.js"
import type { DecodeSse, Normalize, NormalizeOptions, NormalizeResponse } from "../Normalizer.js"
import { type OpenAiExtra, ToolCalls } from "../ToolCalls.js"
import { WireDecodeError } from "../WireDecodeError.js"

// ---------------------------------------------------------------------------------
// wire schemas
// ---------------------------------------------------------------------------------

const optional = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))

const JsonFields = Schema.Record(Schema.String, Json.JsonValue)

/**
 * The usage object (`prompt_tokens` counts cached tokens too; DeepSeek adds
 * `prompt_cache_hit_tokens`). Every field is kept for `Usage.raw`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WireUsage = Schema.StructWithRest(
  Schema.Struct({
    prompt_tokens: Count,
    completion_tokens: Count,
    total_tokens: Count,
    prompt_cache_hit_tokens: Count
  }),
  [JsonFields]
).annotate({ identifier: "OpenAiChatUsage" })

/**
 * An error object, in a chunk or as an error body. `code` is a string (OpenAI) or an
 * HTTP-like number (OpenRouter).
 *
 * @since 0.1.0
 * @category schemas
 */
export const WireError = Schema.StructWithRest(
  Schema.Struct({
    message: optional(Schema.String),
    type: optional(Schema.String),
    code: optional(Schema.Union([Schema.String, Schema.Number]))
  }),
  [JsonFields]
).annotate({ identifier: "OpenAiChatError" })

const FunctionFragment = Schema.Struct({ name: optional(Schema.String), arguments: optional(Schema.String) })

// a custom tool's call (GPT-5 `type: "custom"` tools): its name, and its free-text
// input, streamed in pieces
const CustomFragment = Schema.Struct({ name: optional(Schema.String), input: optional(Schema.String) })

const ToolCallFragment = Schema.Struct({
  index: optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  id: optional(Schema.String),
  type: optional(Schema.String),
  function: optional(FunctionFragment),
  custom: optional(CustomFragment),
  // Gemini's OpenAI-compatible endpoint: `{"google": {"thought_signature": ...}}`, which
  // must go back with the call
  extra_content: optional(JsonFields)
})

/**
 * Audio output (`modalities: ["audio"]`): the audio's `id` (what the next request
 * names it by), its `transcript` and base64 `data` in pieces, and `expires_at`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const AudioFragment = Schema.StructWithRest(
  Schema.Struct({
    id: optional(Schema.String),
    transcript: optional(Schema.String),
    data: optional(Schema.String),
    expires_at: optional(Schema.Number)
  }),
  [JsonFields]
).annotate({ identifier: "OpenAiChatAudio" })

/**
 * A search model's citation (`gpt-4o-search-preview`): `{"type": "url_citation",
 * "url_citation": {"url", "title", "start_index", "end_index"}}`, every field kept.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Annotation = Schema.StructWithRest(Schema.Struct({ type: Schema.String }), [JsonFields]).annotate({
  identifier: "OpenAiChatAnnotation"
})

/**
 * One OpenRouter `reasoning_details` entry (`reasoning.text`, `reasoning.summary`,
 * `reasoning.encrypted`): every field is kept, so that the details can go back in the
 * next request as they came.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ReasoningDetail = Schema.StructWithRest(
  Schema.Struct({
    type: Schema.String,
    text: optional(Schema.String),
    summary: optional(Schema.String),
    signature: optional(Schema.String),
    data: optional(Schema.String)
  }),
  [JsonFields]
).annotate({ identifier: "OpenAiChatReasoningDetail" })

/**
 * One typed part of a `content` array (Mistral): `{"type": "text", "text"}`,
 * `{"type": "thinking", "thinking": [<text parts>]}`, `{"type": "reference",
 * "reference_ids"}`, or any other kind, kept as it came.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ContentPart = Schema.StructWithRest(Schema.Struct({ type: Schema.String }), [JsonFields]).annotate({
  identifier: "OpenAiChatContentPart"
})

/**
 * @since 0.3.0
 * @category models
 */
export type ContentPart = typeof ContentPart.Type

/**
 * A chunk's `delta` (and, in the non-streaming response, the `message`). `content` is
 * a string, or (Mistral) an array of typed parts.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Delta = Schema.Struct({
  role: optional(Schema.String),
  content: optional(Schema.Union([Schema.String, Schema.Array(ContentPart)])),
  refusal: optional(Schema.String),
  reasoning_content: optional(Schema.String),
  reasoning: optional(Schema.String),
  reasoning_details: optional(Schema.Array(ReasoningDetail)),
  tool_calls: optional(Schema.Array(ToolCallFragment)),
  function_call: optional(FunctionFragment),
  annotations: optional(Schema.Array(Annotation)),
  audio: optional(AudioFragment),
  // OpenRouter's image output: `{"type": "image_url", "image_url": {"url": "data:..."}}`
  images: optional(Schema.Array(JsonFields))
}).annotate({ identifier: "OpenAiChatDelta" })

/**
 * @since 0.1.0
 * @category models
 */
export type Delta = typeof Delta.Type

const Choice = Schema.Struct({
  index: optional(Schema.Int),
  delta: optional(Delta),
  finish_reason: optional(Schema.String)
})

const chunkFields = {
  id: Schema.optionalKey(Schema.String),
  model: optional(Schema.String),
  choices: optional(Schema.Array(Choice)),
  usage: optional(WireUsage),
  error: optional(WireError),
  // Groq: the usage of the request, in the last chunk, without `stream_options`
  x_groq: optional(Schema.Struct({ usage: optional(WireUsage) })),
  // Perplexity and xAI: the URLs the answer's `[n]` markers cite, and Perplexity's
  // search results (`title`, `url`, `date`), as top-level fields of the chunks
  citations: optional(Schema.Array(Json.JsonValue)),
  search_results: optional(Schema.Array(Json.JsonValue))
}

/**
 * One `chat.completion.chunk`: it must carry `choices`, `usage` or `error` (one
 * member per field that is there, so the schema needs no filter over the whole chunk).
 *
 * @since 0.1.0
 * @category schemas
 */
export const StreamChunk = Schema.Union([
  Schema.Struct({ ...chunkFields, choices: Schema.Array(Choice) }),
  Schema.Struct({ ...chunkFields, usage: WireUsage }),
  Schema.Struct({ ...chunkFields, error: WireError })
]).annotate({ identifier: "OpenAiChatStreamChunk" })

/**
 * @since 0.1.0
 * @category models
 */
export type StreamChunk = typeof StreamChunk.Type

const MessageToolCall = Schema.Struct({
  id: optional(Schema.String),
  type: optional(Schema.String),
  function: optional(FunctionFragment),
  custom: optional(CustomFragment),
  extra_content: optional(JsonFields)
})

/**
 * The non-streaming `chat.completion` response, or an error body.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Response = Schema.Union([
  Schema.Struct({
    id: Schema.optionalKey(Schema.String),
    model: optional(Schema.String),
    choices: Schema.Array(
      Schema.Struct({
        index: optional(Schema.Int),
        message: Schema.Struct({ ...Delta.fields, tool_calls: optional(Schema.Array(MessageToolCall)) }),
        finish_reason: optional(Schema.String)
      })
    ),
    usage: optional(WireUsage),
    citations: optional(Schema.Array(Json.JsonValue)),
    search_results: optional(Schema.Array(Json.JsonValue))
  }),
  Schema.Struct({ error: WireError })
]).annotate({ identifier: "OpenAiChatResponse" })

/**
 * @since 0.1.0
 * @category models
 */
export type Response = typeof Response.Type

// ---------------------------------------------------------------------------------
// mappings
// ---------------------------------------------------------------------------------

/**
 * The finish reason of a `finish_reason`: `stop` (and `eos`); `length` (and Mistral's
 * `model_length`); `tool_calls` and the
 * legacy `function_call` are `tool-calls`; `content_filter` is `content-filter`;
 * anything else is `other`. (A turn that ends `stop` with tool calls is `tool-calls`:
 * the normalizer decides that, knowing the calls.)
 *
 * @since 0.1.0
 * @category mappings
 */
export const finishReason = (reason: string): FinishReason.FinishReason => {
  switch (reason) {
    case "stop":
    case "eos": // Together, and other servers of the compatible API: the model's end of sequence
      return "stop"
    case "length":
    case "model_length": // Mistral: the model's own context length
      return "length"
    case "tool_calls":
    case "function_call":
      return "tool-calls"
    case "content_filter":
      return "content-filter"
    default:
      return "other"
  }
}

/**
 * Usage of a chat completion usage object: `prompt_tokens` includes cached tokens
 * (`prompt_tokens_details.cached_tokens`, or DeepSeek's `prompt_cache_hit_tokens`)
 * and cache writes (`prompt_tokens_details.cache_write_tokens`, OpenRouter), so
 * `input` is what remains; `completion_tokens` includes
 * `completion_tokens_details.reasoning_tokens`.
 *
 * @since 0.1.0
 * @category mappings
 */
export const usage = (raw: Json.JsonObject | undefined): Usage.Usage => {
  if (raw === undefined) return Usage.empty
  const cacheRead = countOf(raw, "prompt_tokens_details", "cached_tokens") ?? countOf(raw, "prompt_cache_hit_tokens") ??
    0
  const cacheWrite = countOf(raw, "prompt_tokens_details", "cache_write_tokens") ?? 0
  const prompt = countOf(raw, "prompt_tokens") ?? 0
  return Usage.make({
    input: Math.max(0, prompt - Math.max(0, cacheRead) - Math.max(0, cacheWrite)),
    output: countOf(raw, "completion_tokens"),
    cacheRead,
    cacheWrite,
    reasoning: countOf(raw, "completion_tokens_details", "reasoning_tokens"),
    raw
  })
}

/**
 * Classifies an error object with the one classifier every provider shares
 * (`ProviderError.classify`): its string `code` and `type` and its message, a numeric
 * `code` read as an HTTP status.
 *
 * @since 0.1.0
 * @category errors
 */
export const classifyError = (error: typeof WireError.Type): ProviderError.ProviderError =>
  ProviderError.classify({
    status: typeof error.code === "number" && Number.isInteger(error.code) && error.code >= 100 && error.code <= 599
      ? error.code
      : undefined,
    code: typeof error.code === "string" ? error.code : typeof error.code === "number" ? String(error.code) : undefined,
    type: error.type ?? undefined,
    message: error.message ?? undefined,
    raw: error
  })

// ---------------------------------------------------------------------------------
// the state machine
// ---------------------------------------------------------------------------------

type Out = Array<StreamEvent.StreamEvent>

// shared empty arrays for the fields most chunks do not carry
const noDetails: ReadonlyArray<typeof ReasoningDetail.Type> = []
const noCalls: ReadonlyArray<typeof ToolCallFragment.Type> = []
const noChoices: ReadonlyArray<typeof Choice.Type> = []

interface Reasoning {
  readonly itemId: string
  signature: string
  encrypted: string
  /** the `reasoning_details` entries as they stand, merged across chunks */
  readonly details: Array<Record<string, Json.JsonValue>>
  /** the kinds of text it received */
  readonly kinds: Set<"summary" | "raw">
}

// the fields of a `reasoning_details` entry that stream in pieces
const streamedDetailFields = ["text", "summary", "data", "signature"]

/**
 * Merges one streamed `reasoning_details` entry into the entries so far: an entry of the
 * same `type` and `index` (or, without an `index`, the last entry when it is a text or
 * summary entry of the same type without one) grows by its streamed fields, and takes the
 * other fields it lacks; any other entry is added as it came.
 */
const mergeDetail = (details: Array<Record<string, Json.JsonValue>>, detail: typeof ReasoningDetail.Type): void => {
  const index = detail.index
  let target: Record<string, Json.JsonValue> | undefined
  if (index !== undefined && index !== null) {
    for (let i = details.length - 1; i >= 0 && target === undefined; i--) {
      const known = details[i]!
      if (known.type === detail.type && known.index === index) target = known
    }
  } else {
    const last = details.at(-1)
    if (
      last !== undefined && last.type === detail.type && (last.index === undefined || last.index === null) &&
      detail.type !== "reasoning.encrypted"
    ) target = last
  }
  if (target === undefined) {
    const copy: Record<string, Json.JsonValue> = {}
    for (const [key, value] of Object.entries(detail)) if (value !== undefined) copy[key] = value
    details.push(copy)
    return
  }
  for (const [key, value] of Object.entries(detail)) {
    if (value === undefined || value === null) continue
    const known = target[key]
    if (streamedDetailFields.includes(key) && typeof value === "string" && typeof known === "string") {
      target[key] = known + value
    } else if (known === undefined || known === null) target[key] = value
  }
}

/** The text of a Mistral `thinking` part: its `thinking` is an array of text parts (or a string). */
const thinkingText = (value: Json.JsonValue | undefined): string => {
  if (typeof value === "string") return value
  if (!Array.isArray(value)) return ""
  let text = ""
  for (const part of value) {
    if (typeof part === "string") text += part
    else if (Json.isObject(part) && typeof part.text === "string") text += part.text
  }
  return text
}

const makeMachine = (providerId: string, options: NormalizeOptions | undefined, now: () => number) => {
  const builder = new TurnBuilder.TurnBuilder({ providerId, options, now })
  const calls = new ToolCalls()
  const callItems: Array<string | undefined> = []
  let message: string | undefined
  // content parts of kinds that carry no text (Mistral `reference`, ...), for the message
  let otherContent: Array<Json.JsonObject> = []
  // a search model's citations of the message, as they came
  let annotations: Array<Json.JsonObject> = []
  // the message's images (OpenRouter), as they came
  let images: Array<Json.JsonObject> = []
  // the turn's top-level citations and search results (Perplexity, xAI), the latest given
  let webCitations: ReadonlyArray<Json.JsonValue> = []
  let searchResults: ReadonlyArray<Json.JsonValue> = []
  // the message's audio output: its id, expiry and data (its transcript is the message's text)
  let audio: { id?: string; expires_at?: number; data: string } | undefined
  let refusal: string | undefined
  let reasoning: Reasoning | undefined
  let reason: string | null = null
  let rawUsage: Json.JsonObject | undefined
  let blocked = false

  const closeMessage = (out: Out): void => {
    if (message === undefined) return
    const metadata = {
      ...(otherContent.length === 0 ? {} : { other_content: otherContent }),
      ...(annotations.length === 0 ? {} : { annotations }),
      ...(images.length === 0 ? {} : { images }),
      ...(webCitations.length === 0 ? {} : { citations: webCitations }),
      ...(searchResults.length === 0 ? {} : { search_results: searchResults }),
      ...(audio === undefined ? {} : {
        audio: {
          ...(audio.id === undefined ? {} : { id: audio.id }),
          ...(audio.expires_at === undefined ? {} : { expires_at: audio.expires_at }),
          ...(audio.data === "" ? {} : { data: audio.data })
        }
      })
    }
    builder.done(out, message, {
      type: "message",
      id: message,
      content: builder.content(message),
      origin: "agent",
      ...sourcesOf(annotations, webCitations, searchResults),
      ...(Object.keys(metadata).length === 0 ? {} : { provider_metadata: metadata })
    })
    message = undefined
    otherContent = []
    annotations = []
    images = []
    audio = undefined
  }

  const closeReasoning = (out: Out): void => {
    if (reasoning === undefined) return
    const { details, encrypted, itemId, kinds, signature } = reasoning
    builder.done(out, itemId, {
      type: "reasoning",
      id: itemId,
      content: builder.content(itemId),
      ...(kinds.size === 1 && kinds.has("summary") ? { reasoning_kind: "summary" as const } : {}),
      provider_id: providerId,
      ...(signature === "" ? {} : { signature }),
      ...(encrypted === "" ? {} : { encrypted_content: encrypted }),
      ...(details.length === 0 ? {} : { provider_metadata: { reasoning_details: details } })
    })
    reasoning = undefined
  }

  const openReasoning = (out: Out): Reasoning => {
    if (reasoning !== undefined) return reasoning
    closeMessage(out)
    reasoning = {
      itemId: builder.openItem(out, "reasoning"),
      signature: "",
      encrypted: "",
      details: [],
      kinds: new Set()
    }
    return reasoning
  }

  const onReasoning = (delta: Delta, out: Out): void => {
    const text = delta.reasoning_content ?? delta.reasoning
    let detailText = ""
    // whether the details' text is all summary (`reasoning.summary`), not raw thinking
    let summaries = 0
    let raws = 0
    const details = delta.reasoning_details ?? noDetails
    for (let i = 0; i < details.length; i++) {
      const detail = details[i]!
      mergeDetail(openReasoning(out).details, detail)
      if (detail.signature != null && detail.signature !== "") openReasoning(out).signature += detail.signature
      if (detail.type === "reasoning.encrypted" && detail.data != null) openReasoning(out).encrypted += detail.data
      const piece = detail.text ?? detail.summary ?? ""
      if (piece !== "") {
        if (detail.type === "reasoning.summary") summaries++
        else raws++
      }
      detailText += piece
    }
    // `reasoning` repeats the text of `reasoning_details`; read the details only alone
    const visible = text ?? detailText
    if (visible === "") return
    const state = openReasoning(out)
    // OpenRouter's summaries are stated as such; all other reasoning text is raw
    const kind = summaries > 0 && raws === 0 ? "summary" : "raw"
    state.kinds.add(kind)
    builder.delta(out, state.itemId, visible, kind === "summary" ? "summary" : undefined)
  }

  const onToolCall = (
    index: number | undefined,
    id: string | undefined,
    name: string | undefined,
    args: string | undefined,
    out: Out,
    extra?: OpenAiExtra
  ): void => {
    if (calls.openAi(index, id, name, args, extra) === "started") {
      callItems[calls.position] = builder.openItem(out, "function_call", { name: calls.nameAt(calls.position) })
    }
    const itemId = callItems[calls.position]
    if (itemId !== undefined) builder.delta(out, itemId, calls.text)
  }

  // the message open now, or a new one (the reasoning before it closed)
  const openMessage = (out: Out): string => {
    if (message === undefined) {
      closeReasoning(out)
      message = builder.openItem(out, "message")
    }
    return message
  }

  const onText = (text: string, out: Out): void => {
    if (text === "") return
    builder.delta(out, openMessage(out), text)
  }

  // a content array (Mistral): text parts are the message, thinking parts reasoning,
  // parts of other kinds are kept on the message as they came
  const onContentParts = (parts: ReadonlyArray<ContentPart>, out: Out): void => {
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!
      if (part.type === "text") onText(typeof part.text === "string" ? part.text : "", out)
      else if (part.type === "thinking") {
        const text = thinkingText(part.thinking)
        if (text !== "") {
          const state = openReasoning(out)
          state.kinds.add("raw")
          builder.delta(out, state.itemId, text)
        }
      } else {
        openMessage(out)
        otherContent.push(part)
      }
    }
  }

  const onDelta = (delta: Delta, out: Out): void => {
    onReasoning(delta, out)
    const content = delta.content
    if (typeof content === "string") onText(content, out)
    else if (content != null) onContentParts(content, out)
    if (delta.refusal != null && delta.refusal !== "") {
      if (refusal === undefined) refusal = builder.openItem(out, "message")
      builder.delta(out, refusal, delta.refusal)
    }
    const toolCalls = delta.tool_calls ?? noCalls
    for (let i = 0; i < toolCalls.length; i++) {
      const call = toolCalls[i]!
      const custom = call.custom ?? undefined
      const extra = call.extra_content ?? undefined
      const fn = custom ?? call.function
      onToolCall(
        call.index ?? undefined,
        call.id ?? undefined,
        fn?.name ?? undefined,
        (custom === undefined ? call.function?.arguments : custom.input) ?? undefined,
        out,
        custom === undefined && extra === undefined ? undefined : {
          custom: custom !== undefined,
          metadata: extra === undefined ? undefined : { extra_content: extra }
        }
      )
    }
    const spoken = delta.audio ?? undefined
    if (spoken != null) {
      onText(spoken.transcript ?? "", out)
      openMessage(out)
      audio ??= { data: "" }
      if (spoken.id != null) audio.id = spoken.id
      if (spoken.expires_at != null) audio.expires_at = spoken.expires_at
      if (spoken.data != null) audio.data += spoken.data
    }
    const made = delta.images ?? undefined
    if (made != null && made.length > 0) {
      openMessage(out)
      images.push(...made)
    }
    const cited = delta.annotations ?? undefined
    if (cited != null && cited.length > 0) {
      openMessage(out)
      annotations.push(...cited)
    }
    if (delta.function_call != null) {
      onToolCall(0, undefined, delta.function_call.name ?? undefined, delta.function_call.arguments ?? undefined, out)
    }
  }

  const closeAll = (out: Out): void => {
    closeReasoning(out)
    closeMessage(out)
    if (refusal !== undefined) {
      builder.done(out, refusal, {
        type: "message",
        id: refusal,
        content: builder.content(refusal),
        origin: "agent",
        provider_metadata: { refusal: true }
      })
    }
    callItems.forEach((itemId, position) => {
      if (itemId === undefined || !builder.isOpen(itemId)) return
      const call = calls.finalizeCall(position)
      builder.done(out, itemId, {
        type: "function_call",
        id: itemId,
        call_id: call?.id ?? itemId,
        name: call?.name ?? "",
        arguments: call?.rawArguments ?? "",
        ...(call?.metadata === undefined ? {} : { provider_metadata: call.metadata })
      })
    })
  }

  const block = (out: Out, error: ProviderError.ProviderError, raw?: Json.JsonValue): void => {
    if (blocked) return
    blocked = true
    builder.error(out, error, raw)
  }

  const finish = (out: Out): void => {
    const refused = refusal === undefined ? undefined : builder.content(refusal)
    closeAll(out)
    if (refused !== undefined) {
      block(out, ErrorClassification.contentBlocked("refusal", refused === "" ? "the model refused" : refused))
    }
    if (reason === "content_filter") {
      block(
        out,
        ErrorClassification.contentBlocked("content_filter", "the provider's content filter stopped the response")
      )
    }
    // DeepSeek: the answer was cut short for want of capacity, not finished
    if (reason === "insufficient_system_resource" && !builder.hasFailed) {
      builder.error(
        out,
        ErrorClassification.make(
          "provider_overloaded",
          reason,
          `${providerId}: the server stopped the response for want of resources`,
          { retryable: true }
        )
      )
    }
    const ending: FinishReason.FinishReason | null = blocked
      ? "content-filter"
      : builder.hasFailed
      ? "error"
      : reason === null
      ? null
      : reason === "stop" && calls.size > 0
      // a forced `tool_choice`, and compatible servers (Gemini's, Ollama), end a turn of
      // tool calls `stop`: the caller has calls to run all the same
      ? "tool-calls"
      : finishReason(reason)
    builder.finish(out, { finishReason: ending, usage: usage(rawUsage) })
  }

  const onChunk = (chunk: StreamChunk, out: Out): void => {
    if (builder.isFinished) return
    // Azure's first chunk: no choices, no model, only the prompt's filter results; the
    // turn starts with the next, which names the model
    if (chunk.choices?.length === 0 && chunk.usage == null && chunk.error == null && !chunk.model) return
    builder.start(out, chunk.model ?? undefined)
    if (chunk.citations != null && chunk.citations.length > 0) webCitations = chunk.citations
    if (chunk.search_results != null && chunk.search_results.length > 0) searchResults = chunk.search_results
    if (chunk.usage != null) rawUsage = mergeUsage(rawUsage, chunk.usage)
    else if (chunk.x_groq?.usage != null) rawUsage = mergeUsage(rawUsage, chunk.x_groq.usage)
    const choices = chunk.choices ?? noChoices
    for (let i = 0; i < choices.length; i++) {
      const choice = choices[i]!
      if (choice.index != null && choice.index !== 0) continue
      if (choice.delta != null) onDelta(choice.delta, out)
      if (choice.finish_reason != null) reason = choice.finish_reason
    }
    if (chunk.error != null) {
      const error = classifyError(chunk.error)
      // the wire's error object, every field kept (`originalError` of a ProcessedChunk)
      if (error.type === "content_blocked") block(out, error, chunk.error)
      else builder.error(out, error, chunk.error)
    }
  }

  const onEnd = (out: Out): void => {
    if (builder.isFinished) return
    if (reason !== null || builder.hasFailed) return finish(out)
    closeAll(out)
    builder.error(out, ErrorClassification.truncated(providerId))
    builder.finish(out, { finishReason: "error", usage: usage(rawUsage) })
  }

  return { onChunk, finish, onEnd, isFinished: () => builder.isFinished }
}

const makeHandler = (providerId: string, options: NormalizeOptions | undefined) => (now: () => number): Handler => {
  const machine = makeMachine(providerId, options, now)
  const decode = parseData(providerId, StreamChunk)
  return {
    onEvent: (event: Sse.SseEvent, out) => {
      if (machine.isFinished()) return undefined
      if (isDoneSentinel(event.data)) {
        machine.finish(out)
        return undefined
      }
      const chunk = decode(event)
      if (chunk instanceof WireDecodeError) return chunk
      machine.onChunk(chunk, out)
      return undefined
    },
    onEnd: machine.onEnd
  }
}

/**
 * A chat citation as the Responses API states it (`{type, url, title, start_index,
 * end_index}`), for `Citations.fromOpenAi`.
 */
const chatCitation = (annotation: Json.JsonValue): OutputItem.Source | undefined => {
  if (!Json.isObject(annotation)) return undefined
  const inner = annotation[typeof annotation.type === "string" ? annotation.type : ""]
  return Citations.fromOpenAi(Json.isObject(inner) ? { ...inner, type: annotation.type ?? null } : annotation)
}

/**
 * A message's sources: its annotations' (search models), then Perplexity's search
 * results (`url`, `title`), or, without them, the cited URLs (Perplexity, xAI).
 */
const sourcesOf = (
  annotations: ReadonlyArray<Json.JsonObject>,
  cited: ReadonlyArray<Json.JsonValue>,
  results: ReadonlyArray<Json.JsonValue>
): { readonly sources?: ReadonlyArray<OutputItem.Source> } => {
  const sources = annotations.flatMap((annotation) => chatCitation(annotation) ?? [])
  let found = 0
  for (const result of results) {
    if (!Json.isObject(result) || typeof result.url !== "string") continue
    found++
    sources.push({ kind: "url", url: result.url, ...(typeof result.title === "string" ? { title: result.title } : {}) })
  }
  if (found === 0) { for (const url of cited) if (typeof url === "string") sources.push({ kind: "url", url }) }
  return sources.length === 0 ? {} : { sources }
}

const toChunk = (response: Extract<Response, { readonly choices: unknown }>): StreamChunk => ({
  model: response.model ?? null,
  citations: response.citations ?? null,
  search_results: response.search_results ?? null,
  usage: response.usage ?? null,
  choices: response.choices.map((choice) => ({
    index: choice.index ?? null,
    finish_reason: choice.finish_reason ?? null,
    delta: {
      ...choice.message,
      tool_calls: choice.message.tool_calls?.map((call, index) => ({ ...call, index })) ?? null
    }
  }))
})

const makeNormalizers = (
  providerId: string
): { readonly normalize: Normalize; readonly decodeSse: DecodeSse; readonly normalizeResponse: NormalizeResponse } => {
  const decodeResponse = decodeBody(providerId, Response)
  return {
    normalize: (options) => normalizeWith(makeHandler(providerId, options)),
    decodeSse: (options, sse) => decodeSseWith(makeHandler(providerId, options), sse),
    normalizeResponse: (body, options) =>
      Effect.clockWith((clock): Effect.Effect<ReadonlyArray<StreamEvent.StreamEvent>, WireDecodeError> => {
        const response = decodeResponse(body)
        if (Result.isFailure(response)) return Effect.fail(response.failure)
        const machine = makeMachine(providerId, options, () => clock.currentTimeMillisUnsafe())
        const out: Out = []
        const decoded = response.success
        machine.onChunk("choices" in decoded ? toChunk(decoded) : { error: decoded.error }, out)
        machine.finish(out)
        return Effect.succeed(out)
      })
  }
}

const openAiChat = makeNormalizers("openai-chat")
const openAiCompatible = makeNormalizers("openai-compatible")

/**
 * Normalizes an OpenAI Chat Completions SSE stream (`provider_id` `openai-chat`).
 * The turn ends at `[DONE]`; a stream that ends without it still completes when a
 * `finish_reason` or an error arrived (some servers omit `[DONE]`), and otherwise
 * keeps what arrived and ends with a retryable `stream_truncated` error. What follows
 * `[DONE]` is ignored: OpenAI-compatible servers differ there (a second `[DONE]`, a
 * late usage chunk), and the turn has ended.
 *
 * @since 0.1.0
 * @category normalizers
 */
export const normalize: Normalize = openAiChat.normalize

/**
 * `normalize` with the SSE framing in the same step, from the body's bytes.
 *
 * @since 0.3.0
 * @category normalizers
 */
export const decodeSse: DecodeSse = openAiChat.decodeSse

/**
 * Decodes a non-streaming `chat.completion` response (or an error body) into the
 * events the stream of the same content produces.
 *
 * @since 0.1.0
 * @category normalizers
 */
export const normalizeResponse: NormalizeResponse = openAiChat.normalizeResponse

/**
 * `normalize` for OpenAI-compatible servers (`provider_id` `openai-compatible`):
 * the same wire format, with `reasoning_content`, `reasoning` and
 * `reasoning_details` deltas and in-chunk errors as DeepSeek and OpenRouter send
 * them.
 *
 * @since 0.1.0
 * @category normalizers
 */
export const normalizeCompatible: Normalize = openAiCompatible.normalize

/**
 * `decodeSse` for OpenAI-compatible servers (`provider_id` `openai-compatible`).
 *
 * @since 0.3.0
 * @category normalizers
 */
export const decodeSseCompatible: DecodeSse = openAiCompatible.decodeSse

/**
 * `normalizeResponse` for OpenAI-compatible servers (`provider_id`
 * `openai-compatible`).
 *
 * @since 0.1.0
 * @category normalizers
 */
export const normalizeCompatibleResponse: NormalizeResponse = openAiCompatible.normalizeResponse

/**
 * Google Gemini `streamGenerateContent?alt=sse`, as the Gemini API and Vertex AI serve
 * it, and the non-streaming `GenerateContentResponse`, into the hub StreamEvent
 * vocabulary.
 *
 * Consecutive text parts are one `message` item and consecutive `thought: true` parts
 * one `reasoning` item. A `thoughtSignature` is never dropped: on a thought part it is
 * the reasoning item's `signature`, on any other part it is the item's
 * `provider_metadata.thoughtSignature` (a second signature for the same item starts a
 * new item). A `functionCall` is one `function_call` item whose `arguments` are the
 * JSON text of `args`; Vertex AI's streamed arguments (`partialArgs` with
 * `willContinue`) are assembled and finalized when the call's last part arrives.
 * `executableCode` and `codeExecutionResult` (the code execution tool, which Gemini runs
 * itself) are a `provider_executed` `function_call` named `code_execution` (arguments
 * `{language, code}`) and its `function_call_output`, each keeping its part in
 * `provider_metadata.part` to go back as it came. The search behind a grounded message
 * (`groundingMetadata`) follows the message as a `provider_executed` `google_search`
 * call (its queries; `google_maps` for Maps places) and its output (the grounding
 * chunks); the message keeps the grounding as its `sources`, and so its
 * `citationMetadata` and `urlContextMetadata`. Such metadata that arrives while no
 * message is open goes to the next one. Parts Sluice has no item for
 * (`inlineData`, ...) become empty `message` items that keep the part in
 * `provider_metadata.part`.
 *
 * The stream has no terminal event: the turn is complete when the candidate carries a
 * `finishReason` (or `promptFeedback` blocks the prompt, or an error object arrives).
 * Only the first candidate (index 0) is read.
 *
 * @since 0.1.0
 */
import type { OutputItem, StreamEvent } from "@sluice/core"
import { Json, ProviderError, TurnBuilder, Usage } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Citations from "../Citations.js"
import * as ErrorClassification from "../ErrorClassification.js"
import { decodeBody, decodeData } from "../internal/decodeData.js"
import { endTruncated, finishWith } from "../internal/endTurn.js"
import { decodeSseWith, type Handler, normalizeWith } from "../internal/normalizerChannel.js"
import { protocolError } from "../internal/wireJson.js"
import type { DecodeSse, Normalize, NormalizeOptions, NormalizeResponse } from "../Normalizer.js"
import type { WireDecodeError } from "../WireDecodeError.js"
import { ArgumentsBuilder } from "./internal/partialArgs.js"

const provider = "gemini"

type Out = Array<StreamEvent.StreamEvent>

const optional = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(schema)
const rest = Schema.Record(Schema.String, Json.JsonValue)

// ---------------------------------------------------------------------------
// Wire schemas
// ---------------------------------------------------------------------------

const PartialArg = Schema.Struct({
  jsonPath: Schema.String,
  stringValue: optional(Schema.String),
  numberValue: optional(Schema.Number),
  boolValue: optional(Schema.Boolean),
  nullValue: optional(Json.JsonValue),
  willContinue: optional(Schema.Boolean)
})

const FunctionCall = Schema.Struct({
  id: optional(Schema.String),
  name: optional(Schema.String),
  args: optional(Schema.NullOr(Json.JsonObject)),
  partialArgs: optional(Schema.Array(PartialArg)),
  willContinue: optional(Schema.Boolean)
})

// code the model ran with the code execution tool, and its result: Gemini ran both
const ExecutableCode = Schema.StructWithRest(
  Schema.Struct({
    id: optional(Schema.String),
    language: optional(Schema.String),
    code: optional(Schema.String)
  }),
  [rest]
)
const CodeExecutionResult = Schema.StructWithRest(
  Schema.Struct({
    id: optional(Schema.String),
    outcome: optional(Schema.String),
    output: optional(Schema.String)
  }),
  [rest]
)

/**
 * One part of a candidate's content. Fields Sluice does not read are kept.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Part = Schema.StructWithRest(
  Schema.Struct({
    text: optional(Schema.String),
    thought: optional(Schema.Boolean),
    thoughtSignature: optional(Schema.String),
    functionCall: optional(FunctionCall),
    executableCode: optional(ExecutableCode),
    codeExecutionResult: optional(CodeExecutionResult)
  }),
  [rest]
).annotate({ identifier: "GeminiPart" })

/**
 * @since 0.1.0
 * @category models
 */
export type Part = typeof Part.Type

const Candidate = Schema.Struct({
  content: optional(Schema.Struct({ role: optional(Schema.String), parts: optional(Schema.Array(Part)) })),
  finishReason: optional(Schema.String),
  finishMessage: optional(Schema.String),
  groundingMetadata: optional(Json.JsonObject),
  citationMetadata: optional(Json.JsonObject),
  urlContextMetadata: optional(Json.JsonObject),
  index: optional(Schema.Number)
})

/**
 * `usageMetadata`. `promptTokenCount` includes `cachedContentTokenCount`;
 * `candidatesTokenCount` excludes `thoughtsTokenCount`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UsageMetadata = Schema.StructWithRest(
  Schema.Struct({
    promptTokenCount: optional(Schema.Number),
    cachedContentTokenCount: optional(Schema.Number),
    candidatesTokenCount: optional(Schema.Number),
    thoughtsTokenCount: optional(Schema.Number),
    toolUsePromptTokenCount: optional(Schema.Number),
    totalTokenCount: optional(Schema.Number)
  }),
  [rest]
).annotate({ identifier: "GeminiUsageMetadata" })

/**
 * @since 0.1.0
 * @category models
 */
export type UsageMetadata = typeof UsageMetadata.Type

// every field kept (`details`: the retry delay, the quota), for the error's `raw`
const ErrorDetails = Schema.StructWithRest(
  Schema.Struct({
    code: optional(Schema.Number),
    message: optional(Schema.String),
    status: optional(Schema.String)
  }),
  [rest]
)

/**
 * One streamed chunk, which is also the whole non-streaming response: a
 * `GenerateContentResponse`, or an error object `{"error": {code, message, status}}`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GenerateContentResponse = Schema.Struct({
  candidates: optional(Schema.Array(Candidate)),
  promptFeedback: optional(
    Schema.Struct({ blockReason: optional(Schema.String), blockReasonMessage: optional(Schema.String) })
  ),
  usageMetadata: optional(UsageMetadata),
  modelVersion: optional(Schema.String),
  responseId: optional(Schema.String),
  error: optional(ErrorDetails)
}).annotate({ identifier: "GenerateContentResponse" })

/**
 * @since 0.1.0
 * @category models
 */
export type GenerateContentResponse = typeof GenerateContentResponse.Type

const decodeChunk = decodeData(provider, GenerateContentResponse)
const decodeResponseBody = decodeBody(
  provider,
  Schema.Union([GenerateContentResponse, Schema.Array(GenerateContentResponse)])
)

// ---------------------------------------------------------------------------
// Classification and usage
// ---------------------------------------------------------------------------

const blockingFinishReasons = new Set([
  "SAFETY",
  "RECITATION",
  "PROHIBITED_CONTENT",
  "BLOCKLIST",
  "SPII",
  "LANGUAGE",
  "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT",
  "IMAGE_RECITATION"
])

const failedFinishReasons = new Set([
  "MALFORMED_FUNCTION_CALL",
  "UNEXPECTED_TOOL_CALL",
  "TOO_MANY_TOOL_CALLS",
  "MISSING_THOUGHT_SIGNATURE",
  "MALFORMED_RESPONSE"
])

/**
 * What a candidate's `finishReason` means: `STOP` is `stop` (`tool-calls` when the turn
 * has function calls), `MAX_TOKENS` is `length`, safety-like reasons (`SAFETY`,
 * `RECITATION`, `PROHIBITED_CONTENT`, `BLOCKLIST`, `SPII`, `LANGUAGE`, `IMAGE_SAFETY`,
 * `IMAGE_PROHIBITED_CONTENT`, `IMAGE_RECITATION`) are
 * a `content_blocked` error with `content-filter`, a malformed or unexpected tool call
 * is a retryable `api_error` with `error`, anything else is `other`.
 *
 * @since 0.1.0
 * @category classification
 */
export const mapFinishReason = (
  reason: string,
  hasFunctionCalls: boolean,
  finishMessage?: string
): {
  readonly finishReason: "stop" | "length" | "tool-calls" | "content-filter" | "error" | "other"
  readonly error?: ProviderError.ProviderError
} => {
  if (reason === "STOP") return { finishReason: hasFunctionCalls ? "tool-calls" : "stop" }
  if (reason === "MAX_TOKENS") return { finishReason: "length" }
  if (blockingFinishReasons.has(reason)) {
    return {
      finishReason: "content-filter",
      error: ErrorClassification.contentBlocked(reason, finishMessage ?? `Gemini stopped the response (${reason})`)
    }
  }
  if (failedFinishReasons.has(reason)) {
    return {
      finishReason: "error",
      error: ErrorClassification.make("api_error", reason, finishMessage ?? `Gemini stopped the response (${reason})`, {
        retryable: true
      })
    }
  }
  return { finishReason: "other" }
}

/**
 * Classifies a Gemini error object with the one classifier every provider shares
 * (`ProviderError.classify`): its `status` (`RESOURCE_EXHAUSTED` is `rate_limit`,
 * `UNAVAILABLE` `provider_overloaded`, `DEADLINE_EXCEEDED` `timeout`, `INTERNAL` and
 * `ABORTED` retryable `api_error`s) as code, its HTTP `code` as status, its message.
 *
 * @since 0.1.0
 * @category classification
 */
export const classifyError = (error: {
  readonly code?: number | undefined
  readonly message?: string | undefined
  readonly status?: string | undefined
}, raw?: unknown): ProviderError.ProviderError => {
  const status = error.code !== undefined && Number.isInteger(error.code) && error.code >= 100 && error.code <= 599
    ? error.code
    : undefined
  return ProviderError.classify({
    status,
    code: error.status ?? (error.code === undefined ? undefined : String(error.code)),
    message: error.message ?? "Gemini reported an error",
    raw
  })
}

/**
 * The hub usage of `usageMetadata`: `input` is the prompt (plus tool-use prompt)
 * without the cached tokens, `cacheRead` the cached tokens, `output` the candidates
 * plus the thoughts, `reasoning` the thoughts. Missing usage is zeros.
 *
 * @since 0.1.0
 * @category usage
 */
export const toUsage = (usage: UsageMetadata | undefined): Usage.Usage => {
  if (usage === undefined) return Usage.empty
  const prompt = usage.promptTokenCount ?? 0
  const cached = Math.min(usage.cachedContentTokenCount ?? 0, prompt)
  const thoughts = usage.thoughtsTokenCount ?? 0
  return Usage.make({
    input: prompt - cached + (usage.toolUsePromptTokenCount ?? 0),
    cacheRead: cached,
    output: (usage.candidatesTokenCount ?? 0) + thoughts,
    reasoning: thoughts,
    raw: usage
  })
}

// ---------------------------------------------------------------------------
// The turn
// ---------------------------------------------------------------------------

/** What a candidate says of the answer as a whole: kept on the message it belongs to. */
interface AnswerMetadata {
  /** the candidate's `groundingMetadata` */
  grounding?: Json.JsonObject
  /** the candidate's `citationMetadata` (the sources the text recites), merged across chunks */
  citations?: Json.JsonObject
  /** the candidate's `urlContextMetadata` (the pages the url context tool read) */
  urlContext?: Json.JsonObject
}

interface TextItem extends AnswerMetadata {
  readonly id: string
  readonly kind: "message" | "reasoning"
  signature: string | undefined
}

interface StreamingCall {
  readonly id: string
  readonly callId: string
  readonly name: string
  readonly args: ArgumentsBuilder
  signature: string | undefined
}

/**
 * The citation metadata of a message across chunks: each chunk's `citationSources`
 * added to those before, a source given again (the same JSON) once.
 */
const mergeCitations = (before: Json.JsonObject | undefined, next: Json.JsonObject): Json.JsonObject => {
  if (before === undefined) return next
  const sources = [before.citationSources, next.citationSources].flatMap((list) => Array.isArray(list) ? list : [])
  const seen = new Set<string>()
  const unique = sources.filter((cited) => {
    const key = JSON.stringify(cited)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
  return { ...before, ...next, citationSources: unique }
}

/** A candidate's answer metadata, into the message (or the pending metadata) it belongs to. */
const takeMetadata = (
  target: AnswerMetadata,
  candidate: {
    readonly groundingMetadata?: Json.JsonObject | null | undefined
    readonly citationMetadata?: Json.JsonObject | null | undefined
    readonly urlContextMetadata?: Json.JsonObject | null | undefined
  }
): void => {
  // the latest grounding and url context win; citation sources add up
  if (candidate.groundingMetadata != null) target.grounding = candidate.groundingMetadata
  if (candidate.urlContextMetadata != null) target.urlContext = candidate.urlContextMetadata
  if (candidate.citationMetadata != null) {
    target.citations = mergeCitations(target.citations, candidate.citationMetadata)
  }
}

const textFinal = (item: TextItem, content: string): OutputItem.OutputItem => {
  if (item.kind === "reasoning") {
    return {
      type: "reasoning",
      id: item.id,
      content,
      reasoning_kind: "summary",
      ...(item.signature === undefined ? {} : { signature: item.signature })
    }
  }
  const sources = [
    ...(item.grounding === undefined ? [] : Citations.fromGeminiGrounding(item.grounding)),
    ...(item.citations === undefined ? [] : Citations.fromGeminiCitations(item.citations))
  ]
  const metadata = {
    ...(item.signature === undefined ? {} : { thoughtSignature: item.signature }),
    ...(item.grounding === undefined ? {} : { grounding: item.grounding }),
    ...(item.citations === undefined ? {} : { citationMetadata: item.citations }),
    ...(item.urlContext === undefined ? {} : { urlContextMetadata: item.urlContext })
  }
  return {
    type: "message",
    id: item.id,
    content,
    origin: "agent",
    ...(sources.length === 0 ? {} : { sources }),
    ...(Object.keys(metadata).length === 0 ? {} : { provider_metadata: metadata })
  }
}

/**
 * The search behind a grounded answer, Gemini ran it: Google Search grounding's
 * `webSearchQueries` as a `google_search` call (`retrieval` when the grounding has no
 * web queries: Vertex AI Search, RAG) and the `groundingChunks` it found as the call's
 * output, both `provider_executed`. Nothing when the grounding has neither.
 */
const groundingSearch = (
  grounding: Json.JsonObject
): { readonly name: string; readonly args: string; readonly output: string } | undefined => {
  const queries = Array.isArray(grounding.webSearchQueries) ? grounding.webSearchQueries : []
  const chunks = Array.isArray(grounding.groundingChunks) ? grounding.groundingChunks : []
  if (queries.length === 0 && chunks.length === 0) return undefined
  const places = chunks.some((chunk) => Json.isObject(chunk) && Json.isObject(chunk.maps))
  return {
    name: queries.length > 0 ? "google_search" : places ? "google_maps" : "retrieval",
    args: JSON.stringify({ queries }),
    output: JSON.stringify(chunks)
  }
}

const callFinal = (
  id: string,
  callId: string,
  name: string,
  args: string,
  signature: string | undefined
): OutputItem.OutputItem => ({
  type: "function_call",
  id,
  call_id: callId,
  name,
  arguments: args,
  ...(signature === undefined ? {} : { provider_metadata: { thoughtSignature: signature } })
})

/** The state of one turn, shared by the streaming handler and the non-streaming decoder. */
class GeminiTurn {
  private readonly builder: TurnBuilder.TurnBuilder
  private text: TextItem | undefined
  /** answer metadata that arrived while no message was open, for the next message */
  private pending: AnswerMetadata | undefined
  private call: StreamingCall | undefined
  /** The call id of the last `executableCode`, which the next `codeExecutionResult` answers. */
  private executed: string | undefined
  private functionCalls = 0
  private usage: UsageMetadata | undefined
  private ended:
    | { readonly finishReason: "stop" | "length" | "tool-calls" | "content-filter" | "error" | "other" }
    | undefined

  constructor(options: NormalizeOptions | undefined, now: () => number) {
    this.builder = new TurnBuilder.TurnBuilder({ providerId: provider, options, now })
  }

  chunk(out: Out, chunk: GenerateContentResponse, line: number): WireDecodeError | undefined {
    if (this.builder.isFinished) return undefined
    this.builder.start(out, chunk.modelVersion)
    if (chunk.usageMetadata !== undefined) this.usage = chunk.usageMetadata
    if (chunk.error !== undefined) {
      this.closeAll(out)
      finishWith(this.builder, out, {
        finishReason: "error",
        usage: toUsage(this.usage),
        error: classifyError(chunk.error, chunk.error),
        raw: chunk.error
      })
      return undefined
    }
    const candidate = chunk.candidates?.find((c) => (c.index ?? 0) === 0)
    for (const part of candidate?.content?.parts ?? []) {
      const failure = this.part(out, part, line)
      if (failure !== undefined) return failure
    }
    // grounding (Google Search), citations and url context belong to the answer: the
    // message open now, or else the next message (one is opened for them at the end)
    if (
      candidate !== undefined &&
      (candidate.groundingMetadata != null || candidate.citationMetadata != null ||
        candidate.urlContextMetadata != null)
    ) {
      const target: AnswerMetadata = this.text !== undefined && this.text.kind === "message"
        ? this.text
        : (this.pending ??= {})
      takeMetadata(target, candidate)
    }
    const blockReason = chunk.promptFeedback?.blockReason
    if (blockReason !== undefined && candidate === undefined) {
      this.closeAll(out)
      const message = chunk.promptFeedback?.blockReasonMessage ?? `Gemini blocked the prompt (${blockReason})`
      finishWith(this.builder, out, {
        finishReason: "content-filter",
        usage: toUsage(this.usage),
        error: ErrorClassification.contentBlocked(blockReason, message)
      })
      return undefined
    }
    if (candidate?.finishReason !== undefined) {
      // what arrived for the answer with no message to carry it gets one of its own
      if (this.pending !== undefined) this.openText(out, "message")
      this.closeAll(out)
      const { error, finishReason } = mapFinishReason(
        candidate.finishReason,
        this.functionCalls > 0,
        candidate.finishMessage
      )
      if (error !== undefined) this.builder.error(out, error)
      this.ended = { finishReason }
    }
    return undefined
  }

  private part(out: Out, part: Part, line: number): WireDecodeError | undefined {
    const signature = part.thoughtSignature
    if (part.functionCall !== undefined) {
      this.closeText(out)
      return this.functionCall(out, part.functionCall, signature, line)
    }
    if (part.text !== undefined) {
      const kind = part.thought === true ? "reasoning" : "message"
      this.closeCall(out)
      const current = this.text
      const item =
        current !== undefined && current.kind === kind && !(current.signature !== undefined && signature !== undefined)
          ? current
          : this.openText(out, kind)
      this.builder.delta(out, item.id, part.text)
      if (signature !== undefined) item.signature = signature
      return undefined
    }
    if (isSignatureOnly(part)) {
      if (this.call !== undefined && this.call.signature === undefined) {
        this.call.signature = signature
        return undefined
      }
      const current = this.text !== undefined && this.text.signature === undefined
        ? this.text
        : this.openText(out, "message")
      current.signature = signature
      return undefined
    }
    this.closeText(out)
    this.closeCall(out)
    if (part.executableCode !== undefined) {
      const id = this.builder.openItem(out, "function_call", { name: "code_execution" })
      const args = JSON.stringify({
        language: part.executableCode.language ?? "",
        code: part.executableCode.code ?? ""
      })
      const callId = part.executableCode.id ?? `call_${id}`
      this.executed = callId
      this.builder.delta(out, id, args)
      this.builder.done(out, id, {
        type: "function_call",
        id,
        call_id: callId,
        name: "code_execution",
        arguments: args,
        provider_executed: true,
        provider_metadata: { part }
      })
      return undefined
    }
    if (part.codeExecutionResult !== undefined) {
      const result = part.codeExecutionResult
      const id = this.builder.openItem(out, "function_call_output")
      const output = result.output ?? ""
      this.builder.delta(out, id, output)
      this.builder.done(out, id, {
        type: "function_call_output",
        id,
        call_id: result.id ?? this.executed ?? `call_${id}`,
        output,
        success: result.outcome === undefined || result.outcome === "OUTCOME_OK",
        provider_executed: true,
        provider_metadata: { part }
      })
      return undefined
    }
    const id = this.builder.openItem(out, "message")
    this.builder.done(out, id, { type: "message", id, content: "", origin: "agent", provider_metadata: { part } })
    return undefined
  }

  private functionCall(
    out: Out,
    call: typeof FunctionCall.Type,
    signature: string | undefined,
    line: number
  ): WireDecodeError | undefined {
    const streamed = call.partialArgs !== undefined || call.willContinue === true
    if (call.name !== undefined && call.name !== "" && (call.args !== undefined || !streamed)) {
      // A whole call (the Gemini API's only form).
      this.closeCall(out)
      const id = this.builder.openItem(out, "function_call", { name: call.name })
      const args = JSON.stringify(call.args ?? {})
      this.functionCalls++
      this.builder.delta(out, id, args)
      this.builder.done(out, id, callFinal(id, call.id ?? `call_${id}`, call.name, args, signature))
      return undefined
    }
    if (call.name !== undefined && call.name !== "") {
      // The first part of a streamed call.
      this.closeCall(out)
      const id = this.builder.openItem(out, "function_call", { name: call.name })
      this.functionCalls++
      this.call = { id, callId: call.id ?? `call_${id}`, name: call.name, args: new ArgumentsBuilder(), signature }
    } else if (this.call === undefined) {
      if (!streamed && call.args === undefined) return undefined
      return protocolError(provider, line, "a functionCall without a name continues no streamed call")
    }
    const active = this.call
    if (active === undefined) return undefined
    if (signature !== undefined) active.signature = signature
    for (const arg of call.partialArgs ?? []) {
      const failure = active.args.apply(arg)
      if (failure !== undefined) return protocolError(provider, line, `functionCall partialArgs: ${failure}`)
    }
    if (call.willContinue !== true) this.closeCall(out)
    return undefined
  }

  private openText(out: Out, kind: "message" | "reasoning"): TextItem {
    this.closeText(out)
    this.closeCall(out)
    // Gemini's thought parts are summaries of the model's thoughts (docs/providers.md)
    const id = kind === "reasoning"
      ? this.builder.open(out, kind, { reasoning_kind: "summary" }).id
      : this.builder.openItem(out, kind)
    const item: TextItem = { id, kind, signature: undefined }
    if (kind === "message" && this.pending !== undefined) {
      Object.assign(item, this.pending)
      this.pending = undefined
    }
    this.text = item
    return item
  }

  private closeText(out: Out): void {
    const item = this.text
    if (item === undefined) return
    this.text = undefined
    this.builder.done(out, item.id, textFinal(item, this.builder.content(item.id)))
    const search = item.grounding === undefined ? undefined : groundingSearch(item.grounding)
    if (search === undefined) return
    const id = this.builder.openItem(out, "function_call", { name: search.name })
    const callId = `call_${id}`
    this.builder.delta(out, id, search.args)
    this.builder.done(out, id, {
      type: "function_call",
      id,
      call_id: callId,
      name: search.name,
      arguments: search.args,
      provider_executed: true
    })
    const resultId = this.builder.openItem(out, "function_call_output")
    this.builder.delta(out, resultId, search.output)
    this.builder.done(out, resultId, {
      type: "function_call_output",
      id: resultId,
      call_id: callId,
      output: search.output,
      success: true,
      provider_executed: true
    })
  }

  private closeCall(out: Out): void {
    const call = this.call
    if (call === undefined) return
    this.call = undefined
    const args = call.args.toJson()
    this.builder.delta(out, call.id, args)
    this.builder.done(out, call.id, callFinal(call.id, call.callId, call.name, args, call.signature))
  }

  private closeAll(out: Out): void {
    this.closeText(out)
    this.closeCall(out)
  }

  end(out: Out): void {
    if (this.builder.isFinished) return
    if (this.ended !== undefined) {
      this.builder.finish(out, { finishReason: this.ended.finishReason, usage: toUsage(this.usage) })
      return
    }
    const text = this.text
    const call = this.call
    endTruncated(this.builder, out, provider, (id, content) => {
      if (text !== undefined && text.id === id) return textFinal(text, content)
      if (call !== undefined && call.id === id) {
        return callFinal(id, call.callId, call.name, call.args.toJson(), call.signature)
      }
      return { type: "message", id, content, origin: "agent" }
    }, toUsage(this.usage))
  }
}

const isSignatureOnly = (part: Part): boolean => {
  for (const key of Object.keys(part)) if (key !== "thoughtSignature" && key !== "thought") return false
  return part.thoughtSignature !== undefined
}

const makeHandler = (options: NormalizeOptions | undefined) => (now: () => number): Handler => {
  const turn = new GeminiTurn(options, now)
  return {
    onEvent: (event, out) => {
      const chunk = decodeChunk(event)
      return Result.isFailure(chunk) ? chunk.failure : turn.chunk(out, chunk.success, event.line)
    },
    onEnd: (out) => turn.end(out)
  }
}

/**
 * Normalizes a Gemini (or Vertex AI) `streamGenerateContent?alt=sse` stream. A stream
 * that ends before a `finishReason`, a prompt block or an error ends with a retryable
 * `stream_truncated` error, keeping what arrived.
 *
 * @since 0.1.0
 * @category normalizing
 */
export const normalize: Normalize = (options) => normalizeWith(makeHandler(options))

/**
 * `normalize` with the SSE framing in the same step, from the body's bytes.
 *
 * @since 0.3.0
 * @category normalizing
 */
export const decodeSse: DecodeSse = (options, sse) => decodeSseWith(makeHandler(options), sse)

/**
 * Decodes a non-streaming `generateContent` body (one `GenerateContentResponse`, or the
 * array of chunks Vertex AI may return) into the events the stream of the same
 * content gives.
 *
 * @since 0.1.0
 * @category normalizing
 */
export const normalizeResponse: NormalizeResponse = (body, options) =>
  Effect.clockWith((clock) =>
    Effect.suspend(() => {
      const decoded = decodeResponseBody(body)
      if (Result.isFailure(decoded)) return Effect.fail(decoded.failure)
      const turn = new GeminiTurn(options, () => clock.currentTimeMillisUnsafe())
      const out: Out = []
      const chunks: ReadonlyArray<GenerateContentResponse> = Array.isArray(decoded.success)
        ? decoded.success
        : [decoded.success]
      for (const chunk of chunks) {
        const failure = turn.chunk(out, chunk, 0)
        if (failure !== undefined) return Effect.fail(failure)
      }
      turn.end(out)
      return Effect.succeed(out)
    })
  )

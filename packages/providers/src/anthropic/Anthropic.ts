/**
 * Anthropic Messages: the streaming body (`message_start`, `content_block_*`,
 * `message_delta`, `message_stop`, `ping`, `error`) and the non-streaming Messages
 * response, into StreamEvents.
 *
 * - `text` blocks become `message` items (citations kept in `provider_metadata`);
 *   `thinking` blocks become `reasoning` items with their `signature`;
 *   `redacted_thinking` blocks become `reasoning` items with `redacted: true` and
 *   their `data`.
 * - `tool_use` blocks become `function_call` items whose arguments arrive as
 *   `input_json_delta` text and are finalized at the block's stop.
 * - `server_tool_use` / `mcp_tool_use` blocks become `function_call` items and
 *   `*_tool_result` blocks (`web_search_tool_result`, ...) `function_call_output`
 *   items, both with `provider_metadata.server_tool: true`.
 * - `message_delta` carries the stop reason and cumulative usage; `message_stop`
 *   ends the turn. `event: error` ends it with a classified `response_error`.
 *
 * @since 0.1.0
 */
import type { OutputItem, Sse, StreamEvent } from "@sluice/core"
import { Json, ProviderError, TurnBuilder, Usage } from "@sluice/core"
import type { FinishReason } from "@sluice/core"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import * as Citations from "../Citations.js"
import * as ErrorClassification from "../ErrorClassification.js"
import { decodeBody, decodeData } from "../internal/decodeData.js"
import { decodeSseWith, type Handler, normalizeWith } from "../internal/normalizerChannel.js"
import { Count, countOf, mergeUsage } from "../internal/wireCounts.js"
import type { DecodeSse, Normalize, NormalizeOptions, NormalizeResponse } from "../Normalizer.js"
import { ToolCalls } from "../ToolCalls.js"
import { WireDecodeError } from "../WireDecodeError.js"

const providerId = "anthropic"

// ---------------------------------------------------------------------------------
// wire schemas
// ---------------------------------------------------------------------------------

/**
 * Anthropic's usage object. Counts may be missing or `null`; every other field
 * (`cache_creation`, `service_tier`, ...) is kept for `Usage.raw`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WireUsage = Schema.StructWithRest(
  Schema.Struct({
    input_tokens: Count,
    output_tokens: Count,
    cache_creation_input_tokens: Count,
    cache_read_input_tokens: Count
  }),
  [Schema.Record(Schema.String, Json.JsonValue)]
).annotate({ identifier: "AnthropicUsage" })

const TextBlock = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  citations: Schema.optionalKey(Schema.NullOr(Schema.Array(Json.JsonValue)))
})

const ThinkingBlock = Schema.Struct({
  type: Schema.Literal("thinking"),
  thinking: Schema.String,
  signature: Schema.optionalKey(Schema.String)
})

const RedactedThinkingBlock = Schema.Struct({
  type: Schema.Literal("redacted_thinking"),
  data: Schema.String
})

const ToolUseBlock = Schema.Struct({
  type: Schema.Literals(["tool_use", "server_tool_use", "mcp_tool_use"]),
  id: Schema.String,
  name: Schema.String,
  input: Schema.optionalKey(Json.JsonObject),
  server_name: Schema.optionalKey(Schema.String),
  // programmatic tool calling: the code execution that made this client call
  caller: Schema.optionalKey(Json.JsonObject)
})

// a `compaction` block: the summary of the conversation so far (context compaction);
// fields besides the summary are kept to go back with it
const CompactionBlock = Schema.StructWithRest(
  Schema.Struct({
    type: Schema.Literal("compaction"),
    content: Schema.optionalKey(Schema.NullOr(Schema.String))
  }),
  [Schema.Record(Schema.String, Json.JsonValue)]
)

const knownBlockTypes = new Set([
  "text",
  "thinking",
  "redacted_thinking",
  "tool_use",
  "server_tool_use",
  "mcp_tool_use",
  "compaction"
])

const ToolResultFields = {
  tool_use_id: Schema.String,
  content: Schema.optionalKey(Json.JsonValue),
  is_error: Schema.optionalKey(Schema.NullOr(Schema.Boolean))
}

// `*_tool_result` blocks (web_search_tool_result, code_execution_tool_result, ...)
// decode to one tag that keeps the block's own type
const ToolResultBlock = Schema.Struct({
  type: Schema.String.check(
    Schema.makeFilter((type: string) => type.endsWith("_tool_result"), { expected: "a *_tool_result block type" })
  ),
  ...ToolResultFields
}).pipe(
  Schema.decodeTo(
    Schema.Struct({ type: Schema.Literal("tool_result"), block_type: Schema.String, ...ToolResultFields }),
    SchemaTransformation.transform({
      decode: ({ type, ...fields }) => ({ ...fields, type: "tool_result" as const, block_type: type }),
      encode: ({ block_type, type: _, ...fields }) => ({ ...fields, type: block_type })
    })
  )
)

/** Tags every type in `known` by itself; anything else decodes to `{ type: tag, name }`. */
const unknownType = <Tag extends string>(tag: Tag, known: (type: string) => boolean, description: string) =>
  Schema.Struct({
    type: Schema.String.check(Schema.makeFilter((type: string) => !known(type), { expected: description }))
  }).pipe(
    Schema.decodeTo(
      Schema.Struct({ type: Schema.Literal(tag), name: Schema.String }),
      SchemaTransformation.transform({
        decode: ({ type }) => ({ type: tag, name: type }),
        encode: ({ name }) => ({ type: name })
      })
    )
  )

const OtherBlock = unknownType(
  "unknown_block",
  (type) => knownBlockTypes.has(type) || type.endsWith("_tool_result"),
  "a content block type Sluice does not read"
)

/**
 * A content block, as `content_block_start` opens it and as the non-streaming
 * response holds it. Block types Sluice does not read yet are accepted and skipped.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContentBlock = Schema.Union([
  TextBlock,
  ThinkingBlock,
  RedactedThinkingBlock,
  ToolUseBlock,
  ToolResultBlock,
  CompactionBlock,
  OtherBlock
])
  .annotate({ identifier: "AnthropicContentBlock" })

/**
 * @since 0.1.0
 * @category models
 */
export type ContentBlock = typeof ContentBlock.Type

const knownDeltaTypes = new Set([
  "text_delta",
  "thinking_delta",
  "signature_delta",
  "input_json_delta",
  "citations_delta",
  "compaction_delta"
])

// the delta types read as they arrive (no transformation)
const PlainDeltas = [
  Schema.Struct({ type: Schema.Literal("text_delta"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("thinking_delta"), thinking: Schema.String }),
  Schema.Struct({ type: Schema.Literal("signature_delta"), signature: Schema.String }),
  Schema.Struct({ type: Schema.Literal("input_json_delta"), partial_json: Schema.String }),
  Schema.Struct({ type: Schema.Literal("citations_delta"), citation: Json.JsonValue }),
  Schema.Struct({
    type: Schema.Literal("compaction_delta"),
    content: Schema.optionalKey(Schema.NullOr(Schema.String))
  })
] as const

const Delta = Schema.Union([
  ...PlainDeltas,
  unknownType("unknown_delta", (type) => knownDeltaTypes.has(type), "a delta type Sluice does not read")
])

const BlockIndex = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

// the error's other fields are kept: the whole object is the error's `raw`
const ErrorDetails = Schema.StructWithRest(
  Schema.Struct({ type: Schema.String, message: Schema.String }),
  [Schema.Record(Schema.String, Json.JsonValue)]
)

/** The members of a stream event union, by `type`, with the given content block and delta schemas. */
const chunkMembers = <B extends Schema.Top, D extends Schema.Top>(contentBlock: B, delta: D) =>
  [
    Schema.Struct({
      type: Schema.Literal("message_start"),
      message: Schema.Struct({
        id: Schema.optionalKey(Schema.String),
        model: Schema.optionalKey(Schema.String),
        usage: Schema.optionalKey(Schema.NullOr(WireUsage))
      })
    }),
    Schema.Struct({ type: Schema.Literal("content_block_start"), index: BlockIndex, content_block: contentBlock }),
    Schema.Struct({ type: Schema.Literal("content_block_delta"), index: BlockIndex, delta }),
    Schema.Struct({ type: Schema.Literal("content_block_stop"), index: BlockIndex }),
    Schema.Struct({
      type: Schema.Literal("message_delta"),
      delta: Schema.Struct({
        stop_reason: Schema.optionalKey(Schema.NullOr(Schema.String)),
        // the code-execution container the response ran in (`{id, expires_at}`)
        container: Schema.optionalKey(Schema.NullOr(Json.JsonObject))
      }),
      usage: Schema.optionalKey(Schema.NullOr(WireUsage))
    }),
    Schema.Struct({ type: Schema.Literal("message_stop") }),
    Schema.Struct({ type: Schema.Literal("ping") }),
    Schema.Struct({ type: Schema.Literal("error"), error: ErrorDetails })
  ] as const

/**
 * One streamed event, by its `type`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StreamChunk = Schema.Union(chunkMembers(ContentBlock, Delta)).annotate({
  identifier: "AnthropicStreamChunk"
})

/**
 * @since 0.1.0
 * @category models
 */
export type StreamChunk = typeof StreamChunk.Type

/**
 * The non-streaming Messages response, or the error body the API answers with.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Response = Schema.Union([
  Schema.Struct({
    type: Schema.Literal("message"),
    id: Schema.optionalKey(Schema.String),
    model: Schema.optionalKey(Schema.String),
    content: Schema.Array(ContentBlock),
    stop_reason: Schema.optionalKey(Schema.NullOr(Schema.String)),
    container: Schema.optionalKey(Schema.NullOr(Json.JsonObject)),
    usage: Schema.optionalKey(Schema.NullOr(WireUsage))
  }),
  Schema.Struct({ type: Schema.Literal("error"), error: ErrorDetails })
]).annotate({ identifier: "AnthropicResponse" })

/**
 * @since 0.1.0
 * @category models
 */
export type Response = typeof Response.Type

// ---------------------------------------------------------------------------------
// mappings
// ---------------------------------------------------------------------------------

/** The HTTP status Anthropic documents for each error type. */
const errorStatuses: Record<string, number> = {
  overloaded_error: 529,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413
}

/**
 * Classifies an Anthropic error object (`event: error` or an error body) with the one
 * classifier every provider shares (`ProviderError.classify`), its type as code and the
 * status Anthropic documents for that type: `overloaded_error` is a retryable
 * `provider_overloaded`, `rate_limit_error` a `rate_limit`, `timeout_error` a `timeout`,
 * `api_error` a retryable `api_error`; a "prompt is too long" request error has code
 * `context_length_exceeded`; other request, authentication, billing, permission,
 * not-found and size errors are non-retryable `api_error`s, as is any type Anthropic
 * adds later.
 *
 * @since 0.1.0
 * @category errors
 */
export const classifyError = (
  error: { readonly type: string; readonly message: string }
): ProviderError.ProviderError =>
  ProviderError.classify({ code: error.type, message: error.message, status: errorStatuses[error.type], raw: error })

/**
 * The finish reason of a stop reason: `end_turn` and `stop_sequence` are `stop`,
 * `max_tokens` and `model_context_window_exceeded` are `length`, `tool_use` is
 * `tool-calls`, `refusal` is `content-filter`, `pause_turn` is `paused` (the turn
 * stopped during a long server-tool run: send the response back unchanged as the last
 * assistant message and the model continues it), anything else is `other`.
 *
 * @since 0.1.0
 * @category mappings
 */
export const finishReason = (stopReason: string): FinishReason.FinishReason => {
  switch (stopReason) {
    case "end_turn":
    case "stop_sequence":
      return "stop"
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length"
    case "tool_use":
      return "tool-calls"
    case "refusal":
      return "content-filter"
    case "pause_turn":
      return "paused"
    default:
      return "other"
  }
}

// The iterations of a usage object (`usage.iterations[]`), each with its kind, its model
// when it names one (an advisor's, a fallback's) and its counts; entries that are not
// objects are skipped.
const iterationsOf = (raw: Json.JsonObject): Array<Usage.UsageIteration> | undefined => {
  const iterations = raw.iterations
  if (!Array.isArray(iterations)) return undefined
  return iterations.flatMap((iteration): Array<Usage.UsageIteration> => {
    if (!Json.isObject(iteration)) return []
    const model = iteration.model
    return [{
      type: typeof iteration.type === "string" ? iteration.type : "unknown",
      ...(typeof model === "string" ? { model } : {}),
      input: countOf(iteration, "input_tokens") ?? 0,
      output: countOf(iteration, "output_tokens") ?? 0,
      cacheRead: countOf(iteration, "cache_read_input_tokens") ?? 0,
      cacheWrite: countOf(iteration, "cache_creation_input_tokens") ?? 0
    }]
  })
}

// `output_tokens_details.thinking_tokens`: never more than the output it is part of
const thinkingOf = (raw: Json.JsonObject): number | undefined => {
  const thinking = countOf(raw, "output_tokens_details", "thinking_tokens")
  const output = countOf(raw, "output_tokens")
  return thinking === undefined || output === undefined ? thinking : Math.min(thinking, output)
}

/**
 * Usage of an Anthropic usage object: `input_tokens` already excludes cache reads
 * (`cache_read_input_tokens`) and writes (`cache_creation_input_tokens`);
 * `output_tokens` includes thinking, and `output_tokens_details.thinking_tokens` (when
 * sent) says how much of it was thinking: that is `reasoning`, a part of `output`, never
 * added to it.
 *
 * When the usage has `iterations` (a context compaction, an advisor sub-inference, a
 * server-tool loop, a fallback model), they become `Usage.iterations`, one entry per pass
 * with its type, model and counts, and the counts are the sum over the passes on the
 * requested model: those that name no model or name `model` (the message's), compaction
 * included. Anthropic's own top-level figures count only the final pass of a compacted
 * response (input 612 where the request consumed 60,997). Passes on another model (an
 * advisor's, a fallback's) stay out of the counts and are listed in `iterations` with
 * their model (docs/events.md#usage-and-finish-reasons). Without iterations, or without
 * `model` to tell which pass is whose, the counts are the top-level figures.
 *
 * @since 0.1.0
 * @category mappings
 */
export const usage = (raw: Json.JsonObject | undefined, model?: string): Usage.Usage => {
  if (raw === undefined) return Usage.empty
  const iterations = iterationsOf(raw)
  const own = model === undefined || iterations === undefined
    ? []
    : iterations.filter((iteration) => iteration.model === undefined || iteration.model === model)
  const sum = (count: (iteration: Usage.UsageIteration) => number) =>
    own.reduce((total, iteration) => total + count(iteration), 0)
  return Usage.make({
    ...(own.length === 0
      ? {
        input: countOf(raw, "input_tokens"),
        output: countOf(raw, "output_tokens"),
        cacheRead: countOf(raw, "cache_read_input_tokens"),
        cacheWrite: countOf(raw, "cache_creation_input_tokens")
      }
      : {
        input: sum((iteration) => iteration.input),
        output: sum((iteration) => iteration.output),
        cacheRead: sum((iteration) => iteration.cacheRead),
        cacheWrite: sum((iteration) => iteration.cacheWrite)
      }),
    reasoning: thinkingOf(raw),
    iterations,
    raw
  })
}

// ---------------------------------------------------------------------------------
// the state machine
// ---------------------------------------------------------------------------------

type Out = Array<StreamEvent.StreamEvent>

type Block =
  | { readonly kind: "message"; readonly itemId: string; citations: Array<Json.JsonValue> | undefined }
  | {
    readonly kind: "reasoning"
    readonly itemId: string
    signature: string
    readonly data: string | undefined
    readonly textKind: OutputItem.ReasoningKind | undefined
  }
  | {
    readonly kind: "call"
    readonly itemId: string
    readonly position: number
    readonly metadata: Json.JsonObject | undefined
  }
  | { readonly kind: "result"; readonly itemId: string; readonly final: OutputItem.FunctionCallOutputItem }
  | { readonly kind: "compaction"; readonly itemId: string; readonly metadata: Json.JsonObject | undefined }
  | { readonly kind: "skipped" }

const serverMetadata = (blockType: string, extra: Json.JsonObject = {}): Json.JsonObject => ({
  server_tool: true,
  block_type: blockType,
  ...extra
})

const resultSucceeded = (block: typeof ToolResultBlock.Type): boolean => {
  if (block.is_error === true) return false
  const content = block.content
  return !(Json.isObject(content) && typeof content.type === "string" && content.type.endsWith("_error"))
}

const unexpected = (line: number, message: string): WireDecodeError =>
  new WireDecodeError({
    provider: providerId,
    line,
    reason: "UnexpectedShape",
    message: `anthropic event at line ${line}: ${message}`
  })

// an event the stream's order does not allow where it came (WireDecodeError `InvalidOrder`)
const outOfOrder = (line: number, message: string): WireDecodeError =>
  new WireDecodeError({
    provider: providerId,
    line,
    reason: "InvalidOrder",
    message: `anthropic event at line ${line}: ${message}`
  })

const mismatch = (line: number, deltaType: string, kind: string, index: number): WireDecodeError =>
  unexpected(line, `${deltaType} does not belong in a ${kind} block (block ${index})`)

/**
 * Whether a model's thinking comes back summarized: Anthropic returns the thinking of
 * Claude 4 and later models as a summary of the full thinking, Claude 3.7's (and any
 * Anthropic-compatible server's model) as it was produced.
 *
 * @since 0.3.0
 * @category mappings
 */
export const summarizesThinking = (model: string): boolean => {
  const named = /claude-(?:opus|sonnet|haiku)-(\d+)/i.exec(model)
  if (named !== null) return Number(named[1]) >= 4
  const numbered = /claude-(\d+)(?:[-.]\d+)?-(?:opus|sonnet|haiku)/i.exec(model)
  return numbered !== null && Number(numbered[1]) >= 4
}

const makeMachine = (options: NormalizeOptions | undefined, now: () => number) => {
  const builder = new TurnBuilder.TurnBuilder({ providerId, options, now })
  const blocks = new Map<number, Block>()
  const calls = new ToolCalls()
  let rawUsage: Json.JsonObject | undefined
  // the response's code-execution container: `response_done`'s `provider_metadata.container`
  let container: Json.JsonObject | undefined
  let stopReason: string | null = null
  // the lines of the message's start and stop, once they came: nothing may repeat the
  // one or follow the other
  let startLine: number | undefined
  let stopLine: number | undefined

  const finalOf = (block: Exclude<Block, { kind: "skipped" }>): OutputItem.OutputItem => {
    const content = builder.content(block.itemId)
    switch (block.kind) {
      case "message":
        return {
          type: "message",
          id: block.itemId,
          content,
          origin: "agent",
          ...(block.citations === undefined ? {} : Citations.sourcesField(block.citations, Citations.fromAnthropic)),
          ...(block.citations === undefined ? {} : { provider_metadata: { citations: block.citations } })
        }
      case "reasoning":
        return {
          type: "reasoning",
          id: block.itemId,
          content,
          ...(block.textKind === undefined ? {} : { reasoning_kind: block.textKind }),
          provider_id: providerId,
          ...(block.signature === "" ? {} : { signature: block.signature }),
          ...(block.data === undefined ? {} : { redacted: true, data: block.data })
        }
      case "call": {
        const call = calls.finalizeCall(block.position)
        return {
          type: "function_call",
          id: block.itemId,
          call_id: call?.id ?? block.itemId,
          name: call?.name ?? "",
          arguments: call?.rawArguments ?? content,
          // server_tool_use and mcp_tool_use: Anthropic ran the tool
          ...(block.metadata === undefined ? {} : {
            // a server tool's call (its metadata says so); a client call keeps its own
            // fields (the caller of a call made by code execution) as metadata
            ...(block.metadata.server_tool === true ? { provider_executed: true } : {}),
            provider_metadata: block.metadata
          })
        }
      }
      case "result":
        return block.final
      case "compaction":
        return {
          type: "compaction",
          id: block.itemId,
          content,
          ...(block.metadata === undefined ? {} : { provider_metadata: block.metadata })
        }
    }
  }

  const close = (index: number, out: Out): void => {
    const block = blocks.get(index)
    blocks.delete(index)
    if (block === undefined || block.kind === "skipped" || !builder.isOpen(block.itemId)) return
    if (block.kind === "call") calls.anthropicStop(index)
    builder.done(out, block.itemId, finalOf(block))
  }

  const closeAll = (out: Out): void => {
    for (const index of [...blocks.keys()].sort((a, b) => a - b)) close(index, out)
  }

  const open = (index: number, block: ContentBlock, line: number, out: Out): WireDecodeError | undefined => {
    if (blocks.has(index)) return outOfOrder(line, `content_block_start for block ${index}, which is already open`)
    switch (block.type) {
      case "text": {
        const itemId = builder.openItem(out, "message", { initial_content: block.text })
        blocks.set(index, {
          kind: "message",
          itemId,
          citations: block.citations === undefined || block.citations === null ? undefined : [...block.citations]
        })
        return undefined
      }
      case "thinking": {
        // a summary of the thinking for Claude 4 and later models, the thinking itself otherwise
        const textKind = summarizesThinking(builder.modelId) ? "summary" : "raw"
        const itemId = builder.openItem(out, "reasoning", { initial_content: block.thinking, reasoning_kind: textKind })
        blocks.set(index, { kind: "reasoning", itemId, signature: block.signature ?? "", data: undefined, textKind })
        return undefined
      }
      case "redacted_thinking": {
        const itemId = builder.openItem(out, "reasoning")
        blocks.set(index, { kind: "reasoning", itemId, signature: "", data: block.data, textKind: undefined })
        return undefined
      }
      case "tool_use":
      case "server_tool_use":
      case "mcp_tool_use": {
        const metadata = block.type === "tool_use"
          // a caller other than the model itself (`direct`, which recent streams state)
          ? (block.caller === undefined || block.caller.type === "direct" ? undefined : { caller: block.caller })
          : serverMetadata(block.type, block.server_name === undefined ? {} : { server_name: block.server_name })
        if (calls.anthropicStart(index, block.id, block.name, block.input, metadata) !== "started") {
          // a repeated id is the same call: its block keeps adding to the open item
          const position = calls.position
          const first = [...blocks.values()].find((b) => b.kind === "call" && b.position === position)
          blocks.set(index, first ?? { kind: "skipped" })
          return undefined
        }
        const itemId = builder.openItem(out, "function_call", { name: block.name })
        blocks.set(index, { kind: "call", itemId, position: calls.position, metadata })
        return undefined
      }
      case "unknown_block":
        blocks.set(index, { kind: "skipped" })
        return undefined
      case "compaction": {
        const { content, type: _, ...rest } = block
        const itemId = builder.openItem(out, "compaction", { initial_content: content ?? "" })
        blocks.set(index, { kind: "compaction", itemId, metadata: Object.keys(rest).length === 0 ? undefined : rest })
        return undefined
      }
      case "tool_result": {
        const itemId = builder.openItem(out, "function_call_output")
        const output = block.content === undefined
          ? ""
          : typeof block.content === "string"
          ? block.content
          : JSON.stringify(block.content)
        const final: OutputItem.FunctionCallOutputItem = {
          type: "function_call_output",
          id: itemId,
          call_id: block.tool_use_id,
          output,
          success: resultSucceeded(block),
          provider_executed: true,
          provider_metadata: serverMetadata(block.block_type)
        }
        builder.delta(out, itemId, output)
        blocks.set(index, { kind: "result", itemId, final })
        return undefined
      }
    }
  }

  const delta = (index: number, delta: typeof Delta.Type, line: number, out: Out): WireDecodeError | undefined => {
    const block = blocks.get(index)
    if (block === undefined) return outOfOrder(line, `${delta.type} for block ${index}, which is not open`)
    if (block.kind === "skipped") return undefined
    switch (delta.type) {
      case "text_delta":
        if (block.kind !== "message") return mismatch(line, delta.type, block.kind, index)
        builder.delta(out, block.itemId, delta.text)
        return undefined
      case "thinking_delta":
        if (block.kind !== "reasoning") return mismatch(line, delta.type, block.kind, index)
        builder.delta(out, block.itemId, delta.thinking)
        return undefined
      case "signature_delta":
        if (block.kind !== "reasoning") return mismatch(line, delta.type, block.kind, index)
        block.signature += delta.signature
        return undefined
      case "input_json_delta": {
        if (block.kind !== "call") return mismatch(line, delta.type, block.kind, index)
        calls.anthropicPartial(index, delta.partial_json)
        builder.delta(out, block.itemId, delta.partial_json)
        return undefined
      }
      case "compaction_delta":
        if (block.kind !== "compaction") return mismatch(line, delta.type, block.kind, index)
        builder.delta(out, block.itemId, delta.content ?? "")
        return undefined
      case "citations_delta":
        if (block.kind !== "message") return mismatch(line, delta.type, block.kind, index)
        if (block.citations === undefined) block.citations = []
        block.citations.push(delta.citation)
        return undefined
      case "unknown_delta":
        return undefined
    }
  }

  const fail = (
    out: Out,
    error: ProviderError.ProviderError,
    reason: FinishReason.FinishReason,
    raw?: Json.JsonObject
  ): void => {
    closeAll(out)
    builder.error(out, error, raw)
    builder.finish(out, { finishReason: reason, usage: usage(rawUsage, builder.modelId) })
  }

  const onChunk = (chunk: StreamChunk, line: number, out: Out): WireDecodeError | undefined => {
    if (stopLine !== undefined) return outOfOrder(line, `${chunk.type} after message_stop (line ${stopLine})`)
    if (builder.isFinished) return undefined
    switch (chunk.type) {
      case "message_start":
        if (startLine !== undefined) {
          return outOfOrder(line, `a second message_start (the message started at line ${startLine})`)
        }
        startLine = line
        if (chunk.message.usage !== undefined && chunk.message.usage !== null) {
          rawUsage = mergeUsage(rawUsage, chunk.message.usage)
        }
        builder.start(out, chunk.message.model)
        return undefined
      case "content_block_start":
        return open(chunk.index, chunk.content_block, line, out)
      case "content_block_delta":
        return delta(chunk.index, chunk.delta, line, out)
      case "content_block_stop":
        if (!blocks.has(chunk.index)) {
          return outOfOrder(line, `content_block_stop for block ${chunk.index}, which is not open`)
        }
        close(chunk.index, out)
        return undefined
      case "message_delta":
        if (chunk.delta.stop_reason !== undefined && chunk.delta.stop_reason !== null) {
          stopReason = chunk.delta.stop_reason
        }
        if (chunk.usage !== undefined && chunk.usage !== null) rawUsage = mergeUsage(rawUsage, chunk.usage)
        if (chunk.delta.container !== undefined && chunk.delta.container !== null) container = chunk.delta.container
        return undefined
      case "message_stop": {
        stopLine = line
        if (stopReason === "refusal") {
          fail(
            out,
            ErrorClassification.contentBlocked("refusal", "Anthropic refused to continue (stop_reason refusal)"),
            "content-filter"
          )
          return undefined
        }
        closeAll(out)
        builder.finish(out, {
          finishReason: stopReason === null ? null : finishReason(stopReason),
          usage: usage(rawUsage, builder.modelId),
          ...(container === undefined ? {} : { providerMetadata: { container } })
        })
        return undefined
      }
      case "ping":
        return undefined
      case "error":
        // the wire's error object rides along as the error's `raw` (ProcessedChunk's originalError)
        fail(out, classifyError(chunk.error), "error", chunk.error)
        return undefined
    }
  }

  const onEnd = (out: Out): void => {
    if (builder.isFinished) return
    fail(out, ErrorClassification.truncated(providerId), "error")
  }

  return { onChunk, onEnd }
}

const decodeChunk = decodeData(providerId, StreamChunk)

const makeHandler = (options: NormalizeOptions | undefined) => (now: () => number): Handler => {
  const machine = makeMachine(options, now)
  return {
    onEvent: (event: Sse.SseEvent, out) => {
      const chunk = decodeChunk(event)
      return Result.isFailure(chunk) ? chunk.failure : machine.onChunk(chunk.success, event.line, out)
    },
    onEnd: machine.onEnd
  }
}

/**
 * Normalizes an Anthropic Messages SSE stream. In-stream `error` events and a
 * `refusal` stop become `response_error`s and end the turn with status `error`; a
 * stream that stops before `message_stop` keeps what arrived and ends with a
 * retryable `stream_truncated` error. The order is the wire's: a second `message_start`,
 * anything after `message_stop`, an event for a block that is not open and a block
 * opened twice fail with `WireDecodeError` `InvalidOrder` naming the event (events
 * after an `error` event, which ends the turn, are ignored).
 *
 * @since 0.1.0
 * @category normalizers
 */
export const normalize: Normalize = (options) => normalizeWith(makeHandler(options))

/**
 * `normalize` with the SSE framing in the same step, from the body's bytes.
 *
 * @since 0.3.0
 * @category normalizers
 */
export const decodeSse: DecodeSse = (options, sse) => decodeSseWith(makeHandler(options), sse)

const decodeResponse = decodeBody(providerId, Response)

/**
 * Decodes a non-streaming Messages response (or an error body) into the events the
 * stream of the same content produces.
 *
 * @since 0.1.0
 * @category normalizers
 */
export const normalizeResponse: NormalizeResponse = (body, options) =>
  Effect.clockWith((clock) => {
    const response = decodeResponse(body)
    if (Result.isFailure(response)) return Effect.fail(response.failure)
    const machine = makeMachine(options, () => clock.currentTimeMillisUnsafe())
    const message = response.success
    const out: Out = []
    const feed = (chunk: StreamChunk): WireDecodeError | undefined => machine.onChunk(chunk, 0, out)
    let failure: WireDecodeError | undefined
    if (message.type === "error") {
      failure = feed(message)
    } else {
      const chunks: Array<StreamChunk> = [
        {
          type: "message_start",
          message: { ...(message.model === undefined ? {} : { model: message.model }), usage: message.usage ?? null }
        }
      ]
      message.content.forEach((block, index) => {
        chunks.push({ type: "content_block_start", index, content_block: block }, { type: "content_block_stop", index })
      })
      const delta = {
        stop_reason: message.stop_reason ?? null,
        ...(message.container === undefined ? {} : { container: message.container })
      }
      chunks.push({ type: "message_delta", delta }, {
        type: "message_stop"
      })
      for (const chunk of chunks) {
        failure = feed(chunk)
        if (failure !== undefined) break
      }
    }
    if (failure !== undefined) return Effect.fail(failure)
    machine.onEnd(out)
    return Effect.succeed(out)
  })

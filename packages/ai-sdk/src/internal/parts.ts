import * as Schema from "effect/Schema"

const optional = <S extends Schema.Top>(schema: S) => Schema.optional(schema)
const metadata = { providerMetadata: optional(Schema.Unknown) }

/** @internal */
export const BlockStart = Schema.Struct({
  type: Schema.Literals(["text-start", "reasoning-start"]),
  id: Schema.String,
  ...metadata
})

/** `text` in `streamText`'s stream, `delta` in a model's `doStream` stream. @internal */
export const BlockDelta = Schema.Struct({
  type: Schema.Literals(["text-delta", "reasoning-delta"]),
  id: Schema.String,
  text: optional(Schema.String),
  delta: optional(Schema.String),
  ...metadata
})

/** @internal */
export const BlockEnd = Schema.Struct({
  type: Schema.Literals(["text-end", "reasoning-end"]),
  id: Schema.String,
  ...metadata
})

/** @internal */
export const ToolInputStart = Schema.Struct({
  type: Schema.Literal("tool-input-start"),
  id: Schema.String,
  toolName: Schema.String,
  providerExecuted: optional(Schema.Boolean),
  ...metadata
})

/** @internal */
export const ToolInputDelta = Schema.Struct({
  type: Schema.Literal("tool-input-delta"),
  id: Schema.String,
  delta: Schema.String
})

/** @internal */
export const ToolInputEnd = Schema.Struct({ type: Schema.Literal("tool-input-end"), id: Schema.String })

/** `input` is JSON text from `doStream`, the parsed value from `streamText`. @internal */
export const ToolCall = Schema.Struct({
  type: Schema.Literal("tool-call"),
  toolCallId: Schema.String,
  toolName: Schema.String,
  input: optional(Schema.Unknown),
  /** The provider ran the tool itself (web search, code execution, ...). */
  providerExecuted: optional(Schema.Boolean),
  ...metadata
})

/** `output` from `streamText`, `result` from `doStream`. @internal */
export const ToolResult = Schema.Struct({
  type: Schema.Literal("tool-result"),
  toolCallId: Schema.String,
  toolName: Schema.String,
  output: optional(Schema.Unknown),
  result: optional(Schema.Unknown),
  isError: optional(Schema.Boolean),
  preliminary: optional(Schema.Boolean),
  providerExecuted: optional(Schema.Boolean),
  ...metadata
})

/** @internal */
export const ToolError = Schema.Struct({
  type: Schema.Literal("tool-error"),
  toolCallId: Schema.String,
  toolName: Schema.String,
  error: optional(Schema.Unknown),
  providerExecuted: optional(Schema.Boolean)
})

/** @internal */
export const ResponseMetadata = Schema.Struct({
  type: Schema.Literal("response-metadata"),
  id: optional(Schema.String),
  modelId: optional(Schema.String)
})

/** A string in `streamText`'s stream, `{unified, raw}` from `doStream`. @internal */
export const Finish = Schema.Struct({
  type: Schema.Literal("finish"),
  finishReason: Schema.Union([Schema.String, Schema.Struct({ unified: Schema.String, raw: optional(Schema.String) })]),
  totalUsage: optional(Schema.Unknown),
  usage: optional(Schema.Unknown)
})

/** A source the model cites: a web page (`url`) or a document. @internal */
export const SourcePart = Schema.Struct({
  type: Schema.Literal("source"),
  sourceType: Schema.String,
  id: optional(Schema.String),
  url: optional(Schema.String),
  title: optional(Schema.String),
  filename: optional(Schema.String),
  mediaType: optional(Schema.String)
})

/** @internal */
export const ErrorPart = Schema.Struct({ type: Schema.Literal("error"), error: optional(Schema.Unknown) })

/** @internal */
export const Abort = Schema.Struct({ type: Schema.Literal("abort"), reason: optional(Schema.String) })

/** Every part Sluice reads. @internal */
export const Part = Schema.Union([
  BlockStart,
  BlockDelta,
  BlockEnd,
  ToolInputStart,
  ToolInputDelta,
  ToolInputEnd,
  ToolCall,
  ToolResult,
  ToolError,
  SourcePart,
  ResponseMetadata,
  Finish,
  ErrorPart,
  Abort
])

/** @internal */
export type Part = typeof Part.Type

/** The `type`s of `Part`. @internal */
export const readTypes: ReadonlySet<string> = new Set([
  "text-start",
  "text-delta",
  "text-end",
  "reasoning-start",
  "reasoning-delta",
  "reasoning-end",
  "tool-input-start",
  "tool-input-delta",
  "tool-input-end",
  "tool-call",
  "tool-result",
  "tool-error",
  "source",
  "response-metadata",
  "finish",
  "error",
  "abort"
])

const Count = optional(Schema.Union([Schema.Number, Schema.Null]))

/**
 * Usage in any of the AI SDK's shapes: `streamText`'s flat counts with details (v6+),
 * the older flat counts (v5), or a model's nested `{inputTokens: {total, noCache,
 * cacheRead, cacheWrite}, outputTokens: {total, text, reasoning}}`.
 *
 * @internal
 */
export const AnyUsage = Schema.Struct({
  inputTokens: optional(
    Schema.Union([
      Schema.Number,
      Schema.Null,
      Schema.Struct({ total: Count, noCache: Count, cacheRead: Count, cacheWrite: Count })
    ])
  ),
  outputTokens: optional(
    Schema.Union([Schema.Number, Schema.Null, Schema.Struct({ total: Count, text: Count, reasoning: Count })])
  ),
  inputTokenDetails: optional(Schema.Struct({ noCacheTokens: Count, cacheReadTokens: Count, cacheWriteTokens: Count })),
  outputTokenDetails: optional(Schema.Struct({ textTokens: Count, reasoningTokens: Count })),
  reasoningTokens: Count,
  cachedInputTokens: Count
})

/** What Sluice reads of an error value. @internal */
export const ErrorFields = Schema.Struct({
  name: optional(Schema.String),
  message: optional(Schema.String),
  statusCode: optional(Schema.Number),
  isRetryable: optional(Schema.Boolean),
  /** `APICallError.responseBody`: the provider's error body as text. */
  responseBody: optional(Schema.String),
  /** `APICallError.data`: the provider's error body, parsed. */
  data: optional(Schema.Unknown)
})

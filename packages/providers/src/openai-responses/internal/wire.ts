/**
 * The Responses wire: its schemas, their decoders, error classification and usage (the OpenAI Responses normalizer, `OpenAiResponses`).
 *
 * @internal
 */
import type { StreamEvent } from "@sluice/core"
import { Json, ProviderError, Usage } from "@sluice/core"
import * as Schema from "effect/Schema"
import { decodeValue } from "../../internal/wireJson.js"

// an error event as it came, for `originalError` (parsed JSON always passes)
export const isJson = Schema.is(Json.JsonValue)

export const provider = "openai-responses"

export type Out = Array<StreamEvent.StreamEvent>

export const optional = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(schema)
export const nullable = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))

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

export const ErrorDetails = Schema.Struct({
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
  incomplete_details: nullable(Schema.Struct({ reason: nullable(Schema.String) })),
  /** the request's tools, as the response echoes them (`{type, name?, ...}`) */
  tools: nullable(Schema.Array(Json.JsonValue))
}).annotate({ identifier: "Response" })

/**
 * @since 0.1.0
 * @category models
 */
export type Response = typeof Response.Type

export const Index = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
export const EventType = Schema.Struct({ type: Schema.String })
export const LifecycleEvent = Schema.Struct({ response: Response })
export const OutputItemEvent = Schema.Struct({ output_index: nullable(Index), item: RawOutputItem })
export const DeltaEvent = Schema.Struct({
  item_id: nullable(Schema.String),
  output_index: nullable(Index),
  delta: Schema.String
})
// the reasoning events: `.delta`, `.done`, `reasoning_summary_part.*`, `content_part.*`;
// gateways leave out `item_id` or the index at times
export const ReasoningEvent = Schema.Struct({
  item_id: nullable(Schema.String),
  output_index: nullable(Index),
  summary_index: nullable(Index),
  content_index: nullable(Index),
  delta: nullable(Schema.String),
  text: nullable(Schema.String),
  part: nullable(Schema.Struct({ type: nullable(Schema.String), text: nullable(Schema.String) }))
})
export const ErrorEvent = Schema.Struct({
  code: nullable(Schema.String),
  message: nullable(Schema.String),
  error: nullable(ErrorDetails)
})

export const ContentPart = Schema.StructWithRest(Schema.Struct({ type: Schema.String }), [
  Schema.Record(Schema.String, Json.JsonValue)
])
export const MessageWire = Schema.Struct({
  id: Schema.String,
  content: Schema.Array(ContentPart)
})
export const TextPart = Schema.Struct({ text: Schema.String })
export const ReasoningWire = Schema.Struct({
  id: Schema.String,
  summary: nullable(Schema.Array(TextPart)),
  content: nullable(Schema.Array(TextPart)),
  encrypted_content: nullable(Schema.String)
})
export const ApprovalWire = Schema.Struct({
  name: Schema.String,
  arguments: Schema.String,
  server_label: optional(Schema.String)
})
export const FunctionCallWire = Schema.Struct({
  id: Schema.String,
  call_id: Schema.String,
  name: Schema.String,
  arguments: Schema.String
})

export const decodeEventType = decodeValue(provider, EventType)
export const decodeLifecycle = decodeValue(provider, LifecycleEvent)
export const decodeOutputItemEvent = decodeValue(provider, OutputItemEvent)
export const decodeDelta = decodeValue(provider, DeltaEvent)
export const decodeReasoningEvent = decodeValue(provider, ReasoningEvent)
export const decodeErrorEvent = decodeValue(provider, ErrorEvent)
export const decodeMessage = decodeValue(provider, MessageWire)
export const decodeReasoning = decodeValue(provider, ReasoningWire)
export const decodeFunctionCall = decodeValue(provider, FunctionCallWire)
export const decodeApproval = decodeValue(provider, ApprovalWire)
export const decodeResponse = decodeValue(provider, Response)

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

/**
 * The docs/views.md view of a stream: every event projected, on its own and synchronously,
 * to at most one `ProcessedChunk` (`text | function_call | error | done`), the shape a
 * chat orchestrator routes. `fromEvent` needs only the turn before the event (to know
 * an item's type and what it already streamed); `fromEvents` is the `Stream` stage.
 *
 * Which event gives which chunk:
 *
 * | event | chunk |
 * |---|---|
 * | `item_start` of a message with `initial_content` | `text` with that content |
 * | `item_delta` of a message | `text` with the delta |
 * | `item_done` of an agent message that holds more than its deltas, or carries a thought signature | `text` with the rest (maybe empty) and `metadata.thoughtSignature` (Gemini's `thoughtSignature` on a text part) |
 * | `item_start` / `item_delta` of reasoning | `text` with empty `content` and `thoughts: [{text, kind?}]` |
 * | `item_done` of reasoning with a signature or redacted data | `text` with empty `content`, `thoughts: [{text, kind?, signature?, redacted?}]` and `metadata.thoughtSignature` |
 * | `item_done` of a function call the caller must run | `function_call` with `{name, args, id, thoughtSignature?}`; Gemini's `thoughtSignature` comes from the item's `provider_metadata` |
 * | `item_done` of a call the provider ran (`provider_executed`) | none: there is nothing for the caller to run |
 * | `item_error`, `response_error` | `error` with the `ProviderError` shape; `originalError` is the error's `raw` (the provider's own error, when it arrived inside the stream) |
 * | `response_done` | `done` with `metadata: {finishReason, usage?}` |
 * | anything else (`response_start`, argument deltas, tool results, cancellations, empty text) | none |
 *
 * A thought's `kind` is the reasoning kind its event states (the delta's, else its item
 * start's; for an `item_done`, the final item's, else the start's), left out when none
 * does (it is then raw): `thoughtSegments` folds chunks into the summary segments and
 * the raw segments.
 *
 * Content-blocked responses reach this view already as `response_error` events of type
 * `content_blocked` (the provider normalizers classify them), so they become `error`
 * chunks with `retryable: false`.
 *
 * @since 0.3.0
 */
import { Accumulator, type AccumulatorError, ProviderErrors, Turn } from "@sluice/accumulator"
import type { StreamEvent } from "@sluice/core"
import { FinishReason, Json, OutputItem, ProviderError as CoreProviderError, Usage } from "@sluice/core"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/**
 * A piece of the model's thinking: its text, its `kind` when stated (`summary`, a
 * summary the provider wrote, or `raw` thinking; absent is raw; since 0.2.0), and what
 * the provider needs to verify it later (`signature`, or `redacted` for thinking the
 * provider withheld).
 *
 * @since 0.3.0
 * @category schemas
 */
export const ThoughtLogEntry = Schema.Struct({
  text: Schema.String,
  kind: Schema.optionalKey(OutputItem.ReasoningKind),
  signature: Schema.optionalKey(Schema.String),
  redacted: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "ThoughtLogEntry" })

/**
 * @since 0.3.0
 * @category models
 */
export type ThoughtLogEntry = typeof ThoughtLogEntry.Type

/**
 * A provider-agnostic function call. `args` is the parsed argument object
 * (`{"_invalid_arguments": "<raw>"}` when the text was not a JSON object); `id` is the
 * provider's call id; `thoughtSignature` is Gemini's, which must go back with the call.
 *
 * @since 0.3.0
 * @category schemas
 */
export const FunctionCall = Schema.Struct({
  name: Schema.String,
  args: Json.JsonObject,
  id: Schema.optionalKey(Schema.String),
  thoughtSignature: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "FunctionCall" })

/**
 * @since 0.3.0
 * @category models
 */
export type FunctionCall = typeof FunctionCall.Type

/**
 * The docs/views.md error shape: a classified `type`, `retryable`, the provider's `code` and
 * `message`, and the raw error as `originalError` when there is one (for logs only).
 *
 * @since 0.3.0
 * @category schemas
 */
export const ProviderError = Schema.Struct({
  type: CoreProviderError.ProviderErrorType,
  message: Schema.String,
  retryable: Schema.Boolean,
  code: Schema.String,
  status: Schema.optionalKey(Schema.Int),
  retryAfterMs: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  originalError: Schema.optionalKey(Schema.Unknown)
}).annotate({ identifier: "ProcessedChunk.ProviderError" })

/**
 * @since 0.3.0
 * @category models
 */
export type ProviderError = typeof ProviderError.Type

/**
 * Terminal metadata: the finish reason (on `done`), the turn's usage when it has one,
 * and a reasoning signature.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Metadata = Schema.Struct({
  finishReason: Schema.optionalKey(Schema.NullOr(FinishReason.FinishReason)),
  thoughtSignature: Schema.optionalKey(Schema.String),
  usage: Schema.optionalKey(Usage.Usage)
}).annotate({ identifier: "ProcessedChunk.Metadata" })

/**
 * @since 0.3.0
 * @category models
 */
export type Metadata = typeof Metadata.Type

const extras = {
  thoughts: Schema.optionalKey(Schema.Array(ThoughtLogEntry)),
  metadata: Schema.optionalKey(Metadata)
}

/**
 * `text | function_call | error | done`; any of them may carry `thoughts` and
 * `metadata`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ProcessedChunk = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text"), content: Schema.String, ...extras }),
  Schema.Struct({ type: Schema.Literal("function_call"), functionCall: FunctionCall, ...extras }),
  Schema.Struct({ type: Schema.Literal("error"), error: ProviderError, ...extras }),
  Schema.Struct({ type: Schema.Literal("done"), ...extras })
]).annotate({ identifier: "ProcessedChunk" })

/**
 * @since 0.3.0
 * @category models
 */
export type ProcessedChunk = typeof ProcessedChunk.Type

/**
 * The error shape of a `ProviderError`, keeping its raw cause as `originalError`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const providerError = (error: CoreProviderError.ProviderError): ProviderError => ({
  type: error.type,
  message: error.message,
  retryable: error.retryable,
  code: error.code,
  ...(error.status === undefined ? {} : { status: error.status }),
  ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
  ...(error.raw === undefined ? {} : { originalError: error.raw })
})

/**
 * An `error` chunk for a `ProviderError` met outside the event stream (a request that
 * failed before streaming, say).
 *
 * @since 0.3.0
 * @category constructors
 */
export const fromProviderError = (error: CoreProviderError.ProviderError): ProcessedChunk => ({
  type: "error",
  error: providerError(error)
})

const thoughts = (text: string, kind: OutputItem.ReasoningKind | undefined): Option.Option<ProcessedChunk> =>
  text === ""
    ? Option.none()
    : Option.some({ type: "text", content: "", thoughts: [kind === undefined ? { text } : { text, kind }] })

const text = (content: string): Option.Option<ProcessedChunk> =>
  content === "" ? Option.none() : Option.some({ type: "text", content })

const stringField = (metadata: Json.JsonObject | undefined, key: string): string | undefined => {
  const value = metadata?.[key]
  return typeof value === "string" ? value : undefined
}

const rest = (full: string, streamed: string): string => (full.startsWith(streamed) ? full.slice(streamed.length) : "")

/**
 * The chunk of one event, given the turn before it. Pure and synchronous.
 *
 * @since 0.3.0
 * @category projections
 */
export const fromEvent = (before: Turn.Turn, event: StreamEvent.StreamEvent): Option.Option<ProcessedChunk> => {
  const payload = event.payload
  switch (payload.type) {
    case "item_start":
      if (payload.item_type === "message") return text(payload.initial_content ?? "")
      if (payload.item_type === "reasoning") return thoughts(payload.initial_content ?? "", payload.reasoning_kind)
      return Option.none()
    case "item_delta": {
      const item = Turn.item(before, payload.item_id)
      if (item?.type === "message") return text(payload.delta_content)
      if (item?.type === "reasoning") {
        return thoughts(payload.delta_content, payload.reasoning_kind ?? item.reasoningKind)
      }
      return Option.none()
    }
    case "item_done": {
      const final = payload.final_item
      const started = Turn.item(before, payload.item_id)
      const streamed = started?.content ?? ""
      switch (final.type) {
        case "message": {
          if (final.origin !== "agent") return Option.none()
          const thoughtSignature = stringField(final.provider_metadata, "thoughtSignature")
          const remainder = rest(final.content, streamed)
          return thoughtSignature === undefined
            ? text(remainder)
            : Option.some({ type: "text", content: remainder, metadata: { thoughtSignature } })
        }
        case "reasoning": {
          const signature = final.signature ?? stringField(final.provider_metadata, "thoughtSignature")
          const remainder = rest(final.content, streamed)
          const kind = final.reasoning_kind ?? started?.reasoningKind
          if (signature === undefined && final.redacted !== true) return thoughts(remainder, kind)
          const entry: ThoughtLogEntry = {
            text: remainder,
            ...(kind === undefined ? {} : { kind }),
            ...(signature === undefined ? {} : { signature }),
            ...(final.redacted === true ? { redacted: true } : {})
          }
          return Option.some({
            type: "text",
            content: "",
            thoughts: [entry],
            ...(signature === undefined ? {} : { metadata: { thoughtSignature: signature } })
          })
        }
        case "function_call": {
          if (final.provider_executed === true) return Option.none()
          const thoughtSignature = stringField(final.provider_metadata, "thoughtSignature")
          return Option.some({
            type: "function_call",
            functionCall: {
              name: final.name,
              args: Json.parseArguments(final.arguments),
              id: final.call_id,
              ...(thoughtSignature === undefined ? {} : { thoughtSignature })
            }
          })
        }
        default:
          return Option.none()
      }
    }
    case "item_error":
    case "response_error":
      return Option.some({ type: "error", error: providerError(ProviderErrors.fromErrorObject(payload.error)) })
    case "response_done":
      return Option.some({
        type: "done",
        metadata: {
          finishReason: payload.finish_reason,
          ...(payload.usage === undefined ? {} : { usage: payload.usage })
        }
      })
    default:
      return Option.none()
  }
}

/**
 * The thoughts of some chunks, in order, kept apart by kind: `thoughtSummarySegments`
 * (the summaries the provider wrote) and `thoughtRawSegments` (raw thinking, and
 * thoughts of no stated kind). Empty texts are left out.
 *
 * @since 0.3.0
 * @category folding
 */
export const thoughtSegments = (chunks: Iterable<ProcessedChunk>): {
  readonly thoughtSummarySegments: ReadonlyArray<string>
  readonly thoughtRawSegments: ReadonlyArray<string>
} => {
  const thoughtSummarySegments: Array<string> = []
  const thoughtRawSegments: Array<string> = []
  for (const chunk of chunks) {
    for (const thought of chunk.thoughts ?? []) {
      if (thought.text === "") continue
      ;(thought.kind === "summary" ? thoughtSummarySegments : thoughtRawSegments).push(thought.text)
    }
  }
  return { thoughtSummarySegments, thoughtRawSegments }
}

/**
 * A `Stream` transformer from StreamEvents to `ProcessedChunk`s, one per event that
 * has one. Fails with `AccumulatorError` on out-of-order events.
 *
 * @since 0.3.0
 * @category stages
 */
export const fromEvents = <E, R>(
  self: Stream.Stream<StreamEvent.StreamEvent, E, R>
): Stream.Stream<ProcessedChunk, E | AccumulatorError.AccumulatorError, R> =>
  self.pipe(
    Accumulator.accumulate,
    Stream.mapAccum(() => Turn.empty, (before, step) => {
      const chunk = fromEvent(before, step.event)
      return [step.turn, Option.isSome(chunk) ? [chunk.value] : []] as const
    })
  )

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
 * `function_call_output` with what it gave. The client calls of their own kind keep the
 * whole item in `provider_metadata.item` and are named after their tool: a
 * `custom_tool_call` (its free-text input as `{"input": ...}`; provider-executed when
 * its name is not among the request's tools, as xAI's X Search streams its own tools),
 * an `apply_patch_call`
 * (`apply_patch`, its operation), a `local_shell_call` (`local_shell`) and a
 * `shell_call` (`shell`) with their `action` as sent, a client `tool_search_call`, a
 * `computer_call`. A
 * `shell_call` in a hosted container and a server `tool_search_call` are OpenAI's: their
 * output items in the stream become their provider-executed results. An
 * `mcp_approval_request` is an `approval_request` item, never a tool call. Reasoning
 * text from every source (deltas, `.done` events, the finished item) is folded once per
 * part, summaries and raw `reasoning_text` each stated as such. Any other output item
 * becomes a `function_call` named after its type, with the whole item in
 * `provider_metadata.item`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { decodeSseWith, type Handler, normalizeWith } from "../internal/normalizerChannel.js"
import { isDoneSentinel, parseJson } from "../internal/wireJson.js"

import type { DecodeSse, Normalize, NormalizeOptions, NormalizeResponse } from "../Normalizer.js"
import { WireDecodeError } from "../WireDecodeError.js"
import { ResponsesTurn } from "./internal/turn.js"
import {
  classifyError,
  decodeDelta,
  decodeErrorEvent,
  decodeEventType,
  decodeLifecycle,
  decodeOutputItemEvent,
  decodeReasoningEvent,
  decodeResponse,
  isJson,
  type Out,
  provider
} from "./internal/wire.js"

/**
 * The `usage` object of a response. `input_tokens` includes the cached tokens and
 * `output_tokens` includes the reasoning tokens. Other fields are kept for `raw`.
 *
 * @since 0.1.0
 * @category schemas
 */
export { ResponseUsage } from "./internal/wire.js"

/**
 * An output item as it arrives: a JSON object with a `type`, read further by type.
 *
 * @since 0.1.0
 * @category schemas
 */
export { RawOutputItem } from "./internal/wire.js"

/**
 * The `response` object: the non-streaming body, and the payload of the streamed
 * lifecycle events (`response.created`, `response.completed`, ...).
 *
 * @since 0.1.0
 * @category schemas
 */
export { Response } from "./internal/wire.js"

/**
 * Classifies an in-stream error (`error` event, `response.failed`) by its code, with
 * the one classifier every provider shares (`ProviderError.classify`).
 *
 * @since 0.1.0
 * @category errors
 */
export { classifyError } from "./internal/wire.js"

/**
 * The hub usage of a Responses `usage` object: `input` without the cached tokens,
 * `cacheRead` the cached tokens, `output` with the reasoning tokens, `reasoning` the
 * reasoning tokens. Missing usage is zeros.
 *
 * @since 0.1.0
 * @category usage
 */
export { toUsage } from "./internal/wire.js"

const deltaFallback: Record<string, string> = {
  "response.output_text.delta": "message",
  "response.refusal.delta": "message",
  "response.function_call_arguments.delta": "function_call",
  "response.custom_tool_call_input.delta": "custom_tool_call",
  "response.apply_patch_call_operation_diff.delta": "apply_patch_call",
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
  // `[DONE]` came (OpenRouter's Responses endpoint ends with it): the body is over
  let closed = false
  return {
    onEvent: (event, out) => {
      // after an `error` event, which ends the turn, the rest is ignored; so is what follows `[DONE]`
      if (closed || (ended === undefined && turn.isOver)) return undefined
      if (isDoneSentinel(event.data)) {
        closed = true
        // before a terminal event, the sentinel ends the body as a cut-off stream would end
        if (!turn.isOver) turn.truncate(out)
        return undefined
      }
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
          const index = decoded.success.output_index ?? undefined
          if (type === "response.output_item.added") {
            turn.open(out, decoded.success.item, undefined, index)
            return undefined
          }
          return turn.done(out, decoded.success.item, event.line, undefined, index)
        }
        case "response.reasoning_summary_part.added":
        case "response.reasoning_summary_part.done":
        case "response.reasoning_summary_text.delta":
        case "response.reasoning_summary_text.done":
        case "response.reasoning_text.delta":
        case "response.reasoning_text.done":
        case "response.content_part.done": {
          const decoded = decodeReasoningEvent(json.success, event.line, what)
          if (Result.isFailure(decoded)) return decoded.failure
          const e = decoded.success
          if (type === "response.content_part.done" && e.part?.type !== "reasoning_text") return undefined
          const raw = type.startsWith("response.reasoning_text") || type === "response.content_part.done"
          const text = type.endsWith(".delta") ? e.delta : e.text ?? e.part?.text
          if (text === undefined || text === null) {
            if (type.endsWith(".delta")) {
              return new WireDecodeError({
                provider,
                line: event.line,
                reason: "UnexpectedShape",
                message: `${provider} ${what} at line ${event.line} has no delta`
              })
            }
            return undefined
          }
          const key = turn.target(out, e.item_id ?? undefined, e.output_index ?? undefined, "reasoning")
          turn.reasoningText(
            out,
            key,
            raw ? "raw" : "summary",
            (raw ? e.content_index : e.summary_index) ?? 0,
            text,
            type.endsWith(".delta") ? "delta" : "done"
          )
          return undefined
        }
        case "error": {
          const decoded = decodeErrorEvent(json.success, event.line, what)
          if (Result.isFailure(decoded)) return decoded.failure
          const nested = decoded.success.error
          const code = decoded.success.code ?? nested?.code ?? nested?.type ?? "error"
          const message = decoded.success.message ?? nested?.message ?? "the provider reported an error"
          turn.fail(out, classifyError(code, message, json.success), isJson(json.success) ? json.success : undefined)
          return undefined
        }
        default: {
          const fallback = deltaFallback[type]
          if (fallback === undefined) return undefined
          const decoded = decodeDelta(json.success, event.line, what)
          if (Result.isFailure(decoded)) return decoded.failure
          const { delta, item_id, output_index } = decoded.success
          turn.delta(out, turn.target(out, item_id ?? undefined, output_index ?? undefined, fallback), delta)
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
 * arrived. A `data: [DONE]` line (OpenRouter's Responses endpoint ends with one, as
 * Chat Completions streams do) ends the body: what follows it is ignored. A second `response.created`, and any event after `response.completed`,
 * `response.incomplete` or `response.failed`, fail with `WireDecodeError`
 * `InvalidOrder` naming the event (events after an `error` event are ignored).
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

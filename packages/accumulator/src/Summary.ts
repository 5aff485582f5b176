/**
 * The turn summary: the one JSON object `sluice normalize` prints (docs/cli.md#normalize), for scripts and for comparing turns.
 *
 * @since 0.1.0
 */
import { FinishReason, Json, ProviderError } from "@sluice/core"
import * as Schema from "effect/Schema"
import type * as Turn from "./Turn.js"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

const ToolCall = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  arguments: Json.JsonObject,
  // set when the arguments are malformed: the call must not be run (since 0.3.0)
  invalid: Schema.optionalKey(Schema.Struct({ raw: Schema.String, error: Schema.String }))
})

const ApprovalRequest = Schema.Struct({
  id: Schema.String,
  serverLabel: Schema.optionalKey(Schema.String),
  name: Schema.String,
  arguments: Json.JsonObject
})

/**
 * `{provider, status, text, reasoning, reasoningSummary, reasoningRaw, toolCalls,
 * providerToolCalls, approvalRequests, finishReason, usage, errors}`. `reasoning` is all
 * the reasoning text; `reasoningSummary` and `reasoningRaw` (since 0.2.0) keep the
 * summaries the provider wrote apart from the raw thinking (text of no stated kind is
 * raw), so `reasoning` holds both. `toolCalls` are only the calls the caller must run;
 * `providerToolCalls` are the calls the provider ran itself (web search, code
 * execution, ...: `provider_executed`), listed for information, never to be run.
 * `approvalRequests` (since 0.3.0) are the questions the caller must answer (approve or
 * deny) in the next request: `id` is the provider's request id the answer names,
 * `serverLabel` the remote server, `name` and `arguments` the tool call it would make.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Summary = Schema.Struct({
  provider: Schema.String,
  status: Schema.Literals(["pending", "streaming", "complete", "error", "aborted", "cancelled"]),
  text: Schema.String,
  reasoning: Schema.String,
  reasoningSummary: Schema.String,
  reasoningRaw: Schema.String,
  toolCalls: Schema.Array(ToolCall),
  providerToolCalls: Schema.Array(ToolCall),
  approvalRequests: Schema.Array(ApprovalRequest),
  finishReason: Schema.NullOr(FinishReason.FinishReason),
  usage: Schema.Struct({
    input: Count,
    output: Count,
    cacheRead: Count,
    cacheWrite: Count,
    reasoning: Count,
    total: Count
  }),
  errors: Schema.Array(
    Schema.Struct({
      type: ProviderError.ProviderErrorType,
      code: Schema.String,
      message: Schema.String,
      retryable: Schema.Boolean
    })
  )
}).annotate({ identifier: "Summary" })

/**
 * @since 0.1.0
 * @category models
 */
export type Summary = typeof Summary.Type

/**
 * Summarizes a turn. `text` and `reasoning` concatenate the agent's message items and
 * the reasoning items (finished items, or what arrived of unfinished ones); tool call
 * arguments are parsed, malformed ones kept as `{"_invalid_arguments": "<raw>"}` and
 * marked `invalid` (`{raw, error}`: a runner refuses such a call, answering with a tool
 * error); calls
 * the provider ran (`provider_executed`) go to `providerToolCalls`, not `toolCalls`;
 * approval requests go to `approvalRequests`, never to either list of calls.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromTurn = (turn: Turn.Turn): Summary => {
  let text = ""
  let reasoning = ""
  let reasoningSummary = ""
  let reasoningRaw = ""
  const addReasoning = (item: Turn.TurnItem) => {
    reasoning += item.content
    reasoningSummary += item.reasoning?.summary ?? ""
    reasoningRaw += item.reasoning?.raw ?? item.content
  }
  const toolCalls: Array<Summary["toolCalls"][number]> = []
  const providerToolCalls: Array<Summary["providerToolCalls"][number]> = []
  const approvalRequests: Array<Summary["approvalRequests"][number]> = []
  for (const item of turn.items) {
    if (item.status === "cancelled") continue
    const final = item.final
    if (final === undefined) {
      if (item.type === "message") text += item.content
      else if (item.type === "reasoning") addReasoning(item)
      continue
    }
    switch (final.type) {
      case "message":
        if (final.origin === "agent") text += final.content
        break
      case "reasoning":
        addReasoning(item)
        break
      case "function_call":
        {
          const invalid = Json.invalidArguments(final.arguments)
          ;(final.provider_executed === true ? providerToolCalls : toolCalls).push({
            id: final.call_id,
            name: final.name,
            arguments: Json.parseArguments(final.arguments),
            ...(invalid === undefined ? {} : { invalid })
          })
        }
        break
      case "approval_request":
        approvalRequests.push({
          id: final.provider_id,
          ...(final.server_label === undefined ? {} : { serverLabel: final.server_label }),
          name: final.name,
          arguments: Json.parseArguments(final.arguments)
        })
        break
      default:
        break
    }
  }
  const { cacheRead, cacheWrite, input, output, reasoning: reasoningTokens, total } = turn.usage
  return {
    provider: turn.providerId ?? "unknown",
    status: turn.status,
    text,
    reasoning,
    reasoningSummary,
    reasoningRaw,
    toolCalls,
    providerToolCalls,
    approvalRequests,
    finishReason: turn.finishReason,
    usage: { input, output, cacheRead, cacheWrite, reasoning: reasoningTokens, total },
    errors: turn.errors.map((error) => ({
      type: error.type ?? "api_error",
      code: error.code,
      message: error.message,
      retryable: error.retryable ?? false
    }))
  }
}

/**
 * A finished turn into the next request: the turn's final items (what
 * `Turn.finalItems` of `@sluice/accumulator` returns, or the `final_item`s of its
 * `item_done` events) become an assistant message that keeps everything the provider
 * demands back, followed by the results of its tool calls.
 *
 * - reasoning keeps its `signature`, redacted `data`, `encrypted_content` and (for
 *   the Responses API) its item id, tagged with the provider that issued them;
 *   OpenRouter's `reasoning_details` follow it as a `provider_item` part of type
 *   `reasoning_details` (the entries as they came, sent back as they are); Responses
 *   reasoning with raw `reasoning_text` goes back as the reasoning item itself (a
 *   `provider_item`), its summary and raw text in their own parts;
 * - tool calls keep their id, name, raw argument text and `provider_metadata` (Gemini
 *   `thoughtSignature`); text keeps its `thoughtSignature` too;
 * - provider-executed tool calls and results (`provider_executed`: Responses
 *   `web_search_call` and the like, Anthropic `server_tool_use` and its
 *   `*_tool_result`, Gemini `executableCode` / `codeExecutionResult`) and Gemini parts
 *   Sluice has no item for become `provider_item` parts for the same provider, as the
 *   provider sent them (a Responses hosted tool item whole again: the call's item with
 *   the result fields its output restores; the output itself is not sent apart);
 * - a `compaction` item (Anthropic's summary of the conversation so far) becomes a
 *   `provider_item` part, the `compaction` block the API requires back;
 * - a provider-executed call with no such form (an AI SDK part) is left out: the
 *   provider ran it, and no result can be sent for it (`toolResults` refuses one);
 * - a client call of a Responses item kind (`custom_tool_call`, `apply_patch_call`,
 *   `local_shell_call`, a local `shell_call`, a client `tool_search_call`, a
 *   `computer_call`) is a tool call
 *   whose `providerMetadata.item` is the item as it came: the Responses request sends
 *   it back whole and its result as that kind's output item;
 * - an `approval_request` (Responses `mcp_approval_request`) goes back as the request
 *   item, a `provider_item` part; the answers follow it (`approvalResponses`);
 * - `error` and `script_execution` items are not part of what the model said and are
 *   left out.
 *
 * @since 0.1.0
 */
import { Json, OutputItem, ToolCallId } from "@sluice/core"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { AssistantMessage, AssistantPart, LlmRequest, Message, ToolResult } from "./LlmRequest.js"

/**
 * A tool result refers to a call the turn did not make (or one the provider ran itself).
 *
 * @since 0.1.0
 * @category errors
 */
export class RoundTripError extends Schema.TaggedError<RoundTripError>()("RoundTripError", {
  callId: Schema.String,
  message: Schema.String
}) {}

/**
 * The result of one of the turn's tool calls, by call id (provider or history form).
 *
 * @since 0.1.0
 * @category models
 */
export interface ToolOutput {
  readonly callId: string
  readonly output: string
  readonly isError?: boolean | undefined
}

/**
 * The finished turn: its final items and the provider that produced them (the
 * `provider_id` of its `response_start`, `Turn.providerId`).
 *
 * @since 0.1.0
 * @category models
 */
export interface FinishedTurn {
  readonly provider: string
  readonly items: ReadonlyArray<OutputItem.OutputItem>
  /**
   * The `provider_metadata` of the turn's `response_done` (`Turn.providerMetadata`):
   * an Anthropic code-execution `container` there becomes the next request's `container`.
   *
   * @since 0.3.0
   */
  readonly providerMetadata?: Json.JsonObject | undefined
}

/** The id of the code-execution container the turn ran in (Anthropic `container.id`), if any. */
const containerOf = (turn: FinishedTurn): string | undefined => {
  const container = turn.providerMetadata?.container
  return Json.isObject(container) ? stringOf(container, "id") : undefined
}

const stringOf = (metadata: Json.JsonObject | undefined, key: string): string | undefined => {
  const value = metadata?.[key]
  return typeof value === "string" ? value : undefined
}

/**
 * The result fields of the turn's provider-executed outputs that name them
 * (`provider_metadata.restores`: a Responses hosted tool's item split in two), by call id.
 */
const restoredFields = (items: ReadonlyArray<OutputItem.OutputItem>): ReadonlyMap<string, Json.JsonObject> => {
  const fields = new Map<string, Json.JsonObject>()
  for (const item of items) {
    const restores = item.type === "function_call_output" && item.provider_executed === true
      ? item.provider_metadata?.restores
      : undefined
    if (item.type !== "function_call_output" || !Array.isArray(restores)) continue
    const output = Json.parseOrUndefined(item.output)
    if (!Json.isObject(output)) continue
    const keys = new Set(restores.filter((key): key is string => typeof key === "string"))
    fields.set(item.call_id, Object.fromEntries(Object.entries(output).filter(([key]) => keys.has(key))))
  }
  return fields
}

const part = (
  item: OutputItem.OutputItem,
  provider: string,
  restored: ReadonlyMap<string, Json.JsonObject>
): AssistantPart | undefined => {
  const metadata = "provider_metadata" in item ? item.provider_metadata : undefined
  switch (item.type) {
    case "message": {
      const raw = metadata?.part
      if (Json.isObject(raw) && item.content === "") return { _tag: "provider_item", provider, item: raw }
      return {
        _tag: "text",
        text: item.content,
        provider,
        ...(metadata === undefined ? {} : { providerMetadata: metadata })
      }
    }
    case "reasoning": {
      const issuer = item.provider_id ?? provider
      const summaries = metadata?.summary
      const raws = metadata?.reasoning_text
      if (
        issuer === "openai-responses" &&
        (item.reasoning_kind === "raw" || (Array.isArray(summaries) && Array.isArray(raws)))
      ) {
        // raw reasoning text goes back as the item's `content` parts, apart from its `summary` parts
        const texts = (value: Json.JsonValue | undefined, fallback: ReadonlyArray<string>) =>
          Array.isArray(value) ? value.filter((text): text is string => typeof text === "string") : fallback
        return {
          _tag: "provider_item",
          provider: issuer,
          item: {
            type: "reasoning",
            id: item.id,
            summary: texts(summaries, []).map((text) => ({ type: "summary_text", text })),
            content: texts(raws, item.content === "" ? [] : [item.content]).map((text) => ({
              type: "reasoning_text",
              text
            })),
            ...(item.encrypted_content === undefined ? {} : { encrypted_content: item.encrypted_content })
          }
        }
      }
      return {
        _tag: "reasoning",
        text: item.content,
        provider: issuer,
        ...(issuer === "openai-responses" ? { id: item.id } : {}),
        ...(item.signature === undefined ? {} : { signature: item.signature }),
        ...(item.redacted === true && item.data !== undefined ? { redactedData: item.data } : {}),
        ...(item.encrypted_content === undefined ? {} : { encryptedContent: item.encrypted_content })
      }
    }
    case "function_call": {
      const toolCall = {
        _tag: "tool_call" as const,
        id: item.call_id,
        name: item.name,
        arguments: item.arguments,
        provider,
        ...(metadata === undefined ? {} : { providerMetadata: metadata })
      }
      // a client call of a Responses item kind (`custom_tool_call`, `apply_patch_call`,
      // a shell call, ...): a tool call to answer, whose item goes back whole to its
      // provider (and whose result takes that kind's output item there)
      if (metadata !== undefined && Json.isObject(metadata.item) && item.provider_executed !== true) return toolCall
      const hosted = metadata?.item ?? metadata?.part
      if (Json.isObject(hosted)) {
        return { _tag: "provider_item", provider, item: { ...hosted, ...restored.get(item.call_id) } }
      }
      if (metadata?.server_tool === true) {
        const serverName = stringOf(metadata, "server_name")
        return {
          _tag: "provider_item",
          provider,
          item: {
            type: stringOf(metadata, "block_type") ?? "server_tool_use",
            id: item.call_id,
            name: item.name,
            input: Json.parseArguments(item.arguments),
            ...(serverName === undefined ? {} : { server_name: serverName })
          }
        }
      }
      // a call the provider ran, in no form its provider takes back (an AI SDK part, say):
      // sent as a client tool call it would demand a result the caller does not have
      if (item.provider_executed === true) return undefined
      return toolCall
    }
    case "function_call_output": {
      const part = metadata?.part ?? metadata?.item
      if (item.provider_executed === true && Json.isObject(part)) return { _tag: "provider_item", provider, item: part }
      const blockType = stringOf(metadata, "block_type")
      if (metadata?.server_tool !== true || blockType === undefined) return undefined
      return {
        _tag: "provider_item",
        provider,
        item: { type: blockType, tool_use_id: item.call_id, content: Json.parseOrString(item.output) }
      }
    }
    case "compaction":
      // the Responses API's compaction item goes back whole (its `encrypted_content`);
      // Anthropic requires its compaction block back, in place of what it summarized
      return Json.isObject(metadata?.item)
        ? { _tag: "provider_item", provider, item: metadata.item }
        : { _tag: "provider_item", provider, item: { ...metadata, type: "compaction", content: item.content } }
    case "approval_request":
      // the request goes back before its answer (`approvalResponses`), as the provider sent it
      return {
        _tag: "provider_item",
        provider,
        item: {
          ...metadata,
          type: "mcp_approval_request",
          id: item.provider_id,
          ...(item.server_label === undefined ? {} : { server_label: item.server_label }),
          name: item.name,
          arguments: item.arguments
        }
      }
    case "error":
    case "script_execution":
      return undefined
  }
}

/**
 * What else an item needs back besides its part: OpenRouter's `reasoning_details` (kept
 * on an OpenAI-compatible reasoning item as they came), as a `provider_item` of type
 * `reasoning_details` for the issuing provider, right after the reasoning part.
 */
const extraParts = (item: OutputItem.OutputItem, provider: string): ReadonlyArray<AssistantPart> => {
  if (item.type !== "reasoning") return []
  const details = item.provider_metadata?.reasoning_details
  if (!Array.isArray(details) || details.length === 0) return []
  return [{
    _tag: "provider_item",
    provider: item.provider_id ?? provider,
    item: { type: "reasoning_details", reasoning_details: details }
  }]
}

/**
 * The assistant message of a finished turn.
 *
 * @since 0.1.0
 * @category conversions
 */
export const assistantMessage = (turn: FinishedTurn): AssistantMessage => {
  const restored = restoredFields(turn.items)
  return {
    _tag: "assistant",
    parts: turn.items.flatMap((item) => {
      const main = part(item, turn.provider, restored)
      return main === undefined ? [] : [main, ...extraParts(item, turn.provider)]
    })
  }
}

/**
 * The tool results of the turn's calls, each named after its call. A result for a
 * call the turn did not make, or for one the provider ran itself, fails with
 * `RoundTripError`.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toolResults = (
  turn: FinishedTurn,
  outputs: ReadonlyArray<ToolOutput>
): Result.Result<ReadonlyArray<ToolResult>, RoundTripError> => {
  const names = new Map<string, string>()
  for (const item of turn.items) {
    if (OutputItem.isClientToolCall(item)) names.set(ToolCallId.fromHistory(item.call_id), item.name)
  }
  const results: Array<ToolResult> = []
  for (const output of outputs) {
    const name = names.get(ToolCallId.fromHistory(output.callId))
    if (name === undefined) {
      return Result.fail(
        new RoundTripError({ callId: output.callId, message: `the turn made no tool call ${output.callId}` })
      )
    }
    results.push({
      callId: output.callId,
      name,
      output: output.output,
      ...(output.isError === true ? { isError: true } : {})
    })
  }
  return Result.succeed(results)
}

/**
 * The application's answer to one of the turn's approval requests (an
 * `approval_request` item): `requestId` is its `provider_id` (or its item id).
 *
 * @since 0.3.0
 * @category models
 */
export interface ApprovalAnswer {
  readonly requestId: string
  readonly approve: boolean
  readonly reason?: string | undefined
}

/**
 * The answers to the turn's approval requests, as the parts that carry them to their
 * provider: an OpenAI Responses `mcp_approval_response` (`approval_request_id`,
 * `approve`, `reason`) each, a `provider_item` part for the turn's provider, sent after
 * the request it answers (other providers leave them out). An answer to a request the
 * turn did not make fails with `RoundTripError`.
 *
 * @since 0.3.0
 * @category conversions
 */
export const approvalResponses = (
  turn: FinishedTurn,
  answers: ReadonlyArray<ApprovalAnswer>
): Result.Result<ReadonlyArray<AssistantPart>, RoundTripError> => {
  const requests = new Map<string, string>()
  for (const item of turn.items) {
    if (!OutputItem.isApprovalRequest(item)) continue
    requests.set(item.provider_id, item.provider_id)
    requests.set(item.id, item.provider_id)
  }
  const parts: Array<AssistantPart> = []
  for (const answer of answers) {
    const requestId = requests.get(answer.requestId)
    if (requestId === undefined) {
      return Result.fail(
        new RoundTripError({
          callId: answer.requestId,
          message: `the turn made no approval request ${answer.requestId}`
        })
      )
    }
    parts.push({
      _tag: "provider_item",
      provider: turn.provider,
      item: {
        type: "mcp_approval_response",
        approval_request_id: requestId,
        approve: answer.approve,
        ...(answer.reason === undefined ? {} : { reason: answer.reason })
      }
    })
  }
  return Result.succeed(parts)
}

/**
 * The messages that follow a finished turn: its assistant message (with the answers to
 * its approval requests at its end, see `approvalResponses`), then a tool message with
 * the given results (none when there are no results).
 *
 * @since 0.1.0
 * @category conversions
 */
export const messages = (
  turn: FinishedTurn,
  outputs: ReadonlyArray<ToolOutput> = [],
  approvals: ReadonlyArray<ApprovalAnswer> = []
): Result.Result<ReadonlyArray<Message>, RoundTripError> =>
  Result.flatMap(
    toolResults(turn, outputs),
    (results) =>
      Result.map(approvalResponses(turn, approvals), (answers): ReadonlyArray<Message> => {
        const assistant = assistantMessage(turn)
        const withAnswers: AssistantMessage = answers.length === 0
          ? assistant
          : { ...assistant, parts: [...assistant.parts, ...answers] }
        return results.length === 0 ? [withAnswers] : [withAnswers, { _tag: "tool", results }]
      })
  )

/**
 * The next request: `request` with the finished turn and the tool results appended,
 * and the code-execution `container` the turn ran in, when it names one.
 *
 * @since 0.1.0
 * @category conversions
 */
export const continueWith = (
  request: LlmRequest,
  turn: FinishedTurn,
  outputs: ReadonlyArray<ToolOutput> = [],
  approvals: ReadonlyArray<ApprovalAnswer> = []
): Result.Result<LlmRequest, RoundTripError> =>
  Result.map(messages(turn, outputs, approvals), (next) => {
    const container = containerOf(turn)
    return {
      ...request,
      ...(container === undefined ? {} : { container }),
      messages: [...request.messages, ...next]
    }
  })

/**
 * A finished turn into the next request: the turn's final items (what
 * `Turn.finalItems` of `@sluice/accumulator` returns, or the `final_item`s of its
 * `item_done` events) become an assistant message that keeps everything the provider
 * demands back, followed by the results of its tool calls.
 *
 * - reasoning keeps its `signature`, redacted `data`, `encrypted_content` and (for
 *   the Responses API) its item id, tagged with the provider that issued them;
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
      return {
        _tag: "tool_call",
        id: item.call_id,
        name: item.name,
        arguments: item.arguments,
        provider,
        ...(metadata === undefined ? {} : { providerMetadata: metadata })
      }
    }
    case "function_call_output": {
      const part = metadata?.part
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
      // Anthropic requires the compaction block back, in place of what it summarized
      return { _tag: "provider_item", provider, item: { ...metadata, type: "compaction", content: item.content } }
    case "error":
    case "script_execution":
      return undefined
  }
}

/**
 * The assistant message of a finished turn.
 *
 * @since 0.1.0
 * @category conversions
 */
export const assistantMessage = (turn: FinishedTurn): AssistantMessage => {
  const restored = restoredFields(turn.items)
  return { _tag: "assistant", parts: turn.items.flatMap((item) => part(item, turn.provider, restored) ?? []) }
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
 * The messages that follow a finished turn: its assistant message, then a tool
 * message with the given results (none when there are no results).
 *
 * @since 0.1.0
 * @category conversions
 */
export const messages = (
  turn: FinishedTurn,
  outputs: ReadonlyArray<ToolOutput> = []
): Result.Result<ReadonlyArray<Message>, RoundTripError> =>
  Result.map(
    toolResults(turn, outputs),
    (results): ReadonlyArray<Message> =>
      results.length === 0 ? [assistantMessage(turn)] : [assistantMessage(turn), { _tag: "tool", results }]
  )

/**
 * The next request: `request` with the finished turn and the tool results appended.
 *
 * @since 0.1.0
 * @category conversions
 */
export const continueWith = (
  request: LlmRequest,
  turn: FinishedTurn,
  outputs: ReadonlyArray<ToolOutput> = []
): Result.Result<LlmRequest, RoundTripError> =>
  Result.map(messages(turn, outputs), (next) => ({ ...request, messages: [...request.messages, ...next] }))

import type { OutputItem, StreamBMessage, StreamEvent, UITurnEvent, UIUpsert, Usage } from "@sluice/core"
import { Json, TurnEvents } from "@sluice/core"
import type * as Types from "effect/Types"
import type { ItemBuffer } from "../ItemBuffer.js"

/**
 * What every payload of one turn shares.
 *
 * @internal
 */
export interface TurnMeta {
  readonly turnId: string
  readonly threadId: string
  readonly modelId: string
  readonly providerId: string
}

/** @internal */
export type UIPayload = StreamBMessage.UIPayload

/** @internal */
export const uiItemType = (type: OutputItem.ItemType): UIUpsert.UIUpsertItemType => {
  switch (type) {
    case "function_call":
    case "script_execution":
      return "tool_call"
    case "function_call_output":
      return "tool_output"
    default:
      return type
  }
}

// Tool arguments: the parsed object, or the raw text when it is not a JSON object.
const toolArguments = (text: string): Json.JsonObject | string => {
  const parsed = Json.parseOrUndefined(text)
  return Json.isObject(parsed) ? parsed : text
}

const base = (
  meta: TurnMeta,
  itemId: string,
  itemType: UIUpsert.UIUpsertItemType,
  changeType: UIUpsert.UIUpsertChangeType,
  content: string
): Types.Mutable<UIUpsert.UIUpsert> => ({
  type: "item_upsert",
  turnId: meta.turnId,
  threadId: meta.threadId,
  itemId,
  itemType,
  changeType,
  content
})

/**
 * An upsert carrying a buffer's whole current content.
 *
 * @internal
 */
export const fromBuffer = (
  meta: TurnMeta,
  buffer: ItemBuffer,
  changeType: UIUpsert.UIUpsertChangeType
): UIUpsert.UIUpsert => {
  const upsert = base(meta, buffer.itemId, buffer.itemType, changeType, buffer.content)
  switch (buffer.itemType) {
    case "message":
      upsert.origin = buffer.origin ?? "agent"
      break
    case "reasoning":
    case "compaction":
      if (buffer.providerId !== undefined) upsert.providerId = buffer.providerId
      break
    case "tool_call":
    case "approval_request":
      if (buffer.toolName !== undefined) upsert.toolName = buffer.toolName
      if (buffer.content !== "") upsert.toolArguments = toolArguments(buffer.content)
      break
    case "tool_output":
      if (buffer.content !== "") upsert.toolOutput = Json.parseOrString(buffer.content)
      break
    case "error":
      break
  }
  if (buffer.callId !== undefined) upsert.callId = buffer.callId
  return upsert
}

/**
 * The `completed` upsert of a finished item, built from its final form.
 *
 * @internal
 */
export const fromFinalItem = (
  meta: TurnMeta,
  itemId: string,
  item: OutputItem.OutputItem,
  buffer: ItemBuffer | undefined
): UIUpsert.UIUpsert => {
  switch (item.type) {
    case "message":
      return {
        ...base(meta, itemId, "message", "completed", item.content),
        origin: item.origin,
        ...(item.sources === undefined || item.sources.length === 0 ? {} : { sources: item.sources })
      }
    case "reasoning":
      return {
        ...base(meta, itemId, "reasoning", "completed", item.content),
        providerId: item.provider_id ?? buffer?.providerId ?? meta.providerId
      }
    case "function_call":
      return {
        ...base(meta, itemId, "tool_call", "completed", item.arguments),
        toolName: item.name,
        toolArguments: toolArguments(item.arguments),
        callId: item.call_id,
        ...(item.provider_executed === true ? { providerExecuted: true } : {})
      }
    case "function_call_output":
      return {
        ...base(meta, itemId, "tool_output", "completed", item.output),
        callId: item.call_id,
        toolOutput: Json.parseOrString(item.output),
        success: item.success,
        ...(item.provider_executed === true ? { providerExecuted: true } : {})
      }
    case "error":
      return {
        ...base(meta, itemId, "error", "completed", item.message),
        errorCode: item.code,
        errorMessage: item.message
      }
    case "compaction":
      return {
        ...base(meta, itemId, "compaction", "completed", item.content),
        providerId: buffer?.providerId ?? meta.providerId
      }
    case "approval_request":
      return {
        ...base(meta, itemId, "approval_request", "completed", item.arguments),
        toolName: item.name,
        toolArguments: toolArguments(item.arguments),
        approvalRequestId: item.provider_id,
        ...(item.server_label === undefined ? {} : { serverLabel: item.server_label })
      }
    case "script_execution": {
      const upsert = base(meta, itemId, "tool_call", "completed", item.code)
      upsert.toolName = "script_execution"
      upsert.toolArguments = { code: item.code }
      if (item.output !== undefined) upsert.toolOutput = Json.parseOrString(item.output)
      return upsert
    }
  }
}

/**
 * The error upsert of an item that failed: what it had streamed, with the error.
 *
 * @internal
 */
export const fromItemError = (
  meta: TurnMeta,
  itemId: string,
  error: StreamEvent.ErrorObject,
  buffer: ItemBuffer | undefined
): UIUpsert.UIUpsert => ({
  ...base(meta, itemId, "error", "completed", buffer?.content ?? ""),
  errorCode: error.code,
  errorMessage: error.message
})

/** @internal */
export const turnStarted = (meta: TurnMeta): UITurnEvent.UITurnEvent => ({
  type: "turn_started",
  turnId: meta.turnId,
  threadId: meta.threadId,
  modelId: meta.modelId,
  providerId: meta.providerId
})

/** @internal */
export const turnCompleted: (
  meta: TurnMeta,
  status: StreamEvent.ResponseStatus,
  usage: Usage.Usage | undefined
) => UITurnEvent.UITurnEvent = TurnEvents.turnCompleted

/** @internal */
export const turnError: (meta: TurnMeta, error: StreamEvent.ErrorObject) => UITurnEvent.UITurnEvent =
  TurnEvents.turnError

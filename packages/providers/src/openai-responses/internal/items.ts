/**
 * Output items: which tool an item is a call of (client, hosted, provider-executed), its
 * arguments and output, and the items a finished or partial item becomes. (the OpenAI Responses normalizer, `OpenAiResponses`).
 *
 * @internal
 */
import { Json, OutputItem } from "@sluice/core"
import * as Result from "effect/Result"
import * as Citations from "../../Citations.js"
import * as HostedTools from "./hostedTools.js"

import { WireDecodeError } from "../../WireDecodeError.js"
import { decodeApproval, decodeFunctionCall, decodeMessage, RawOutputItem } from "./wire.js"

// ---------------------------------------------------------------------------
// Output items
// ---------------------------------------------------------------------------

export const stringField = (item: RawOutputItem, key: string): string | undefined => {
  const value = item[key]
  return typeof value === "string" ? value : undefined
}

/** The tool name of the items named after their tool, not a `name` field (the request's tool type). */
export const toolNames: Readonly<Record<string, string>> = {
  local_shell_call: "local_shell",
  shell_call: "shell",
  apply_patch_call: "apply_patch",
  tool_search_call: "tool_search"
}

/** A `shell_call` run in a hosted container (its `environment` is not `local`): OpenAI runs it. */
export const isHostedShell = (item: RawOutputItem): boolean => {
  const environment = item.environment
  return item.type === "shell_call" && Json.isObject(environment) && environment.type !== "local"
}

/** A tool search OpenAI runs itself (`execution` `server`, the default). */
export const isServerSearch = (item: RawOutputItem): boolean =>
  (item.type === "tool_search_call" || item.type === "tool_search_output") && item.execution !== "client"

/** Output items that report a result OpenAI produced in the turn: a hosted shell's, a tool search's. */
export const isProviderOutput = (item: RawOutputItem): boolean =>
  item.type === "shell_call_output" || (item.type === "tool_search_output" && isServerSearch(item))

/**
 * The names of the tools the request declared, when known (`NormalizeOptions.toolNames`,
 * else the response's echo of its `tools`); `undefined` when nothing says.
 */
export type Declared = ReadonlySet<string> | undefined

/**
 * The tool names a response's echoed `tools` declare (function and custom tools carry a
 * `name`; hosted tools such as `web_search` or xAI's `x_search` do not), or `undefined`
 * when the response echoes none: an empty or missing list says nothing.
 */
export const declaredBy = (tools: ReadonlyArray<Json.JsonValue> | null | undefined): Declared => {
  if (tools === undefined || tools === null || tools.length === 0) return undefined
  const names = new Set<string>()
  for (const tool of tools) if (Json.isObject(tool) && typeof tool.name === "string") names.add(tool.name)
  return names
}

/**
 * Whether a `custom_tool_call` is one the provider ran itself: a server that runs its
 * own built-in tools (xAI's X Search: `x_keyword_search`, `view_x_video`) streams them as
 * custom tool calls, under names the request never declared. With the request's tools
 * unknown, a custom tool call is the client's.
 */
export const isServerCustomCall = (item: RawOutputItem, declared: Declared): boolean => {
  if (item.type !== "custom_tool_call" || declared === undefined) return false
  const name = stringField(item, "name")
  return name === undefined || !declared.has(name)
}

/** Items the client must run: the turn then ends with `tool-calls`. */
export const isClientCall = (item: RawOutputItem, declared: Declared): boolean => {
  switch (item.type) {
    case "custom_tool_call":
      return !isServerCustomCall(item, declared)
    case "function_call":
    case "apply_patch_call":
    case "local_shell_call":
    case "computer_call":
      return true
    case "shell_call":
      return !isHostedShell(item)
    case "tool_search_call":
      return !isServerSearch(item)
    default:
      return false
  }
}

export const itemTypeOf = (item: RawOutputItem): OutputItem.ItemType =>
  item.type === "message"
    ? "message"
    : item.type === "reasoning"
    ? "reasoning"
    : item.type === "mcp_approval_request"
    ? "approval_request"
    : item.type === "compaction"
    ? "compaction"
    : isProviderOutput(item)
    ? "function_call_output"
    : "function_call"

/**
 * Whether a call item OpenAI ran itself: every call the client is not asked to run
 * (`isClientCall`): hosted tools, a shell in a hosted container, a server tool search,
 * and an item of a kind Sluice does not know (a kind newer than it), which is reported,
 * kept whole and sent back as it came, but never asked of the client, since nothing says
 * it is its to run.
 */
export const executedBy = (item: RawOutputItem, declared: Declared): { readonly provider_executed?: true } =>
  isClientCall(item, declared) ? {} : { provider_executed: true }

/** The name under which an item that is not a message or reasoning is reported. */
export const callName = (item: RawOutputItem): string =>
  item.type === "function_call" || item.type === "custom_tool_call" || item.type === "mcp_call" ||
    item.type === "mcp_approval_request"
    ? stringField(item, "name") ?? item.type
    : toolNames[item.type] ?? item.type

/** The call id of a call item: its `call_id`, else its item id. */
export const callIdOf = (item: RawOutputItem, id: string): string => stringField(item, "call_id") ?? item.id ?? id

/**
 * The JSON text of what a call item that is not a plain function call asks: a custom
 * tool's free-text `input` as `{"input": ...}`; an `apply_patch_call`'s `operation`; a
 * shell call's `action` as the provider sent it; a tool search's `arguments`.
 */
export const callArguments = (item: RawOutputItem, streamed: string): string => {
  switch (item.type) {
    case "custom_tool_call": {
      const input = stringField(item, "input")
      return input === undefined ? streamed : HostedTools.stringArguments("input", input)
    }
    case "apply_patch_call":
      return Json.isObject(item.operation) ? HostedTools.patchArguments(item.operation) : streamed
    case "tool_search_call": {
      const args = item.arguments
      return typeof args === "string" ? args : args === undefined || args === null ? "{}" : JSON.stringify(args)
    }
    default: {
      const args = stringField(item, "arguments") ?? stringField(item, "code")
      if (args !== undefined) return args
      const action = item.action
      return action === undefined ? streamed : JSON.stringify(action)
    }
  }
}

/** The result a provider-run output item reports, as text: the shell's output entries, the tools found. */
export const outputText = (item: RawOutputItem): string => {
  const result = item.type === "tool_search_output" ? item.tools : item.output
  return result === undefined ? "" : typeof result === "string" ? result : JSON.stringify(result)
}

export interface FinalItem {
  readonly item: OutputItem.OutputItem
  /** The refusal text of a message, when the model refused. */
  readonly refusal: string | undefined
  /** The result of a hosted tool call, its own item after the call. */
  readonly result?: OutputItem.FunctionCallOutputItem
}

/**
 * The finished form of an output item other than reasoning. `id` is the Sluice item id;
 * `streamed` is the content that arrived as deltas, used only when the finished item
 * carries no text; `callId` the call id of an output item whose own is missing.
 */
export const finalItem = (
  raw: RawOutputItem,
  id: string,
  streamed: string,
  line: number,
  callId: string | undefined,
  declared: Declared
): Result.Result<FinalItem, WireDecodeError> => {
  switch (raw.type) {
    case "message":
      return Result.map(decodeMessage({ ...raw, id }, line, "message item"), (message) => {
        let content = ""
        let refusal: string | undefined
        const annotations: Array<Json.JsonValue> = []
        const other: Array<Json.JsonObject> = []
        for (const part of message.content) {
          const text = part.type === "output_text" ? part.text : undefined
          const refused = part.type === "refusal" ? part.refusal : undefined
          if (typeof text === "string") {
            content += text
            if (Array.isArray(part.annotations)) annotations.push(...part.annotations)
          } else if (typeof refused === "string") {
            content += refused
            refusal = (refusal ?? "") + refused
          } else {
            other.push(part)
          }
        }
        const metadata: Record<string, Json.JsonValue> = {}
        if (annotations.length > 0) metadata.annotations = annotations
        if (refusal !== undefined) metadata.refusal = refusal
        if (other.length > 0) metadata.other_content = other
        // the message's `phase` (`commentary` before tool calls, `final_answer`): it goes back
        const phase = stringField(raw, "phase")
        if (phase !== undefined) metadata.phase = phase
        const item: OutputItem.MessageItem = {
          type: "message",
          id,
          content: content === "" ? streamed : content,
          origin: "agent",
          ...Citations.sourcesField(annotations, Citations.fromOpenAi),
          ...(Object.keys(metadata).length > 0 ? { provider_metadata: metadata } : {})
        }
        return { item, refusal }
      })
    case "function_call":
      return Result.map(decodeFunctionCall({ ...raw, id }, line, "function_call item"), (call) => {
        // a function found by tool search names its namespace, which must go back with it
        const namespace = stringField(raw, "namespace")
        return {
          item: {
            type: "function_call",
            id,
            call_id: call.call_id,
            name: call.name,
            arguments: call.arguments,
            ...(namespace === undefined ? {} : { provider_metadata: { namespace } })
          },
          refusal: undefined
        }
      })
    case "compaction":
      // the conversation so far, compacted: its `encrypted_content` goes back as it came
      return Result.succeed({
        item: { type: "compaction", id, content: streamed, provider_metadata: { type: raw.type, item: raw } },
        refusal: undefined
      })
    case "mcp_approval_request":
      return Result.map(decodeApproval({ ...raw, id }, line, "mcp_approval_request item"), (request) => {
        const rest = Object.fromEntries(
          Object.entries(raw).filter(([field]) => !["type", "id", "name", "arguments", "server_label"].includes(field))
        )
        const item: OutputItem.ApprovalRequestItem = {
          type: "approval_request",
          id,
          provider_id: raw.id ?? id,
          ...(request.server_label === undefined ? {} : { server_label: request.server_label }),
          name: request.name,
          arguments: request.arguments,
          ...(Object.keys(rest).length > 0 ? { provider_metadata: rest } : {})
        }
        return { item, refusal: undefined }
      })
    default: {
      if (isProviderOutput(raw)) {
        const item: OutputItem.FunctionCallOutputItem = {
          type: "function_call_output",
          id,
          call_id: stringField(raw, "call_id") ?? callId ?? raw.id ?? id,
          output: outputText(raw),
          success: raw.status !== "incomplete" && raw.status !== "failed",
          provider_executed: true,
          provider_metadata: { type: raw.type, item: raw }
        }
        return Result.succeed({ item, refusal: undefined })
      }
      const hosted = HostedTools.split(raw, id, callName(raw))
      if (hosted !== undefined) return Result.succeed({ item: hosted.call, refusal: undefined, result: hosted.result })
      const item: OutputItem.FunctionCallItem = {
        type: "function_call",
        id,
        call_id: callIdOf(raw, id),
        name: callName(raw),
        arguments: callArguments(raw, streamed),
        ...executedBy(raw, declared),
        provider_metadata: { type: raw.type, item: raw }
      }
      return Result.succeed({ item, refusal: undefined })
    }
  }
}

/**
 * The arguments of a cut-off call whose streamed text ends inside its last string field
 * (a custom tool's `{"input":"…`, a patch's `…"diff":"…`): that string closed, so the
 * text that arrived is valid JSON; any other text as it is.
 */
export const closedString = (streamed: string): string => {
  if (streamed === "") return streamed
  const closed = `${streamed}"}`
  return Json.isObject(Json.parseOrUndefined(closed)) ? closed : streamed
}

/** The final form of an item that was cut off: what arrived, under the added item's fields. */
export const partialItem = (
  added: RawOutputItem | undefined,
  id: string,
  content: string,
  declared: Declared
): OutputItem.OutputItem => {
  const type = added?.type ?? "message"
  if (type === "message") {
    const phase = added === undefined ? undefined : stringField(added, "phase")
    return {
      type: "message",
      id,
      content,
      origin: "agent",
      ...(phase === undefined ? {} : { provider_metadata: { phase } })
    }
  }
  if (type === "reasoning") {
    const encrypted = added === undefined ? undefined : stringField(added, "encrypted_content")
    return { type: "reasoning", id, content, ...(encrypted === undefined ? {} : { encrypted_content: encrypted }) }
  }
  if (added !== undefined && type === "compaction") {
    return { type: "compaction", id, content, provider_metadata: { type, item: added } }
  }
  if (added !== undefined && type === "mcp_approval_request") {
    return {
      type: "approval_request",
      id,
      provider_id: added.id ?? id,
      name: callName(added),
      arguments: stringField(added, "arguments") ?? content
    }
  }
  if (added !== undefined && isProviderOutput(added)) {
    return {
      type: "function_call_output",
      id,
      call_id: callIdOf(added, id),
      output: content,
      success: false,
      provider_executed: true,
      provider_metadata: { type, item: added }
    }
  }
  return {
    type: "function_call",
    id,
    call_id: (added && stringField(added, "call_id")) ?? added?.id ?? id,
    name: added === undefined ? type : callName(added),
    arguments: type === "custom_tool_call" || type === "apply_patch_call" ? closedString(content) : content,
    ...(added === undefined ? {} : executedBy(added, declared)),
    ...(added === undefined || type === "function_call" ? {} : { provider_metadata: { type, item: added } })
  }
}

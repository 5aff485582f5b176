/**
 * The OpenAI Responses API's hosted tools (`web_search_call`, `file_search_call`,
 * `code_interpreter_call`, `image_generation_call`, `mcp_call`, `mcp_list_tools`): OpenAI
 * runs them during the response, and each output item holds both the call and its
 * result. Sluice splits such an item into a provider-executed `function_call` (what the
 * tool was asked: the search action, the queries, the code, ...) and a provider-executed
 * `function_call_output` (what it gave: sources, results, outputs, the image).
 *
 * The call keeps the item in `provider_metadata.item` without its result fields; the
 * result names them in `provider_metadata.restores`, and its `output` is the JSON object
 * of those fields, so the next request can send the item back whole.
 *
 * @internal
 */
import type { OutputItem } from "@sluice/core"
import { Json } from "@sluice/core"

type RawItem = { readonly type: string; readonly id?: string | undefined } & { readonly [key: string]: Json.JsonValue }

interface HostedTool {
  /** What the tool was asked, as a JSON value (a string is taken as JSON text already). */
  readonly args: (item: RawItem) => Json.JsonValue
  /** The top-level fields holding the result; they move from the call to its output. */
  readonly resultFields: ReadonlyArray<string>
  /** The result when it is not (only) top-level fields. */
  readonly result?: (item: RawItem) => Json.JsonObject
}

const objectOf = (value: Json.JsonValue | undefined): Json.JsonObject => (Json.isObject(value) ? value : {})

const without = (object: Json.JsonObject, keys: ReadonlyArray<string>): Json.JsonObject =>
  Object.fromEntries(Object.entries(object).filter(([key]) => !keys.includes(key)))

const pick = (object: Json.JsonObject, keys: ReadonlyArray<string>): Json.JsonObject =>
  Object.fromEntries(keys.flatMap((key) => (object[key] === undefined ? [] : [[key, object[key]]])))

/**
 * A string's JSON escaping without the quotes, every character outside ASCII as a
 * `\uXXXX` escape: the escaping of a text is then the escapings of its pieces joined,
 * wherever it is cut (even inside a surrogate pair).
 */
const escapeAscii = (text: string): string =>
  JSON.stringify(text)
    .slice(1, -1)
    .replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** `{"code": ..., "container_id": ...}` of a code interpreter call, its code escaped as its deltas are. */
const codeArguments = (item: RawItem): string => {
  const code = typeof item.code === "string" ? item.code : ""
  const container = item.container_id
  return `{"code":"${escapeAscii(code)}"${
    typeof container === "string" ? `,"container_id":${JSON.stringify(container)}` : ""
  }}`
}

/** Fields that say which item this is and how it went, never what it did. */
const bookkeeping = ["type", "id", "status"]

const tools: Readonly<Record<string, HostedTool>> = {
  // action {type: "search", query, sources?} (also open_page / find); sources are the result
  web_search_call: {
    args: (item) => without(objectOf(item.action), ["sources"]),
    resultFields: [],
    result: (item) => pick(objectOf(item.action), ["sources"])
  },
  file_search_call: { args: (item) => pick(item, ["queries"]), resultFields: ["results"] },
  code_interpreter_call: { args: (item) => codeArguments(item), resultFields: ["outputs"] },
  image_generation_call: { args: (item) => without(item, [...bookkeeping, "result"]), resultFields: ["result"] },
  mcp_call: { args: (item) => item.arguments ?? "{}", resultFields: ["output", "error"] },
  mcp_list_tools: { args: (item) => pick(item, ["server_label"]), resultFields: ["tools", "error"] }
}

/**
 * Whether an output item of this type is a hosted tool OpenAI runs itself.
 *
 * @internal
 */
export const isHosted = (type: string): boolean => Object.hasOwn(tools, type)

/**
 * The JSON text of what a hosted tool was asked, as it would stream: for
 * `code_interpreter_call` it starts `{"code":"` and continues with the code, escaped, so
 * the code deltas form a prefix of the finished call's arguments.
 *
 * @internal
 */
export const codeDelta = (streamed: string, delta: string): string =>
  (streamed === "" ? "{\"code\":\"" : "") + escapeAscii(delta)

/**
 * The JSON text `{"<field>":"<text>"}` of a free-text tool input (a `custom_tool_call`'s
 * `input`), escaped as `stringDelta` escapes its pieces, so that the streamed deltas
 * form a prefix of it.
 *
 * @internal
 */
export const stringArguments = (field: string, text: string): string =>
  `{${JSON.stringify(field)}:"${escapeAscii(text)}"}`

/**
 * One piece of a free-text input as it streams into `stringArguments(field, ...)`: the
 * first piece opens the object and the string.
 *
 * @internal
 */
export const stringDelta = (field: string, streamed: string, delta: string): string =>
  (streamed === "" ? `{${JSON.stringify(field)}:"` : "") + escapeAscii(delta)

/** An `apply_patch_call` operation's fields but its `diff`, as JSON text without the closing brace. */
const patchHead = (operation: Json.JsonObject): string => {
  const head = JSON.stringify(without(operation, ["diff"])).slice(0, -1)
  return head === "{" ? head : `${head},`
}

/**
 * The JSON text of an `apply_patch_call`'s operation (`type`, `path`, `diff`): its other
 * fields first, then the `diff` last, escaped as `patchDelta` escapes its pieces, so the
 * diff's deltas form a prefix of it. An operation without a diff (`delete_file`) is its
 * JSON text.
 *
 * @internal
 */
export const patchArguments = (operation: Json.JsonObject): string => {
  const diff = operation.diff
  if (typeof diff !== "string") return JSON.stringify(operation)
  return `${patchHead(operation)}"diff":"${escapeAscii(diff)}"}`
}

/**
 * One piece of an `apply_patch_call`'s diff as it streams into `patchArguments`: the
 * first piece opens the object with the fields the added item's operation has.
 *
 * @internal
 */
export const patchDelta = (operation: Json.JsonValue | undefined, streamed: string, delta: string): string =>
  (streamed === "" ? `${patchHead(objectOf(operation))}"diff":"` : "") + escapeAscii(delta)

/**
 * The JSON text of a hosted tool's arguments.
 *
 * @internal
 */
export const argumentsOf = (item: RawItem): string | undefined => {
  const tool = tools[item.type]
  if (tool === undefined) return undefined
  const args = tool.args(item)
  return typeof args === "string" ? args : JSON.stringify(args)
}

/**
 * A finished hosted tool item as its call and its result, both `provider_executed`.
 * `id` is the call's Sluice item id; the result's is `<id>_result`. Undefined for other
 * item types.
 *
 * @internal
 */
export const split = (
  item: RawItem,
  id: string,
  name: string
): { readonly call: OutputItem.FunctionCallItem; readonly result: OutputItem.FunctionCallOutputItem } | undefined => {
  const tool = tools[item.type]
  const args = argumentsOf(item)
  if (tool === undefined || args === undefined) return undefined
  const callId = item.id ?? id
  const result = { ...pick(item, tool.resultFields), ...tool.result?.(item) }
  const error = item.error
  const success = item.status !== "failed" && item.status !== "incomplete" && (error === undefined || error === null)
  return {
    call: {
      type: "function_call",
      id,
      call_id: callId,
      name,
      arguments: args,
      provider_executed: true,
      provider_metadata: { type: item.type, item: without(item, tool.resultFields) }
    },
    result: {
      type: "function_call_output",
      id: `${id}_result`,
      call_id: callId,
      output: JSON.stringify(result),
      success,
      provider_executed: true,
      provider_metadata: { type: item.type, restores: [...tool.resultFields] }
    }
  }
}

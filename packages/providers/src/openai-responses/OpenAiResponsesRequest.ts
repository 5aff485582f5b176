/**
 * An `LlmRequest` as an OpenAI Responses streaming request: `POST {baseUrl}/responses`
 * with `Authorization: Bearer <key>` and `stream: true`.
 *
 * Requests are stateless (`store: false`): the conversation travels in `input`, and
 * reasoning comes back encrypted (`include: ["reasoning.encrypted_content"]`) so that
 * the next request can send each reasoning item (`id`, `summary`,
 * `encrypted_content`) back before the items that followed it. Hosted tool items
 * (`provider_item` parts) go back as they came, and so do approval requests and their
 * `mcp_approval_response`s. A client call of its own kind (`custom_tool_call`,
 * `apply_patch_call`, `local_shell_call`, `shell_call`, a client `tool_search_call`,
 * `computer_call`) goes back as the item it came as, and its result as that kind's
 * output item (`custom_tool_call_output`, `apply_patch_call_output` with `status`
 * `failed` for an error result, `local_shell_call_output`, `shell_call_output` with
 * `stdout` / `stderr` / `outcome` entries, `tool_search_output`, `computer_call_output`
 * with a `computer_screenshot`); other results are `function_call_output`s.
 *
 * @since 0.1.0
 */
import { Json, ToolCallId } from "@sluice/core"
import { describedBy } from "../internal/toolDescription.js"
import type { AssistantPart, LlmRequest, ResponseFormat, ToolChoice, ToolResult } from "../request/LlmRequest.js"
import type { EncodeOptions, WireRequest } from "../request/WireRequest.js"
import { join } from "../request/WireRequest.js"

const provider = "openai-responses"

/**
 * The base URL of the OpenAI SDK: `https://api.openai.com/v1`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBaseUrl = "https://api.openai.com/v1"

/** The kinds of client call that go back as their own item, and whose result is their own output item. */
const clientCallKinds: ReadonlySet<string> = new Set([
  "custom_tool_call",
  "apply_patch_call",
  "local_shell_call",
  "shell_call",
  "tool_search_call",
  "computer_call"
])

/** The Responses item a tool call part came as, when it was not a plain function call. */
const callItemOf = (part: AssistantPart): Json.JsonObject | undefined => {
  if (part._tag !== "tool_call" || part.provider !== provider) return undefined
  const item = part.providerMetadata?.item
  return Json.isObject(item) && typeof item.type === "string" && clientCallKinds.has(item.type) ? item : undefined
}

/**
 * A shell call's result as `shell_call_output` entries: a JSON array of entries as it is,
 * one entry object wrapped, any other text as one entry's `stdout` (exit code 1 when
 * the result is an error, else 0).
 */
const shellOutput = (result: ToolResult): Json.JsonValue => {
  const parsed = Json.parseOrUndefined(result.output)
  if (Array.isArray(parsed)) return parsed
  if (Json.isObject(parsed) && (typeof parsed.stdout === "string" || typeof parsed.stderr === "string")) {
    return [{
      stdout: "",
      stderr: "",
      outcome: { type: "exit", exit_code: result.isError === true ? 1 : 0 },
      ...parsed
    }]
  }
  return [{ stdout: result.output, stderr: "", outcome: { type: "exit", exit_code: result.isError === true ? 1 : 0 } }]
}

/** The output item of a tool result, by the kind of the call it answers. */
const resultItem = (result: ToolResult, call: Json.JsonObject | undefined): Json.JsonObject => {
  const callId = ToolCallId.fromHistory(result.callId)
  switch (call?.type) {
    case "custom_tool_call":
      return { type: "custom_tool_call_output", call_id: callId, output: result.output }
    case "apply_patch_call":
      return {
        type: "apply_patch_call_output",
        call_id: callId,
        status: result.isError === true ? "failed" : "completed",
        output: result.output
      }
    case "local_shell_call":
      return { type: "local_shell_call_output", call_id: callId, output: result.output }
    case "shell_call": {
      const action = call.action
      const limit = Json.isObject(action) ? action.max_output_length : undefined
      return {
        type: "shell_call_output",
        call_id: callId,
        output: shellOutput(result),
        ...(typeof limit === "number" ? { max_output_length: limit } : {})
      }
    }
    case "tool_search_call": {
      const tools = Json.parseOrUndefined(result.output)
      return {
        type: "tool_search_output",
        call_id: callId,
        execution: "client",
        status: "completed",
        tools: Array.isArray(tools) ? tools : []
      }
    }
    case "computer_call": {
      // a screenshot: the result as its `computer_screenshot` object, or its image URL
      const screenshot = Json.parseOrUndefined(result.output)
      return {
        type: "computer_call_output",
        call_id: callId,
        output: Json.isObject(screenshot) && screenshot.type === "computer_screenshot"
          ? screenshot
          : { type: "computer_screenshot", image_url: result.output }
      }
    }
    default:
      return { type: "function_call_output", call_id: callId, output: result.output }
  }
}

/** The `namespace` of a Responses function call (a function tool search found), to go back with it. */
const namespaceOf = (part: AssistantPart): { readonly namespace?: string } => {
  const namespace = part._tag === "tool_call" && part.provider === provider
    ? part.providerMetadata?.namespace
    : undefined
  return typeof namespace === "string" ? { namespace } : {}
}

/**
 * The `phase` of a Responses message (`commentary`, `final_answer`), which must go back
 * with it: models that state it do worse without it.
 */
const phaseOf = (part: AssistantPart): { readonly phase?: string } => {
  const phase = part._tag === "text" && part.provider === provider ? part.providerMetadata?.phase : undefined
  return typeof phase === "string" ? { phase } : {}
}

const assistantItem = (part: AssistantPart): Json.JsonObject | undefined => {
  switch (part._tag) {
    case "text":
      return part.text === "" ? undefined : { type: "message", role: "assistant", content: part.text, ...phaseOf(part) }
    case "reasoning":
      if (part.provider !== provider || (part.encryptedContent === undefined && part.id === undefined)) return undefined
      return {
        type: "reasoning",
        ...(part.id === undefined ? {} : { id: part.id }),
        summary: part.text === "" ? [] : [{ type: "summary_text", text: part.text }],
        ...(part.encryptedContent === undefined ? {} : { encrypted_content: part.encryptedContent })
      }
    case "tool_call":
      return callItemOf(part) ?? {
        type: "function_call",
        call_id: ToolCallId.fromHistory(part.id),
        name: part.name,
        arguments: part.arguments,
        ...namespaceOf(part)
      }
    case "provider_item":
      return part.provider === provider ? part.item : undefined
  }
}

/**
 * The `input` items of a request, in conversation order.
 *
 * @since 0.1.0
 * @category encoding
 */
export const input = (request: LlmRequest): Array<Json.JsonObject> => {
  const out: Array<Json.JsonObject> = []
  // the item of each call that came as its own kind, by call id, for its result's kind
  const calls = new Map<string, Json.JsonObject>()
  for (const message of request.messages) {
    switch (message._tag) {
      case "user":
        out.push({ type: "message", role: "user", content: message.text })
        break
      case "assistant":
        for (const part of message.parts) {
          const item = assistantItem(part)
          if (item !== undefined) out.push(item)
          const call = callItemOf(part)
          if (call !== undefined && part._tag === "tool_call") calls.set(ToolCallId.fromHistory(part.id), call)
        }
        break
      case "tool":
        for (const result of message.results) {
          out.push(resultItem(result, calls.get(ToolCallId.fromHistory(result.callId))))
        }
        break
    }
  }
  return out
}

/**
 * A tool choice as the Responses API's `tool_choice`: the mode as it reads, a forced
 * tool as `{ type: "function", name }`.
 *
 * @since 0.3.0
 * @category encoding
 */
export const toolChoice = (choice: ToolChoice): Json.JsonValue =>
  typeof choice === "string" ? choice : { type: "function", name: choice.tool }

/**
 * A response format as the Responses API's `text.format`: `text`, `json_schema` (its
 * `name`, `response` when the request gives none, and `schema` beside the type) for JSON
 * by a schema, `json_object` for JSON without one.
 *
 * @since 0.3.0
 * @category encoding
 */
export const textFormat = (format: ResponseFormat): Json.JsonObject =>
  format.type === "text"
    ? { type: "text" }
    : format.schema === undefined
    ? { type: "json_object" }
    : { type: "json_schema", name: format.name ?? "response", schema: format.schema }

/**
 * The streaming request.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (request: LlmRequest, options: EncodeOptions): WireRequest => {
  const reasoning = request.reasoning
  return {
    url: join(options.baseUrl, "responses"),
    headers: {
      authorization: `Bearer ${options.apiKey}`,
      "content-type": "application/json",
      accept: "text/event-stream"
    },
    body: {
      model: request.model,
      ...(request.system === undefined ? {} : { instructions: request.system }),
      input: input(request),
      ...(request.tools === undefined || request.tools.length === 0
        ? {}
        : {
          tools: request.tools.map((tool) => ({
            type: "function",
            name: tool.name,
            ...describedBy(tool),
            parameters: tool.parameters
          })),
          ...(request.toolChoice === undefined ? {} : { tool_choice: toolChoice(request.toolChoice) })
        }),
      ...(request.responseFormat === undefined ? {} : { text: { format: textFormat(request.responseFormat) } }),
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
      ...(request.maxTokens === undefined ? {} : { max_output_tokens: request.maxTokens }),
      ...(reasoning === undefined
        ? {}
        : {
          reasoning: {
            ...(reasoning.effort === undefined ? {} : { effort: reasoning.effort }),
            summary: reasoning.summary ?? "auto"
          }
        }),
      include: ["reasoning.encrypted_content"],
      store: false,
      stream: true
    }
  }
}

/**
 * An `LlmRequest` as an OpenAI Responses streaming request: `POST {baseUrl}/responses`
 * with `Authorization: Bearer <key>` and `stream: true`.
 *
 * Requests are stateless (`store: false`): the conversation travels in `input`, and
 * reasoning comes back encrypted (`include: ["reasoning.encrypted_content"]`) so that
 * the next request can send each reasoning item (`id`, `summary`,
 * `encrypted_content`) back before the items that followed it. Hosted tool items
 * (`provider_item` parts) go back as they came.
 *
 * @since 0.1.0
 */
import type { Json } from "@sluice/core"
import { ToolCallId } from "@sluice/core"
import type { AssistantPart, LlmRequest } from "./LlmRequest.js"
import type { EncodeOptions, WireRequest } from "./WireRequest.js"
import { join } from "./WireRequest.js"

const provider = "openai-responses"

/**
 * The base URL of the OpenAI SDK: `https://api.openai.com/v1`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBaseUrl = "https://api.openai.com/v1"

const assistantItem = (part: AssistantPart): Json.JsonObject | undefined => {
  switch (part._tag) {
    case "text":
      return part.text === "" ? undefined : { type: "message", role: "assistant", content: part.text }
    case "reasoning":
      if (part.provider !== provider || (part.encryptedContent === undefined && part.id === undefined)) return undefined
      return {
        type: "reasoning",
        ...(part.id === undefined ? {} : { id: part.id }),
        summary: part.text === "" ? [] : [{ type: "summary_text", text: part.text }],
        ...(part.encryptedContent === undefined ? {} : { encrypted_content: part.encryptedContent })
      }
    case "tool_call":
      return {
        type: "function_call",
        call_id: ToolCallId.fromHistory(part.id),
        name: part.name,
        arguments: part.arguments
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
  for (const message of request.messages) {
    switch (message._tag) {
      case "user":
        out.push({ type: "message", role: "user", content: message.text })
        break
      case "assistant":
        for (const part of message.parts) {
          const item = assistantItem(part)
          if (item !== undefined) out.push(item)
        }
        break
      case "tool":
        for (const result of message.results) {
          out.push({
            type: "function_call_output",
            call_id: ToolCallId.fromHistory(result.callId),
            output: result.output
          })
        }
        break
    }
  }
  return out
}

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
            ...(tool.description === undefined ? {} : { description: tool.description }),
            parameters: tool.parameters
          }))
        }),
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

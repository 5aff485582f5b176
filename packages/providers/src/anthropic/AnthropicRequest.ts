/**
 * An `LlmRequest` as an Anthropic Messages streaming request:
 * `POST {baseUrl}/v1/messages` with `x-api-key`, `anthropic-version: 2023-06-01` and
 * `stream: true`.
 *
 * Assistant turns send back their thinking blocks with their `signature` and their
 * `redacted_thinking` blocks with their `data`, in the order they came (Anthropic
 * verifies them); thinking without a signature, and any other provider's reasoning,
 * is left out because Anthropic refuses it. Tool results are `tool_result` blocks of
 * a user message; consecutive messages of one role are merged into one.
 *
 * @since 0.1.0
 */
import type { Json } from "@sluice/core"
import { Json as JsonValue, ToolCallId } from "@sluice/core"
import { mergeRoles } from "../internal/mergeRoles.js"
import { describedBy } from "../internal/toolDescription.js"
import type { AssistantPart, LlmRequest, Reasoning, ResponseFormat, ToolChoice } from "../request/LlmRequest.js"
import type { EncodeOptions, WireRequest } from "../request/WireRequest.js"
import { join } from "../request/WireRequest.js"

const provider = "anthropic"

/**
 * The base URL of the Anthropic SDK: `https://api.anthropic.com` (it adds
 * `/v1/messages`).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBaseUrl = "https://api.anthropic.com"

/**
 * The `anthropic-version` header sent with every request.
 *
 * @since 0.1.0
 * @category constants
 */
export const apiVersion = "2023-06-01"

/**
 * `max_tokens` when the request sets none (Anthropic requires it); with thinking it is
 * added to the thinking budget.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxTokens = 4096

const effortBudgets = { minimal: 1024, low: 2048, medium: 8192, high: 24576 } as const

/**
 * The thinking budget of the reasoning options: `budgetTokens`, else the budget of
 * the `effort` (minimal 1024, low 2048, medium 8192, high 24576 tokens).
 *
 * @since 0.1.0
 * @category encoding
 */
export const thinkingBudget = (reasoning: Reasoning): number =>
  reasoning.budgetTokens ?? effortBudgets[reasoning.effort ?? "medium"]

const assistantBlock = (part: AssistantPart): Json.JsonObject | undefined => {
  switch (part._tag) {
    case "text":
      return part.text === "" ? undefined : { type: "text", text: part.text }
    case "reasoning":
      if (part.provider !== provider) return undefined
      if (part.redactedData !== undefined) return { type: "redacted_thinking", data: part.redactedData }
      return part.signature === undefined
        ? undefined
        : { type: "thinking", thinking: part.text, signature: part.signature }
    case "tool_call": {
      // a call made by code execution (programmatic tool calling) names its caller
      const caller = part.provider === provider ? part.providerMetadata?.caller : undefined
      return {
        type: "tool_use",
        id: ToolCallId.fromHistory(part.id),
        name: part.name,
        input: JsonValue.parseArguments(part.arguments),
        ...(JsonValue.isObject(caller) ? { caller } : {})
      }
    }
    case "provider_item":
      return part.provider === provider ? part.item : undefined
  }
}

/**
 * The `messages` of a request.
 *
 * @since 0.1.0
 * @category encoding
 */
export const messages = (request: LlmRequest): Array<Json.JsonObject> =>
  mergeRoles(
    request.messages.map((message): readonly ["user" | "assistant", ReadonlyArray<Json.JsonObject>] => {
      switch (message._tag) {
        case "user":
          return ["user", [{ type: "text", text: message.text }]]
        case "assistant":
          return ["assistant", message.parts.map(assistantBlock).filter((block) => block !== undefined)]
        case "tool":
          return [
            "user",
            message.results.map((result) => ({
              type: "tool_result",
              tool_use_id: ToolCallId.fromHistory(result.callId),
              content: result.output,
              ...(result.isError === true ? { is_error: true } : {})
            }))
          ]
      }
    })
  ).map(({ entries, role }) => ({ role, content: entries }))

/**
 * A tool choice as the Messages API's `tool_choice`: `{ type: "auto" }`, `{ type: "none" }`,
 * `{ type: "any" }` for `required`, `{ type: "tool", name }` for a forced tool.
 *
 * @since 0.3.0
 * @category encoding
 */
export const toolChoice = (choice: ToolChoice): Json.JsonObject =>
  typeof choice === "object"
    ? { type: "tool", name: choice.tool }
    : { type: choice === "required" ? "any" : choice }

/**
 * A response format as the Messages API's structured output, `output_config.format`
 * `{ type: "json_schema", schema }`, for JSON by a schema. The API has no other format:
 * `text` is its default, and JSON without a schema has no field (nothing is sent).
 *
 * @since 0.3.0
 * @category encoding
 */
export const outputFormat = (format: ResponseFormat): Json.JsonObject | undefined =>
  format.type === "json" && format.schema !== undefined ? { type: "json_schema", schema: format.schema } : undefined

/**
 * The streaming request.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (request: LlmRequest, options: EncodeOptions): WireRequest => {
  const budget = request.reasoning === undefined ? undefined : thinkingBudget(request.reasoning)
  const format = request.responseFormat === undefined ? undefined : outputFormat(request.responseFormat)
  return {
    url: join(options.baseUrl, "v1/messages"),
    headers: {
      "x-api-key": options.apiKey,
      "anthropic-version": apiVersion,
      "content-type": "application/json",
      accept: "text/event-stream"
    },
    body: {
      model: request.model,
      max_tokens: request.maxTokens ?? (budget === undefined ? defaultMaxTokens : budget + defaultMaxTokens),
      ...(request.system === undefined ? {} : { system: request.system }),
      messages: messages(request),
      ...(request.tools === undefined || request.tools.length === 0
        ? {}
        : {
          tools: request.tools.map((tool) => ({
            name: tool.name,
            ...describedBy(tool),
            input_schema: tool.parameters
          })),
          ...(request.toolChoice === undefined ? {} : { tool_choice: toolChoice(request.toolChoice) })
        }),
      ...(format === undefined ? {} : { output_config: { format } }),
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
      ...(budget === undefined ? {} : { thinking: { type: "enabled", budget_tokens: budget } }),
      ...(request.container === undefined ? {} : { container: request.container }),
      stream: true
    }
  }
}

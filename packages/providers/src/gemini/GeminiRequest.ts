/**
 * An `LlmRequest` as a Gemini streaming request:
 * `POST {baseUrl}/models/{model}:streamGenerateContent?alt=sse` with `x-goog-api-key`
 * (`:generateContent` for a non-streaming request, `streaming: false`).
 *
 * Model turns send back every `thoughtSignature` on the part it came on: thought
 * parts (`thought: true`), text parts and `functionCall` parts (Gemini refuses a turn
 * whose function call lost its signature). Signatures and thoughts of other providers
 * are left out. Tool results are `functionResponse` parts of a user turn, matched by
 * name and order; a result that is a JSON object is the `response`, any other is
 * `{"result": output}` (`{"error": output}` for a failed call). Consecutive turns of
 * one role are merged.
 *
 * @since 0.1.0
 */
import type { Json } from "@sluice/core"
import { Json as JsonValue } from "@sluice/core"
import { mergeRoles } from "../internal/mergeRoles.js"
import { describedBy } from "../internal/toolDescription.js"
import type { AssistantPart, LlmRequest, ResponseFormat, ToolChoice, ToolResult } from "../request/LlmRequest.js"
import type { EncodeOptions, WireRequest } from "../request/WireRequest.js"
import { join } from "../request/WireRequest.js"

const provider = "gemini"

/**
 * The Gemini API's base URL: `https://generativelanguage.googleapis.com/v1beta`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBaseUrl = "https://generativelanguage.googleapis.com/v1beta"

const signatureOf = (
  part: { readonly provider?: string | undefined; readonly providerMetadata?: Json.JsonObject | undefined }
) => {
  const signature = part.provider === provider ? part.providerMetadata?.thoughtSignature : undefined
  return typeof signature === "string" ? { thoughtSignature: signature } : {}
}

const modelPart = (part: AssistantPart): Json.JsonObject | undefined => {
  switch (part._tag) {
    case "text": {
      const signature = signatureOf(part)
      return part.text === "" && signature.thoughtSignature === undefined
        ? undefined
        : { text: part.text, ...signature }
    }
    case "reasoning":
      if (part.provider !== provider) return undefined
      return {
        text: part.text,
        thought: true,
        ...(part.signature === undefined ? {} : { thoughtSignature: part.signature })
      }
    case "tool_call":
      return { functionCall: { name: part.name, args: JsonValue.parseArguments(part.arguments) }, ...signatureOf(part) }
    case "provider_item":
      return part.provider === provider ? part.item : undefined
  }
}

const responsePart = (result: ToolResult): Json.JsonObject => {
  const parsed = JsonValue.parseOrUndefined(result.output)
  const response: Json.JsonObject = result.isError === true
    ? { error: result.output }
    : JsonValue.isObject(parsed)
    ? parsed
    : { result: result.output }
  return { functionResponse: { name: result.name, response } }
}

/**
 * The `contents` of a request.
 *
 * @since 0.1.0
 * @category encoding
 */
export const contents = (request: LlmRequest): Array<Json.JsonObject> =>
  mergeRoles(
    request.messages.map((message): readonly ["user" | "model", ReadonlyArray<Json.JsonObject>] => {
      switch (message._tag) {
        case "user":
          return ["user", [{ text: message.text }]]
        case "assistant":
          return ["model", message.parts.map(modelPart).filter((part) => part !== undefined)]
        case "tool":
          return ["user", message.results.map(responsePart)]
      }
    })
  ).map(({ entries, role }) => ({ role, parts: entries }))

/**
 * A tool choice as Gemini's `toolConfig.functionCallingConfig`: mode `AUTO`, `NONE`, `ANY`
 * for `required`, and `ANY` with `allowedFunctionNames` for a forced tool.
 *
 * @since 0.3.0
 * @category encoding
 */
export const functionCallingConfig = (choice: ToolChoice): Json.JsonObject =>
  typeof choice === "object"
    ? { mode: "ANY", allowedFunctionNames: [choice.tool] }
    : { mode: choice === "auto" ? "AUTO" : choice === "none" ? "NONE" : "ANY" }

/**
 * A response format as `generationConfig` fields: `responseMimeType` (`text/plain` or
 * `application/json`), and for JSON by a schema `responseJsonSchema` (the field that
 * takes JSON Schema as it is, where `responseSchema` takes only an OpenAPI subset).
 *
 * @since 0.3.0
 * @category encoding
 */
export const responseConfig = (format: ResponseFormat): Json.JsonObject =>
  format.type === "text"
    ? { responseMimeType: "text/plain" }
    : {
      responseMimeType: "application/json",
      ...(format.schema === undefined ? {} : { responseJsonSchema: format.schema })
    }

/**
 * The streaming request (`:generateContent`, answered with one JSON body, when
 * `request.streaming === false`). The model may be given with or without its `models/`
 * prefix.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (request: LlmRequest, options: EncodeOptions): WireRequest => {
  const model = request.model.replace(/^models\//, "")
  const reasoning = request.reasoning
  const generationConfig: Record<string, Json.JsonValue> = {
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.maxTokens === undefined ? {} : { maxOutputTokens: request.maxTokens }),
    ...(reasoning === undefined
      ? {}
      : {
        thinkingConfig: {
          includeThoughts: true,
          ...(reasoning.budgetTokens === undefined ? {} : { thinkingBudget: reasoning.budgetTokens }),
          ...(reasoning.effort === undefined || reasoning.budgetTokens !== undefined
            ? {}
            : { thinkingLevel: reasoning.effort })
        }
      }),
    ...(request.responseFormat === undefined ? {} : responseConfig(request.responseFormat))
  }
  return {
    url: join(
      options.baseUrl,
      `models/${encodeURIComponent(model)}:${
        request.streaming === false ? "generateContent" : "streamGenerateContent?alt=sse"
      }`
    ),
    headers: {
      "x-goog-api-key": options.apiKey,
      "content-type": "application/json",
      accept: request.streaming === false ? "application/json" : "text/event-stream"
    },
    body: {
      contents: contents(request),
      ...(request.system === undefined ? {} : { systemInstruction: { parts: [{ text: request.system }] } }),
      ...(request.tools === undefined || request.tools.length === 0
        ? {}
        : {
          tools: [
            {
              functionDeclarations: request.tools.map((tool) => ({
                name: tool.name,
                ...describedBy(tool),
                parameters: tool.parameters
              }))
            }
          ],
          ...(request.toolChoice === undefined
            ? {}
            : { toolConfig: { functionCallingConfig: functionCallingConfig(request.toolChoice) } })
        }),
      ...(Object.keys(generationConfig).length === 0 ? {} : { generationConfig })
    }
  }
}

/**
 * An `effect/ai` prompt and its provider options into Sluice's `LlmRequest`.
 *
 * @internal
 */
import { Json, OutputItem } from "@sluice/core"
import { type LlmRequest, RoundTrip } from "@sluice/providers"
import type * as LanguageModel from "effect/ai/LanguageModel"
import type * as Prompt from "effect/ai/Prompt"
import * as Tool from "effect/ai/Tool"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { metadataKey } from "./toParts.js"

/**
 * What the layer sends with every request besides the prompt.
 *
 * @internal
 */
export interface RequestDefaults {
  readonly model: string
  readonly temperature?: number | undefined
  readonly maxTokens?: number | undefined
  readonly reasoning?: LlmRequest.Reasoning | undefined
}

const Kept = Schema.Struct({ provider: Schema.String, item: OutputItem.OutputItem })
const decodeKept = Schema.decodeUnknownOption(Kept)

/** The Sluice item a part of an earlier response keeps in its options, if any. */
const keptOf = (options: Prompt.ProviderOptions): typeof Kept.Type | undefined =>
  Option.getOrUndefined(decodeKept(options[metadataKey]))

const textOf = (value: unknown): string => typeof value === "string" ? value : JSON.stringify(value) ?? "null"

/** A part of a prompt the request cannot carry. */
export interface Unsupported {
  readonly description: string
}

const decodeJsonObject = Schema.decodeUnknownOption(Json.JsonObject)

const toolDefinition = (tool: Tool.Any): LlmRequest.ToolDefinition => {
  const description = Tool.getDescription(tool)
  return {
    name: tool.name,
    ...(description === undefined ? {} : { description }),
    parameters: Option.getOrElse(decodeJsonObject(Tool.getJsonSchema(tool)), () => ({}))
  }
}

/**
 * The assistant parts of one assistant message: runs of parts that keep Sluice items of
 * one provider go through `RoundTrip.assistantMessage` (signatures, encrypted content
 * and provider items restored); other parts (history written by hand) as they read.
 */
const assistantParts = (message: Prompt.AssistantMessage): Array<LlmRequest.AssistantPart> => {
  const parts: Array<LlmRequest.AssistantPart> = []
  let run: { provider: string; items: Array<OutputItem.OutputItem> } | undefined
  const flush = () => {
    if (run !== undefined) parts.push(...RoundTrip.assistantMessage(run).parts)
    run = undefined
  }
  for (const part of message.content) {
    const kept = keptOf(part.options)
    if (kept !== undefined) {
      if (run !== undefined && run.provider !== kept.provider) flush()
      run ??= { provider: kept.provider, items: [] }
      run.items.push(kept.item)
      continue
    }
    flush()
    switch (part.type) {
      case "text":
        parts.push({ _tag: "text", text: part.text })
        break
      case "reasoning":
        parts.push({ _tag: "reasoning", text: part.text })
        break
      case "tool-call":
        // a provider-executed call without its item cannot be sent back
        if (!part.providerExecuted) {
          parts.push({ _tag: "tool_call", id: part.id, name: part.name, arguments: textOf(part.params) })
        }
        break
      default:
        break
    }
  }
  flush()
  return parts
}

/**
 * `effect/ai`'s tool choice as `LlmRequest`'s: `oneOf` narrows the tools the request
 * carries (`LanguageModel` does that before it calls the model), so it is its mode.
 */
const toolChoiceOf = (choice: LanguageModel.ProviderOptions["toolChoice"]): LlmRequest.ToolChoice =>
  typeof choice === "string" ? choice : "tool" in choice ? { tool: choice.tool } : choice.mode ?? "auto"

/** `effect/ai`'s response format as `LlmRequest`'s: JSON by the schema's JSON Schema, under its object name. */
const responseFormatOf = (format: LanguageModel.ProviderOptions["responseFormat"]): LlmRequest.ResponseFormat => {
  if (format.type === "text") return { type: "text" }
  const schema = Option.getOrUndefined(decodeJsonObject(Tool.getJsonSchemaFromSchema(format.schema)))
  return {
    type: "json",
    ...(schema === undefined ? {} : { schema }),
    ...(format.objectName === "" ? {} : { name: format.objectName })
  }
}

/**
 * The request for `options`: system messages joined into `system`, user text, assistant
 * turns (restored from the Sluice items their parts keep), tool results, the tools the
 * tool choice allows with the choice, and a JSON response format with the schema's JSON
 * Schema. Fails with what the request cannot carry (a file part).
 *
 * @internal
 */
export const requestOf = (
  defaults: RequestDefaults,
  options: LanguageModel.ProviderOptions
): Result.Result<LlmRequest.LlmRequest, Unsupported> => {
  const system: Array<string> = []
  const messages: Array<LlmRequest.Message> = []
  for (const [index, message] of options.prompt.content.entries()) {
    switch (message.role) {
      case "system":
        system.push(message.content)
        break
      case "user": {
        const texts: Array<string> = []
        for (const part of message.content) {
          if (part.type === "file") {
            return Result.fail({
              description: `prompt message ${index}: a file part (${part.mediaType}) cannot be sent: ` +
                "Sluice's LlmRequest carries user text only"
            })
          }
          texts.push(part.text)
        }
        messages.push({ _tag: "user", text: texts.join("\n") })
        break
      }
      case "assistant":
        messages.push({ _tag: "assistant", parts: assistantParts(message) })
        break
      case "tool": {
        const results: Array<LlmRequest.ToolResult> = []
        for (const part of message.content) {
          if (part.type !== "tool-result") continue
          results.push({
            callId: part.id,
            name: part.name,
            output: textOf(part.result),
            ...(part.isFailure ? { isError: true } : {})
          })
        }
        if (results.length > 0) messages.push({ _tag: "tool", results })
        break
      }
    }
  }
  const tools = options.tools.map(toolDefinition)
  return Result.succeed({
    model: defaults.model,
    ...(system.length === 0 ? {} : { system: system.join("\n\n") }),
    messages,
    ...(tools.length === 0 ? {} : { tools, toolChoice: toolChoiceOf(options.toolChoice) }),
    ...(options.responseFormat.type === "json" ? { responseFormat: responseFormatOf(options.responseFormat) } : {}),
    ...(defaults.temperature === undefined ? {} : { temperature: defaults.temperature }),
    ...(defaults.maxTokens === undefined ? {} : { maxTokens: defaults.maxTokens }),
    ...(defaults.reasoning === undefined ? {} : { reasoning: defaults.reasoning })
  })
}

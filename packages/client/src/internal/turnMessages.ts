/**
 * A chat's UI messages as the messages of a turn request (`POST /v1/turns`): the
 * provider-neutral conversation of `LlmRequest` (providers' `LlmRequest.Message`),
 * written out here because the client imports no Node package at run time.
 *
 * @internal
 */
import type { UIMessage } from "ai"

/**
 * Text the assistant wrote, reasoning it did, a tool call it made (`arguments`: the
 * JSON text of the call's input).
 *
 * @internal
 */
export type TurnAssistantPart =
  | { readonly _tag: "text"; readonly text: string }
  | { readonly _tag: "reasoning"; readonly text: string }
  | { readonly _tag: "tool_call"; readonly id: string; readonly name: string; readonly arguments: string }

/**
 * The result of one tool call.
 *
 * @internal
 */
export interface TurnToolResult {
  readonly callId: string
  readonly name: string
  readonly output: string
  readonly isError?: boolean
}

/**
 * One message of a turn request's conversation.
 *
 * @internal
 */
export type TurnMessage =
  | { readonly _tag: "user"; readonly text: string }
  | { readonly _tag: "assistant"; readonly parts: ReadonlyArray<TurnAssistantPart> }
  | { readonly _tag: "tool"; readonly results: ReadonlyArray<TurnToolResult> }

/**
 * What a chat's messages become: the conversation, and the text of its system
 * messages (the request's `system`), if any.
 *
 * @internal
 */
export interface TurnConversation {
  readonly messages: ReadonlyArray<TurnMessage>
  readonly system: string | undefined
}

type Part = UIMessage["parts"][number]

const textOf = (parts: ReadonlyArray<Part>): string =>
  parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n\n")

const jsonText = (value: unknown): string => {
  if (typeof value === "string") return value
  return JSON.stringify(value ?? null)
}

// One step of an assistant message (its parts between two `step-start`s): the
// assistant's turn, then the results of its calls that have one.
const stepMessages = (parts: ReadonlyArray<Part>, options: ToTurnMessagesOptions): ReadonlyArray<TurnMessage> => {
  const said: Array<TurnAssistantPart> = []
  const results: Array<TurnToolResult> = []
  for (const part of parts) {
    if (part.type === "text") {
      if (part.text !== "") said.push({ _tag: "text", text: part.text })
      continue
    }
    if (part.type === "reasoning") {
      if (options.reasoning === true && part.text !== "") said.push({ _tag: "reasoning", text: part.text })
      continue
    }
    if (!("toolCallId" in part)) continue
    // a provider-executed call (a hosted tool) is the provider's own item: without it, left out
    if (part.providerExecuted === true) continue
    const name = part.type === "dynamic-tool" ? part.toolName : part.type.slice("tool-".length)
    const call: TurnAssistantPart = { _tag: "tool_call", id: part.toolCallId, name, arguments: jsonText(part.input) }
    switch (part.state) {
      case "output-available":
        said.push(call)
        results.push({ callId: part.toolCallId, name, output: jsonText(part.output) })
        break
      case "output-error":
        said.push(call)
        results.push({ callId: part.toolCallId, name, output: part.errorText, isError: true })
        break
      case "output-denied":
        said.push(call)
        results.push({ callId: part.toolCallId, name, output: "the tool call was denied", isError: true })
        break
      default:
        // a call without a result (still streaming, waiting for an approval or an
        // output) cannot be sent: a provider refuses a call that has no result
        break
    }
  }
  return [
    ...(said.length === 0 ? [] : [{ _tag: "assistant" as const, parts: said }]),
    ...(results.length === 0 ? [] : [{ _tag: "tool" as const, results }])
  ]
}

/**
 * How messages are mapped: `reasoning` keeps the assistant's reasoning text (off by
 * default: the UI message holds no signature, and a provider may refuse unsigned
 * reasoning).
 *
 * @internal
 */
export interface ToTurnMessagesOptions {
  readonly reasoning?: boolean | undefined
}

/**
 * The conversation of a chat's UI messages: a user message's text parts (joined by a
 * blank line) as user text; an assistant message step by step (`step-start` parts),
 * each its text and tool calls, then a tool message with the results of its calls;
 * system messages' text as `system`. Left out: files, sources, data and custom parts,
 * provider-executed tool calls, calls without a result, reasoning unless asked for,
 * and provider metadata.
 *
 * @internal
 */
export const toTurnConversation = (
  messages: ReadonlyArray<UIMessage>,
  options: ToTurnMessagesOptions = {}
): TurnConversation => {
  const out: Array<TurnMessage> = []
  const system: Array<string> = []
  for (const message of messages) {
    switch (message.role) {
      case "system": {
        const text = textOf(message.parts)
        if (text !== "") system.push(text)
        break
      }
      case "user": {
        const text = textOf(message.parts)
        if (text !== "") out.push({ _tag: "user", text })
        break
      }
      case "assistant": {
        let step: Array<Part> = []
        for (const part of message.parts) {
          if (part.type === "step-start") {
            out.push(...stepMessages(step, options))
            step = []
          } else {
            step.push(part)
          }
        }
        out.push(...stepMessages(step, options))
        break
      }
    }
  }
  return { messages: out, system: system.length === 0 ? undefined : system.join("\n\n") }
}

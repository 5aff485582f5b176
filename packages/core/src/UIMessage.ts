/**
 * The AI SDK's `UIMessage` (what `useChat` holds: an id, a role and parts) as a
 * Schema, the one shape both a server and a browser client of Sluice read and write:
 * a thread's messages (docs/threads.md), the user message a turn starts from.
 *
 * The parts are those Sluice's UI message stream produces and a chat UI sends: `text`,
 * `reasoning`, a tool call (`tool-<name>` with its state, input and output, or
 * `dynamic-tool`), `source-url`, `source-document`, `file`, `step-start` and
 * `data-<name>`. A message's `metadata` is any JSON value.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import * as Json from "./Json.js"

const optional = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(schema)

const providerMetadata = optional(Json.JsonObject)

/**
 * Whether a text or reasoning part is still being written (`streaming`) or done.
 *
 * @since 0.3.0
 * @category schemas
 */
export const PartState = Schema.Literals(["streaming", "done"]).annotate({ identifier: "UIPartState" })

/**
 * Text.
 *
 * @since 0.3.0
 * @category schemas
 */
export const TextPart = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  state: optional(PartState),
  providerMetadata
}).annotate({ identifier: "UITextPart" })

/**
 * @since 0.3.0
 * @category models
 */
export type TextPart = typeof TextPart.Type

/**
 * Reasoning text.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ReasoningPart = Schema.Struct({
  type: Schema.Literal("reasoning"),
  text: Schema.String,
  state: optional(PartState),
  providerMetadata
}).annotate({ identifier: "UIReasoningPart" })

/**
 * Where a tool call is: its input being written, its input complete, its output
 * there, or its call failed (`errorText`).
 *
 * @since 0.3.0
 * @category schemas
 */
export const ToolState = Schema.Literals(["input-streaming", "input-available", "output-available", "output-error"])
  .annotate({ identifier: "UIToolState" })

/**
 * @since 0.3.0
 * @category models
 */
export type ToolState = typeof ToolState.Type

const toolFields = {
  toolCallId: Schema.String,
  state: ToolState,
  input: optional(Json.JsonValue),
  output: optional(Json.JsonValue),
  errorText: optional(Schema.String),
  providerExecuted: optional(Schema.Boolean),
  callProviderMetadata: providerMetadata
}

/**
 * A call of a tool the UI knows by name: `type` is `tool-<name>`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ToolPart = Schema.Struct({
  type: Schema.TemplateLiteral(["tool-", Schema.String]),
  ...toolFields
}).annotate({ identifier: "UIToolPart" })

/**
 * @since 0.3.0
 * @category models
 */
export type ToolPart = typeof ToolPart.Type

/**
 * A call of a tool the UI does not know ahead: its name in `toolName`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const DynamicToolPart = Schema.Struct({
  type: Schema.Literal("dynamic-tool"),
  toolName: Schema.String,
  ...toolFields
}).annotate({ identifier: "UIDynamicToolPart" })

/**
 * A web source.
 *
 * @since 0.3.0
 * @category schemas
 */
export const SourceUrlPart = Schema.Struct({
  type: Schema.Literal("source-url"),
  sourceId: Schema.String,
  url: Schema.String,
  title: optional(Schema.String),
  providerMetadata
}).annotate({ identifier: "UISourceUrlPart" })

/**
 * A document source.
 *
 * @since 0.3.0
 * @category schemas
 */
export const SourceDocumentPart = Schema.Struct({
  type: Schema.Literal("source-document"),
  sourceId: Schema.String,
  mediaType: Schema.String,
  title: Schema.String,
  filename: optional(Schema.String),
  providerMetadata
}).annotate({ identifier: "UISourceDocumentPart" })

/**
 * A file, by URL (a data URL or a hosted one).
 *
 * @since 0.3.0
 * @category schemas
 */
export const FilePart = Schema.Struct({
  type: Schema.Literal("file"),
  mediaType: Schema.String,
  filename: optional(Schema.String),
  url: Schema.String,
  providerMetadata
}).annotate({ identifier: "UIFilePart" })

/**
 * The start of a step (one provider response of the message).
 *
 * @since 0.3.0
 * @category schemas
 */
export const StepStartPart = Schema.Struct({ type: Schema.Literal("step-start") }).annotate({
  identifier: "UIStepStartPart"
})

/**
 * Application data: `type` is `data-<name>`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const DataPart = Schema.Struct({
  type: Schema.TemplateLiteral(["data-", Schema.String]),
  id: optional(Schema.String),
  data: Json.JsonValue
}).annotate({ identifier: "UIDataPart" })

/**
 * Any part of a message.
 *
 * @since 0.3.0
 * @category schemas
 */
export const UIPart = Schema.Union([
  TextPart,
  ReasoningPart,
  DynamicToolPart,
  SourceUrlPart,
  SourceDocumentPart,
  FilePart,
  StepStartPart,
  ToolPart,
  DataPart
]).annotate({ identifier: "UIPart" })

/**
 * @since 0.3.0
 * @category models
 */
export type UIPart = typeof UIPart.Type

/**
 * Who wrote a message.
 *
 * @since 0.3.0
 * @category schemas
 */
export const UIRole = Schema.Literals(["system", "user", "assistant"]).annotate({ identifier: "UIRole" })

/**
 * @since 0.3.0
 * @category models
 */
export type UIRole = typeof UIRole.Type

/**
 * A message.
 *
 * @since 0.3.0
 * @category schemas
 */
export const UIMessage = Schema.Struct({
  id: Schema.String,
  role: UIRole,
  metadata: optional(Json.JsonValue),
  parts: Schema.Array(UIPart)
}).annotate({ identifier: "UIMessage" })

/**
 * @since 0.3.0
 * @category models
 */
export type UIMessage = typeof UIMessage.Type

/**
 * The text of a message: its text parts, joined by a blank line.
 *
 * @since 0.3.0
 * @category accessors
 */
export const text = (message: UIMessage): string =>
  message.parts.flatMap((part) => part.type === "text" ? [part.text] : []).join("\n\n")

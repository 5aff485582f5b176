/**
 * The finished items of a turn, carried by `item_done` events. A union by `type`.
 *
 * Everything a provider demands back in the next request is kept: reasoning
 * signatures, redacted thinking data, encrypted reasoning, and provider metadata such
 * as Gemini's `thoughtSignature` on any part.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { JsonObject } from "./Json.js"

/**
 * Who a message is from.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageOrigin = Schema.Literals(["user", "agent", "system"]).annotate({ identifier: "MessageOrigin" })

/**
 * @since 0.1.0
 * @category models
 */
export type MessageOrigin = typeof MessageOrigin.Type

/**
 * The item kinds of docs/events.md (`item_start.item_type`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ItemType = Schema.Literals([
  "message",
  "reasoning",
  "function_call",
  "function_call_output",
  "error",
  "script_execution",
  "compaction",
  "approval_request"
]).annotate({ identifier: "ItemType" })

/**
 * @since 0.1.0
 * @category models
 */
export type ItemType = typeof ItemType.Type

const providerMetadata = Schema.optionalKey(JsonObject)

const optional = <S extends Schema.Constraint>(schema: S) => Schema.optionalKey(schema)
const Index = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * Where a citation points inside the cited document: characters, pages or content
 * blocks, from `start` to `end` as the provider counts them (Anthropic `char_location`,
 * `page_location`, `content_block_location`, `search_result_location`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const SourceLocation = Schema.Struct({
  unit: Schema.Literals(["char", "page", "block"]),
  start: Index,
  end: Index
}).annotate({ identifier: "SourceLocation" })

/**
 * @since 0.1.0
 * @category models
 */
export type SourceLocation = typeof SourceLocation.Type

/**
 * A source a message cites (docs/events.md's vocabulary leaves sources open; this is
 * Sluice's): a web page (`kind: "url"`, with `url` and `title`) or a document
 * (`kind: "document"`: a request document by `document_index`, or a file by
 * `file_id` / `filename`). `cited_text` is the passage quoted when the provider gives
 * it; `location` where it sits in the document; `text_start` / `text_end` the span of
 * the message's own text the citation supports (OpenAI annotations; a single `index`
 * gives both). The provider's own citation object stays in `provider_metadata`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Source = Schema.Struct({
  kind: Schema.Literals(["url", "document"]),
  url: optional(Schema.String),
  title: optional(Schema.String),
  cited_text: optional(Schema.String),
  document_index: optional(Index),
  file_id: optional(Schema.String),
  filename: optional(Schema.String),
  location: optional(SourceLocation),
  text_start: optional(Index),
  text_end: optional(Index)
}).annotate({ identifier: "Source" })

/**
 * @since 0.1.0
 * @category models
 */
export type Source = typeof Source.Type

/**
 * A text message. `sources` are the sources its text cites, in the order the provider
 * gave them.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageItem = Schema.Struct({
  type: Schema.Literal("message"),
  id: Schema.String,
  content: Schema.String,
  origin: MessageOrigin,
  sources: optional(Schema.Array(Source)),
  provider_metadata: providerMetadata
}).annotate({ identifier: "MessageItem" })

/**
 * What reasoning text is: `summary`, a summary of the model's thinking written for
 * the reader (OpenAI Responses reasoning `summary` parts, Gemini thought parts, Claude 4
 * models' summarized thinking), or `raw`, the thinking as the model produced it
 * (Responses `reasoning_text`, Claude 3.7 and Anthropic-compatible servers' thinking,
 * `reasoning_content` of OpenAI-compatible servers). Text of no stated kind counts as
 * `raw`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ReasoningKind = Schema.Literals(["summary", "raw"]).annotate({ identifier: "ReasoningKind" })

/**
 * @since 0.3.0
 * @category models
 */
export type ReasoningKind = typeof ReasoningKind.Type

/**
 * Reasoning: the visible thinking text or summary, plus whatever the provider needs to
 * verify it later (`signature`, redacted `data`, `encrypted_content`). `reasoning_kind`
 * (since 0.2.0) says what `content` is when all of it is of one kind; an item whose
 * deltas mix kinds leaves it out (its deltas say).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReasoningItem = Schema.Struct({
  type: Schema.Literal("reasoning"),
  id: Schema.String,
  content: Schema.String,
  reasoning_kind: Schema.optionalKey(ReasoningKind),
  provider_id: Schema.optionalKey(Schema.String),
  signature: Schema.optionalKey(Schema.String),
  redacted: Schema.optionalKey(Schema.Boolean),
  data: Schema.optionalKey(Schema.String),
  encrypted_content: Schema.optionalKey(Schema.String),
  provider_metadata: providerMetadata
}).annotate({ identifier: "ReasoningItem" })

/**
 * `true` on a tool call the provider ran itself and on its result (Anthropic
 * `server_tool_use` and its `*_tool_result`, OpenAI Responses `web_search_call`,
 * `file_search_call`, `code_interpreter_call`, `image_generation_call`, `mcp_call`,
 * Gemini `executableCode` / `codeExecutionResult`, an AI SDK part with
 * `providerExecuted`). The caller must not run such a call: it already ran. It still
 * goes back in the next request, in the form its provider requires (`provider_metadata`
 * keeps what that takes). Absent on calls the caller must run.
 */
const providerExecuted = Schema.optionalKey(Schema.Boolean)

/**
 * A tool call. `arguments` is the raw JSON text exactly as the provider sent it;
 * `provider_executed` marks a call the provider ran itself (not one for the caller).
 *
 * @since 0.1.0
 * @category schemas
 */
export const FunctionCallItem = Schema.Struct({
  type: Schema.Literal("function_call"),
  id: Schema.String,
  call_id: Schema.String,
  name: Schema.String,
  arguments: Schema.String,
  provider_executed: providerExecuted,
  provider_metadata: providerMetadata
}).annotate({ identifier: "FunctionCallItem" })

/**
 * The result of a tool call, linked to it by `call_id`; `provider_executed` when the
 * provider ran the tool and reported its result in the turn.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FunctionCallOutputItem = Schema.Struct({
  type: Schema.Literal("function_call_output"),
  id: Schema.String,
  call_id: Schema.String,
  output: Schema.String,
  success: Schema.Boolean,
  provider_executed: providerExecuted,
  provider_metadata: providerMetadata
}).annotate({ identifier: "FunctionCallOutputItem" })

/**
 * An error shown in the conversation.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ErrorItem = Schema.Struct({
  type: Schema.Literal("error"),
  id: Schema.String,
  code: Schema.String,
  message: Schema.String
}).annotate({ identifier: "ErrorItem" })

/**
 * Code the agent ran, with its output when there is one.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ScriptExecutionItem = Schema.Struct({
  type: Schema.Literal("script_execution"),
  id: Schema.String,
  code: Schema.String,
  output: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "ScriptExecutionItem" })

/**
 * A summary the provider wrote of the conversation so far, to stand in for it from now
 * on (Anthropic context compaction: the `compaction` content block). It must go back in
 * the next request, where it replaces everything before it; `content` is the summary
 * text (empty when the provider withheld it), `provider_metadata` keeps the rest of the
 * block.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CompactionItem = Schema.Struct({
  type: Schema.Literal("compaction"),
  id: Schema.String,
  content: Schema.String,
  provider_metadata: providerMetadata
}).annotate({ identifier: "CompactionItem" })

/**
 * A request the application must answer before the provider goes on: the provider
 * wants to call a tool on a remote server (OpenAI Responses `mcp_approval_request`)
 * and asks whether it may. It is not a tool call for the caller to run, and it is
 * never among the turn's tool calls: the caller answers it with an approval or a
 * denial in the next request (OpenAI `mcp_approval_response` with
 * `approval_request_id` = `provider_id`), and the provider then runs the tool or not.
 *
 * `server_label` names the server, `name` the tool it would call, `arguments` the raw
 * JSON text of the call as the provider sent it, `provider_id` the provider's id of the
 * request (what the answer refers to). `provider_metadata` keeps the rest of the
 * provider's item.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ApprovalRequestItem = Schema.Struct({
  type: Schema.Literal("approval_request"),
  id: Schema.String,
  provider_id: Schema.String,
  server_label: Schema.optionalKey(Schema.String),
  name: Schema.String,
  arguments: Schema.String,
  provider_metadata: providerMetadata
}).annotate({ identifier: "ApprovalRequestItem" })

/**
 * Any finished item.
 *
 * @since 0.1.0
 * @category schemas
 */
export const OutputItem = Schema.Union([
  MessageItem,
  ReasoningItem,
  FunctionCallItem,
  FunctionCallOutputItem,
  ErrorItem,
  ScriptExecutionItem,
  CompactionItem,
  ApprovalRequestItem
]).annotate({ identifier: "OutputItem" })

/**
 * @since 0.1.0
 * @category models
 */
export type OutputItem = typeof OutputItem.Type

/**
 * @since 0.1.0
 * @category models
 */
export type MessageItem = typeof MessageItem.Type

/**
 * @since 0.1.0
 * @category models
 */
export type ReasoningItem = typeof ReasoningItem.Type

/**
 * @since 0.1.0
 * @category models
 */
export type FunctionCallItem = typeof FunctionCallItem.Type

/**
 * @since 0.1.0
 * @category models
 */
export type FunctionCallOutputItem = typeof FunctionCallOutputItem.Type

/**
 * @since 0.1.0
 * @category models
 */
export type ErrorItem = typeof ErrorItem.Type

/**
 * @since 0.1.0
 * @category models
 */
export type ScriptExecutionItem = typeof ScriptExecutionItem.Type

/**
 * @since 0.1.0
 * @category models
 */
export type CompactionItem = typeof CompactionItem.Type

/**
 * @since 0.3.0
 * @category models
 */
export type ApprovalRequestItem = typeof ApprovalRequestItem.Type

/**
 * The text an item's `item_delta`s carry: a message's or reasoning's content, a
 * function call's argument text, a tool output, an error's message, a script's code, a
 * compaction's summary, an approval request's argument text.
 *
 * @since 0.1.0
 * @category accessors
 */
export const streamedContent = (item: OutputItem): string => {
  switch (item.type) {
    case "message":
    case "reasoning":
    case "compaction":
      return item.content
    case "function_call":
    case "approval_request":
      return item.arguments
    case "function_call_output":
      return item.output
    case "error":
      return item.message
    case "script_execution":
      return item.code
  }
}

/**
 * Whether an item is a tool call the caller must run: a `function_call` the provider
 * did not run itself.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isClientToolCall = (item: OutputItem): item is FunctionCallItem =>
  item.type === "function_call" && item.provider_executed !== true

/**
 * Whether an item is a tool call the provider ran itself (`provider_executed`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isProviderToolCall = (item: OutputItem): item is FunctionCallItem =>
  item.type === "function_call" && item.provider_executed === true

/**
 * Whether an item is a request the application must answer (approve or deny) in the
 * next request: an `approval_request`. Never a tool call to run.
 *
 * @since 0.3.0
 * @category predicates
 */
export const isApprovalRequest = (item: OutputItem): item is ApprovalRequestItem => item.type === "approval_request"

/**
 * What a UI binds (docs/upserts.md): each upsert carries the complete current state of one
 * item, so a renderer needs no delta logic and heals itself after a missed message.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { JsonObject, JsonValue } from "./Json.js"
import { MessageOrigin, Source } from "./OutputItem.js"

// a UUID in its 8-4-4-4-12 hex form, any version: the shape only (`isGUID`, where `isUUID` would also check the version)
const Uuid = Schema.String.check(Schema.isGUID())

/**
 * `message | reasoning | tool_call | tool_output | error | compaction |
 * approval_request`. An `approval_request` (since 0.2.0) is a question for the user
 * (may the provider call this tool on this server?), never a tool call to run.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UIUpsertItemType = Schema.Literals([
  "message",
  "reasoning",
  "tool_call",
  "tool_output",
  "error",
  "compaction",
  "approval_request"
]).annotate({
  identifier: "UIUpsertItemType"
})

/**
 * @since 0.1.0
 * @category models
 */
export type UIUpsertItemType = typeof UIUpsertItemType.Type

/**
 * `created | updated | completed`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UIUpsertChangeType = Schema.Literals(["created", "updated", "completed"]).annotate({
  identifier: "UIUpsertChangeType"
})

/**
 * @since 0.1.0
 * @category models
 */
export type UIUpsertChangeType = typeof UIUpsertChangeType.Type

/**
 * An item's full state so far. `providerExecuted` is `true` on the `tool_call` and
 * `tool_output` of a tool the provider ran itself (web search, code execution, ...),
 * which a UI shows as done by the provider and never offers to run. `sources` are the
 * sources a message cites (`OutputItem.Source`), on its `completed` upsert. An
 * `approval_request` upsert names the tool in `toolName` and `toolArguments`, the server
 * in `serverLabel`, and the provider's request id (what the answer refers to) in
 * `approvalRequestId` (both since 0.2.0).
 *
 * @since 0.1.0
 * @category schemas
 */
export const UIUpsert = Schema.Struct({
  type: Schema.Literal("item_upsert"),
  turnId: Uuid,
  threadId: Uuid,
  itemId: Schema.String,
  itemType: UIUpsertItemType,
  changeType: UIUpsertChangeType,
  content: Schema.String,
  origin: Schema.optionalKey(MessageOrigin),
  providerId: Schema.optionalKey(Schema.String),
  toolName: Schema.optionalKey(Schema.String),
  toolArguments: Schema.optionalKey(Schema.Union([JsonObject, Schema.String])),
  callId: Schema.optionalKey(Schema.String),
  toolOutput: Schema.optionalKey(JsonValue),
  success: Schema.optionalKey(Schema.Boolean),
  providerExecuted: Schema.optionalKey(Schema.Boolean),
  sources: Schema.optionalKey(Schema.Array(Source)),
  serverLabel: Schema.optionalKey(Schema.String),
  approvalRequestId: Schema.optionalKey(Schema.String),
  errorCode: Schema.optionalKey(Schema.String),
  errorMessage: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "UIUpsert" })

/**
 * @since 0.1.0
 * @category models
 */
export type UIUpsert = typeof UIUpsert.Type

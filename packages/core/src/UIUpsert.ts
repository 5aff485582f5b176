/**
 * What a UI binds (docs/upserts.md): each upsert carries the complete current state of one
 * item, so a renderer needs no delta logic and heals itself after a missed message.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { JsonObject, JsonValue } from "./Json.js"
import { MessageOrigin, Source } from "./OutputItem.js"

/**
 * `message | reasoning | tool_call | tool_output | error`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UIUpsertItemType = Schema.Literal(
  "message",
  "reasoning",
  "tool_call",
  "tool_output",
  "error",
  "compaction"
).annotations({
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
export const UIUpsertChangeType = Schema.Literal("created", "updated", "completed").annotations({
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
 * sources a message cites (`OutputItem.Source`), on its `completed` upsert.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UIUpsert = Schema.Struct({
  type: Schema.Literal("item_upsert"),
  turnId: Schema.UUID,
  threadId: Schema.UUID,
  itemId: Schema.String,
  itemType: UIUpsertItemType,
  changeType: UIUpsertChangeType,
  content: Schema.String,
  origin: Schema.optionalWith(MessageOrigin, { exact: true }),
  providerId: Schema.optionalWith(Schema.String, { exact: true }),
  toolName: Schema.optionalWith(Schema.String, { exact: true }),
  toolArguments: Schema.optionalWith(Schema.Union(JsonObject, Schema.String), { exact: true }),
  callId: Schema.optionalWith(Schema.String, { exact: true }),
  toolOutput: Schema.optionalWith(JsonValue, { exact: true }),
  success: Schema.optionalWith(Schema.Boolean, { exact: true }),
  providerExecuted: Schema.optionalWith(Schema.Boolean, { exact: true }),
  sources: Schema.optionalWith(Schema.Array(Source), { exact: true }),
  errorCode: Schema.optionalWith(Schema.String, { exact: true }),
  errorMessage: Schema.optionalWith(Schema.String, { exact: true })
}).annotations({ identifier: "UIUpsert" })

/**
 * @since 0.1.0
 * @category models
 */
export type UIUpsert = typeof UIUpsert.Type

/**
 * Turn lifecycle events for a UI (docs/upserts.md): started, completed, error.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { ResponseStatus } from "./StreamEvent.js"

// a UUID in its 8-4-4-4-12 hex form, any version: the shape only (`isGUID`, where `isUUID` would also check the version)
const Uuid = Schema.String.check(Schema.isGUID())

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * Token counts as a UI shows them. `promptTokens` counts every input token, cached or
 * not; the optional breakdown says how they split (`inputTokens` not from a cache,
 * `cacheReadTokens` read from the provider's prompt cache, `cacheWriteTokens` written
 * to it) and how many of `completionTokens` were reasoning (`reasoningTokens`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const UITurnEventUsage = Schema.Struct({
  promptTokens: Count,
  completionTokens: Count,
  totalTokens: Count,
  inputTokens: Schema.optionalKey(Count),
  cacheReadTokens: Schema.optionalKey(Count),
  cacheWriteTokens: Schema.optionalKey(Count),
  reasoningTokens: Schema.optionalKey(Count)
}).annotate({ identifier: "UITurnEventUsage" })

/**
 * @since 0.1.0
 * @category models
 */
export type UITurnEventUsage = typeof UITurnEventUsage.Type

/**
 * A code and a message.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UITurnEventError = Schema.Struct({
  code: Schema.String,
  message: Schema.String
}).annotate({ identifier: "UITurnEventError" })

/**
 * @since 0.1.0
 * @category models
 */
export type UITurnEventError = typeof UITurnEventError.Type

/**
 * A turn started.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TurnStarted = Schema.Struct({
  type: Schema.Literal("turn_started"),
  turnId: Uuid,
  threadId: Uuid,
  modelId: Schema.optionalKey(Schema.String),
  providerId: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "TurnStarted" })

/**
 * A turn ended, with its status and usage when known.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TurnCompleted = Schema.Struct({
  type: Schema.Literal("turn_completed"),
  turnId: Uuid,
  threadId: Uuid,
  status: ResponseStatus,
  usage: Schema.optionalKey(UITurnEventUsage)
}).annotate({ identifier: "TurnCompleted" })

/**
 * A turn failed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TurnError = Schema.Struct({
  type: Schema.Literal("turn_error"),
  turnId: Uuid,
  threadId: Uuid,
  error: UITurnEventError
}).annotate({ identifier: "TurnError" })

/**
 * Any turn event.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UITurnEvent = Schema.Union([TurnStarted, TurnCompleted, TurnError]).annotate({
  identifier: "UITurnEvent"
})

/**
 * @since 0.1.0
 * @category models
 */
export type UITurnEvent = typeof UITurnEvent.Type

/**
 * @since 0.1.0
 * @category models
 */
export type UITurnEventType = UITurnEvent["type"]

/**
 * Turn lifecycle events for a UI (docs/upserts.md): started, completed, error.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { ResponseStatus } from "./StreamEvent.js"

const Count = Schema.Int.pipe(Schema.nonNegative())

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
  inputTokens: Schema.optionalWith(Count, { exact: true }),
  cacheReadTokens: Schema.optionalWith(Count, { exact: true }),
  cacheWriteTokens: Schema.optionalWith(Count, { exact: true }),
  reasoningTokens: Schema.optionalWith(Count, { exact: true })
}).annotations({ identifier: "UITurnEventUsage" })

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
}).annotations({ identifier: "UITurnEventError" })

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
  turnId: Schema.UUID,
  threadId: Schema.UUID,
  modelId: Schema.optionalWith(Schema.String, { exact: true }),
  providerId: Schema.optionalWith(Schema.String, { exact: true })
}).annotations({ identifier: "TurnStarted" })

/**
 * A turn ended, with its status and usage when known.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TurnCompleted = Schema.Struct({
  type: Schema.Literal("turn_completed"),
  turnId: Schema.UUID,
  threadId: Schema.UUID,
  status: ResponseStatus,
  usage: Schema.optionalWith(UITurnEventUsage, { exact: true })
}).annotations({ identifier: "TurnCompleted" })

/**
 * A turn failed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TurnError = Schema.Struct({
  type: Schema.Literal("turn_error"),
  turnId: Schema.UUID,
  threadId: Schema.UUID,
  error: UITurnEventError
}).annotations({ identifier: "TurnError" })

/**
 * Any turn event.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UITurnEvent = Schema.Union(TurnStarted, TurnCompleted, TurnError).annotations({
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

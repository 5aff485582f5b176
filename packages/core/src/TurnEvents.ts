/**
 * The turn events of Stream B (docs/upserts.md#uiturnevent) as a turn's ending writes
 * them: `turn_completed` with its usage, `turn_error` with the error's code and
 * message. The upsert stage (`@sluice/upserts`) and whoever else ends a turn in
 * Stream B (`TurnEnding` of `@sluice/turns`, for a turn whose producer is gone) build
 * them here, so a turn ends the same way whoever ends it.
 *
 * @since 0.3.0
 */
import type * as StreamEvent from "./StreamEvent.js"
import type * as UITurnEvent from "./UITurnEvent.js"
import type * as Usage from "./Usage.js"

/**
 * The turn a turn event belongs to.
 *
 * @since 0.3.0
 * @category models
 */
export interface TurnIds {
  readonly turnId: string
  readonly threadId: string
}

/**
 * `turn_completed` with the turn's status, and its usage in Stream B's terms when
 * there is one.
 *
 * @since 0.3.0
 * @category constructors
 */
export const turnCompleted = (
  ids: TurnIds,
  status: StreamEvent.ResponseStatus,
  usage: Usage.Usage | undefined
): UITurnEvent.UITurnEvent =>
  usage === undefined
    ? { type: "turn_completed", turnId: ids.turnId, threadId: ids.threadId, status }
    : {
      type: "turn_completed",
      turnId: ids.turnId,
      threadId: ids.threadId,
      status,
      usage: {
        promptTokens: usage.input + usage.cacheRead + usage.cacheWrite,
        completionTokens: usage.output,
        totalTokens: usage.total,
        inputTokens: usage.input,
        cacheReadTokens: usage.cacheRead,
        cacheWriteTokens: usage.cacheWrite,
        reasoningTokens: usage.reasoning
      }
    }

/**
 * `turn_error` with the error's code and message (nothing else of the error reaches
 * Stream B).
 *
 * @since 0.3.0
 * @category constructors
 */
export const turnError = (
  ids: TurnIds,
  error: Pick<StreamEvent.ErrorObject, "code" | "message">
): UITurnEvent.UITurnEvent => ({
  type: "turn_error",
  turnId: ids.turnId,
  threadId: ids.threadId,
  error: { code: error.code, message: error.message }
})

/**
 * The utilities docs/upserts.md names, under its names. Each is the one shared
 * implementation: the token estimate, JSON parsing and ids come from `@sluice/core`,
 * the retry delay from `RetryPolicy`.
 *
 * @since 0.1.0
 */
import { Ids, Json, Tokens } from "@sluice/core"
import * as RetryPolicy from "./RetryPolicy.js"

/**
 * Estimated token count of a text: characters / 4, rounded up.
 *
 * @since 0.1.0
 * @category utilities
 */
export const estimateTokenCount: (text: string) => number = Tokens.estimateTokenCount

/**
 * Parses JSON text, returning the original string when it is not valid JSON.
 *
 * @since 0.1.0
 * @category utilities
 */
export const parseJsonSafe: (json: string) => Json.JsonValue = Json.parseOrString

/**
 * A fresh UUID for an event id.
 *
 * @since 0.1.0
 * @category utilities
 */
export const generateEventId: () => string = Ids.generateEventId

/**
 * The exponential, capped delay before retry `attempt` (0-based).
 *
 * @since 0.1.0
 * @category utilities
 */
export const calculateRetryDelay: (attempt: number, baseMs: number, maxMs: number) => number =
  RetryPolicy.calculateRetryDelay

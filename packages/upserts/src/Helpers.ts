/**
 * The utilities docs/upserts.md names, under its names. Each is the one shared
 * implementation: the token estimate, JSON parsing and ids come from `@sluice/core`,
 * the retry delay from `RetryPolicy`.
 *
 * @since 0.1.0
 */
import { Ids, Json, Tokens } from "@sluice/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
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

/**
 * Waits `ms` milliseconds on Effect's `Clock` (a `TestClock` in tests), the retry
 * delay's wait. The design's `sleep` gives a `Promise` over `setTimeout`; this one is an
 * Effect, so a test moves it with the clock instead of waiting
 * (docs/decisions/upserts-seed-utilities.md). A negative or non-finite `ms` waits 0.
 *
 * @since 0.3.0
 * @category utilities
 */
export const sleep = (ms: number): Effect.Effect<void> =>
  Effect.sleep(Duration.millis(Number.isFinite(ms) && ms > 0 ? ms : 0))

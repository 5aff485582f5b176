/**
 * `@sluice/core`: the hub vocabulary every Sluice stage speaks, SSE framing, and the
 * helpers every stage shares.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as Backoff from "./Backoff.js"

/**
 * @since 0.1.0
 */
export * as EventOrder from "./EventOrder.js"

/**
 * @since 0.1.0
 */
export * as FinishReason from "./FinishReason.js"

/**
 * @since 0.1.0
 */
export * as Ids from "./Ids.js"

/**
 * @since 0.1.0
 */
export * as Json from "./Json.js"

/**
 * @since 0.3.0
 */
export * as LastEntry from "./LastEntry.js"

/**
 * @since 0.1.0
 */
export * as OutputItem from "./OutputItem.js"

/**
 * @since 0.1.0
 */
export * as ProviderError from "./ProviderError.js"

/**
 * @since 0.3.0
 */
export * as RetryAfter from "./RetryAfter.js"

/**
 * @since 0.1.0
 */
export * as SchemaDecode from "./SchemaDecode.js"

/**
 * @since 0.1.0
 */
export * as SchemaGuard from "./SchemaGuard.js"

/**
 * @since 0.1.0
 */
export * as Sse from "./Sse.js"

/**
 * @since 0.1.0
 */
export * as StreamBMessage from "./StreamBMessage.js"

/**
 * @since 0.1.0
 */
export * as StreamEvent from "./StreamEvent.js"

/**
 * @since 0.1.0
 */
export * as Tokens from "./Tokens.js"

/**
 * @since 0.1.0
 */
export * as Text from "./Text.js"

/**
 * @since 0.1.0
 */
export * as ToolCallId from "./ToolCallId.js"

/**
 * @since 0.1.0
 */
export * as TurnBuilder from "./TurnBuilder.js"

/**
 * @since 0.1.0
 */
export * as UITurnEvent from "./UITurnEvent.js"

/**
 * Stream B's turn events (`turn_completed`, `turn_error`) as a turn's ending writes them.
 *
 * @since 0.3.0
 */
export * as TurnEvents from "./TurnEvents.js"

/**
 * @since 0.1.0
 */
export * as UIUpsert from "./UIUpsert.js"

/**
 * @since 0.1.0
 */
export * as Usage from "./Usage.js"

/**
 * One clock for the timers of a process: a heap of timers, one fiber.
 *
 * @since 0.3.0
 */
export * as TimerWheel from "./TimerWheel.js"

/**
 * The AI SDK's `UIMessage` as a Schema: a thread's messages, a turn's user message.
 *
 * @since 0.3.0
 */
export * as UIMessage from "./UIMessage.js"

/**
 * What a client sends to start a thread's next turn, and its decoding errors.
 *
 * @since 0.3.0
 */
export * as ThreadInput from "./ThreadInput.js"

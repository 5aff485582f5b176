/**
 * `@sluice/views`: a stream's events in the shapes other code expects, as
 * docs/views.md specifies them: `ProcessedChunk`, the assistant message built by
 * `MessageAccumulator` from normalized event patches (`EventPatch`,
 * `StreamEventPatches`, `AssistantMessage`), `ToolCallAccumulator` over raw provider
 * fragments, and `ErrorDescription` for a user. Sluice's own pipeline, server and CLI
 * use none of them: they fold a turn with `@sluice/accumulator`.
 *
 * @since 0.3.0
 */

/**
 * @since 0.3.0
 */
export * as AssistantMessage from "./AssistantMessage.js"

/**
 * @since 0.3.0
 */
export * as ErrorDescription from "./ErrorDescription.js"

/**
 * @since 0.3.0
 */
export * as EventPatch from "./EventPatch.js"

/**
 * @since 0.3.0
 */
export * as MessageAccumulator from "./MessageAccumulator.js"

/**
 * @since 0.3.0
 */
export * as MessageAccumulatorError from "./MessageAccumulatorError.js"

/**
 * @since 0.3.0
 */
export * as ProcessedChunk from "./ProcessedChunk.js"

/**
 * @since 0.3.0
 */
export * as StreamEventPatches from "./StreamEventPatches.js"

/**
 * @since 0.3.0
 */
export * as ToolCallAccumulator from "./ToolCallAccumulator.js"

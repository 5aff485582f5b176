/**
 * `@sluice/accumulator`: StreamEvents folded into turns, and the views of a turn that
 * the seed documents describe.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as Accumulator from "./Accumulator.js"

/**
 * @since 0.1.0
 */
export * as AccumulatorError from "./AccumulatorError.js"

/**
 * @since 0.1.0
 */
export * as Summary from "./Summary.js"

/**
 * @since 0.1.0
 */
export * as Turn from "./Turn.js"

/**
 * @since 0.1.0
 */
export * as IContent from "./IContent.js"

/**
 * @since 0.1.0
 */
export { ToolCallId } from "@sluice/core"

/**
 * @since 0.1.0
 */
export * as ProcessedChunk from "./ProcessedChunk.js"

/**
 * @since 0.1.0
 */
export * as AssistantMessage from "./AssistantMessage.js"

/**
 * @since 0.1.0
 */
export * as EventPatch from "./EventPatch.js"

/**
 * @since 0.1.0
 */
export * as MessageAccumulator from "./MessageAccumulator.js"

/**
 * @since 0.1.0
 */
export * as MessageAccumulatorError from "./MessageAccumulatorError.js"

/**
 * @since 0.1.0
 */
export * as StreamEventPatches from "./StreamEventPatches.js"

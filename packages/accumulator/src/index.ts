/**
 * `@sluice/accumulator`: StreamEvents folded into turns, the turn's summary, and its
 * `IContent` view (the other views are `@sluice/views`').
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
 * @since 0.3.0
 */
export * as ProviderErrors from "./ProviderErrors.js"

/**
 * `@sluice/upserts`: StreamEvents into UI-ready upserts (docs/upserts.md), as an Effect
 * `Stream` transformer and as a Promise facade for callers outside Effect.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as Gradient from "./Gradient.js"

/**
 * @since 0.1.0
 */
export * as ItemBuffer from "./ItemBuffer.js"

/**
 * @since 0.1.0
 */
export * as RetryPolicy from "./RetryPolicy.js"

/**
 * @since 0.1.0
 */
export * as StreamBMessages from "./StreamBMessages.js"

/**
 * @since 0.1.0
 */
export * as UpsertErrors from "./UpsertErrors.js"

/**
 * @since 0.1.0
 */
export * as UpsertOptions from "./UpsertOptions.js"

/**
 * @since 0.1.0
 */
export * as UpsertStream from "./UpsertStream.js"

/**
 * @since 0.1.0
 */
export { UpsertStreamProcessor, type UpsertStreamProcessorOptions } from "./UpsertStreamProcessor.js"

/**
 * @since 0.1.0
 */
export type { BufferInfo, ItemBufferOptions, ItemBufferState } from "./ItemBuffer.js"

/**
 * @since 0.1.0
 */
export { EmitFailed, InvalidUpsertOptions, ProcessorDestroyed, UnexpectedEvent } from "./UpsertErrors.js"

/**
 * @since 0.1.0
 */
export { calculateRetryDelay, estimateTokenCount, generateEventId, parseJsonSafe } from "./Helpers.js"

/**
 * @since 0.3.0
 */
export { sleep } from "./Helpers.js"

/**
 * The upsert stage as effects, for a runner that drives a turn's stages itself.
 *
 * @since 0.3.0
 */
export * as UpsertStage from "./UpsertStage.js"

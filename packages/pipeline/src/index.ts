/**
 * Sluice's front door: one call runs a turn from a provider's bytes to both Redis
 * streams and back with the final turn, and makes sure the turn ends.
 *
 * @since 0.1.0
 */

/**
 * A turn's ids, key prefix and trace context, given once.
 *
 * @since 0.1.0
 */
export * as TurnContext from "./TurnContext.js"

/**
 * Why a turn stopped before its events ended it.
 *
 * @since 0.3.0
 */
export * as StopReason from "./StopReason.js"

/**
 * The pipeline: events -> Stream A -> the folded turn -> upserts -> Stream B.
 *
 * @since 0.1.0
 */
export * as TurnPipeline from "./TurnPipeline.js"

/**
 * Where a turn's events come from.
 *
 * @since 0.1.0
 */
export * as TurnSource from "./TurnSource.js"

/**
 * W3C trace context: a caller's `traceparent` checked, and turned into a span parent.
 *
 * @since 0.1.0
 */
export * as TraceParent from "./TraceParent.js"

/**
 * The generation entry point: one live request as `IContent`s, an `AsyncIterable`
 * (`generateStreaming`) or an Effect `Stream`.
 *
 * @since 0.3.0
 */
export * as Generation from "./Generation.js"

/**
 * The failures a turn's pipeline can end with, and the one classification of them
 * (`PipelineError.classify`), shared by the pipeline and the applications on it.
 *
 * @since 0.3.0
 */
export * as PipelineError from "./PipelineError.js"

/**
 * A turn asked for over HTTP: the provider and its request, checked, then started.
 *
 * @since 0.3.0
 */
export * as TurnRequest from "./TurnRequest.js"

/**
 * Which turns a pipeline takes on: its limits (`maxTurns`, `maxLagMs`), and the
 * refusal of a turn past one (`AtCapacity`).
 *
 * @since 0.3.0
 */
export * as TurnAdmission from "./TurnAdmission.js"

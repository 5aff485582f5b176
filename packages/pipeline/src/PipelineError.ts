/**
 * The failures a turn's pipeline can end with, as one union, and the one place they
 * are classified (by `_tag`, with `Match.tags`): the pipeline ends the turn with the
 * classification's error code, and an application (the CLI) turns it into its own
 * failure, from the same rule.
 *
 * @since 0.3.0
 */
import type { AccumulatorError } from "@sluice/accumulator"
import type { Sse } from "@sluice/core"
import type { WireDecodeError } from "@sluice/providers"
import type { RedisError } from "@sluice/redis"
import type { PublishError } from "@sluice/turns"
import type { UpsertErrors } from "@sluice/upserts"
import * as Match from "effect/Match"
import * as Predicate from "effect/Predicate"

/**
 * The failures a run passes on, after ending the turn, besides the source's own and
 * Redis's: an event the fold refuses, the upsert stage's, and the publisher's.
 *
 * @since 0.3.0
 * @category models
 */
export type PipelineError =
  | AccumulatorError.AccumulatorError
  | UpsertErrors.UnexpectedEvent
  | UpsertErrors.InvalidUpsertOptions
  | PublishError.PublishError
  | PublishError.InvalidPublisherOptions

/**
 * Every failure a turn's pipeline can end with: a source's (bytes that are not the
 * wire format, a broken SSE body), the pipeline's own (`PipelineError`), and Redis lost
 * past the retries.
 *
 * @since 0.3.0
 * @category models
 */
export type PipelineFailure =
  | WireDecodeError.WireDecodeError
  | Sse.SseError
  | PipelineError
  | RedisError.RedisError

/**
 * What a failure means for the turn it ended:
 *
 * - `InvalidInput`: the input was not the wire format (`WireDecodeError`, `SseError`);
 * - `InvalidEventOrder`: events out of order (`AccumulatorError`, `UnexpectedEvent`);
 * - `InfrastructureLost`: Redis was lost past the retries (`PublishError`, `RedisError`);
 * - `Internal`: anything else (bad options, a failure the pipeline does not know).
 *
 * @since 0.3.0
 * @category models
 */
export type Kind = "InvalidInput" | "InvalidEventOrder" | "InfrastructureLost" | "Internal"

/** A failure with a `_tag` the classification may not know. */
interface Unknown {
  readonly _tag?: unknown
}

const byTag = Match.type<PipelineFailure | Unknown>().pipe(
  Match.tags({
    WireDecodeError: (): Kind => "InvalidInput",
    SseError: (): Kind => "InvalidInput",
    AccumulatorError: (): Kind => "InvalidEventOrder",
    UnexpectedEvent: (): Kind => "InvalidEventOrder",
    PublishError: (): Kind => "InfrastructureLost",
    RedisError: (): Kind => "InfrastructureLost",
    InvalidUpsertOptions: (): Kind => "Internal",
    InvalidPublisherOptions: (): Kind => "Internal"
  }),
  Match.orElse((): Kind => "Internal")
)

/**
 * Classifies a failure by its `_tag` (see `Kind`); a value without one is `Internal`.
 *
 * @since 0.3.0
 * @category classifying
 */
export const classify = (failure: unknown): Kind => Predicate.isObject(failure) ? byTag(failure) : "Internal"

const codes: Record<Kind, string> = {
  InvalidInput: "invalid_input",
  InvalidEventOrder: "invalid_event_order",
  InfrastructureLost: "pipeline_error",
  Internal: "pipeline_error"
}

/**
 * The error code a turn ended by a failure of this kind carries (`response_error`,
 * `turn_error`): `invalid_input`, `invalid_event_order`, else `pipeline_error`.
 *
 * @since 0.3.0
 * @category classifying
 */
export const errorCode = (kind: Kind): string => codes[kind]

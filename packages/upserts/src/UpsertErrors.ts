/**
 * The typed errors of the upsert stage and its facade. Each names what was wrong.
 *
 * @since 0.1.0
 */
import { EventOrder } from "@sluice/core"
import * as Schema from "effect/Schema"

/**
 * One problem with the options: where (`batchGradient[2]`) and what.
 *
 * @since 0.1.0
 * @category models
 */
export const OptionIssue = Schema.Struct({
  path: Schema.String,
  message: Schema.String
}).annotate({ identifier: "OptionIssue" })

/**
 * @since 0.1.0
 * @category models
 */
export type OptionIssue = typeof OptionIssue.Type

/**
 * The options given to the stage or the facade are not valid: an empty gradient, a
 * step that is not a positive integer, a negative timeout, a bad id, a missing
 * callback. `issues` lists every problem; `message` joins them.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidUpsertOptions extends Schema.TaggedError<InvalidUpsertOptions>()("InvalidUpsertOptions", {
  issues: Schema.Array(OptionIssue),
  message: Schema.String
}) {}

/**
 * Why an event cannot be applied to the turn as it stands: the rule of the protocol's
 * order rules (core's `EventOrder.Rule`, the rules the accumulator applies too) that it
 * breaks.
 *
 * - `NotStarted`: an item or turn-end event before `response_start`.
 * - `AlreadyStarted`: a second `response_start`.
 * - `TurnEnded`: any event after `response_done`.
 * - `UnknownItem`: an `item_delta`, `item_error` or `item_cancelled` for an item that
 *   never started.
 * - `DuplicateItem`: an `item_start` for an item that already started.
 * - `ItemEnded`: an `item_delta`, `item_done`, `item_error` or `item_cancelled` for an
 *   item that already ended.
 *
 * @since 0.1.0
 * @category models
 */
export const SequenceViolation = EventOrder.Rule

/**
 * @since 0.1.0
 * @category models
 */
export type SequenceViolation = typeof SequenceViolation.Type

/**
 * An event arrived that the turn's state does not allow. Names the event type, the
 * item when there is one, and the violation.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnexpectedEvent extends Schema.TaggedError<UnexpectedEvent>()("UnexpectedEvent", {
  eventType: Schema.String,
  itemId: Schema.optionalKey(Schema.String),
  reason: SequenceViolation,
  message: Schema.String
}) {}

/**
 * The facade's `onEmit` callback failed on every attempt. `attempts` counts them all
 * (the first try and each retry); `cause` is the last failure.
 *
 * @since 0.1.0
 * @category errors
 */
export class EmitFailed extends Schema.TaggedError<EmitFailed>()("EmitFailed", {
  attempts: Schema.Int,
  payloadType: Schema.String,
  cause: Schema.Unknown,
  message: Schema.String
}) {}

/**
 * The facade was used after `destroy()`.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProcessorDestroyed extends Schema.TaggedError<ProcessorDestroyed>()("ProcessorDestroyed", {
  operation: Schema.String,
  message: Schema.String
}) {}

/**
 * The accumulator met an event that does not fit the turn so far.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * Why an event was refused, by the protocol's order rules (core's `EventOrder`): an
 * item or turn-end event before `response_start` (`NotStarted`), a second
 * `response_start` (`AlreadyStarted`), a delta, error or cancellation for an item that
 * never started (`UnknownItem`), an item started twice (`DuplicateItem`), an item
 * finished twice or changed after it finished (`ItemAlreadyDone`), or any event after
 * `response_done` (`EventAfterResponseDone`).
 *
 * @since 0.1.0
 * @category errors
 */
export class AccumulatorError extends Schema.TaggedError<AccumulatorError>()("AccumulatorError", {
  reason: Schema.Literals([
    "NotStarted",
    "AlreadyStarted",
    "UnknownItem",
    "DuplicateItem",
    "ItemAlreadyDone",
    "EventAfterResponseDone"
  ]),
  eventId: Schema.String,
  eventType: Schema.String,
  itemId: Schema.optionalKey(Schema.String),
  message: Schema.String
}) {}
